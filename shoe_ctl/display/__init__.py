"""The dealer alert display: a small web page served by the service, fed by the controller.

Public API (see docs/display.md)::

    from shoe_ctl.display import start_display
    sink = start_display("127.0.0.1", 8080, controller.post, token=None)  # serving on return
    controller.add_sink(sink)      # sink.handle(command) never blocks
    ...
    sink.close()
"""

from __future__ import annotations

from shoe_ctl.display.model import DisplayModel
from shoe_ctl.display.server import DisplayError, DisplaySink, parse_display, start_display
from shoe_ctl.embargo import public_state

__all__ = ["DisplayError", "DisplayModel", "DisplaySink", "parse_display", "public_state", "start_display"]

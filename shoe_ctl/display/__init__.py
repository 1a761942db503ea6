"""The dealer alert display: a small web page served by the service, fed by the controller.

Public API (see docs/display.md)::

    from shoe_ctl.display import start_display
    sink = start_display("127.0.0.1", 8080, controller.post, token=None)  # serving on return
    controller.add_sink(sink)      # sink.handle(command) never blocks
    ...
    sink.close()

The aiohttp server is imported only when the display is started, so ``--display off`` costs no
memory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from shoe_ctl.display.model import DisplayModel
from shoe_ctl.embargo import public_state

if TYPE_CHECKING:
    from shoe_ctl.display.server import DisplayError, DisplaySink, parse_display, start_display

__all__ = ["DisplayError", "DisplayModel", "DisplaySink", "parse_display", "public_state", "start_display"]


def __getattr__(name: str) -> Any:
    if name in ("DisplayError", "DisplaySink", "parse_display", "start_display"):
        from shoe_ctl.display import server

        return getattr(server, name)
    raise AttributeError(name)

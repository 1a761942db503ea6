"""The dealer alert display: a small web page served by the service, fed by the controller.

Public API (see docs/display.md)::

    from shoe_ctl.display import start_display
    sink = start_display("127.0.0.1", 8080, controller.post, token=None)  # serving on return
    controller.add_sink(sink)      # sink.handle(command) never blocks
    ...
    sink.close()

The names load on first use (PEP 562): importing :mod:`shoe_ctl.display.address` alone (what the
command line reads before the service is ready) does not load the web server's library.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from shoe_ctl.display.address import DisplayError, parse_display
    from shoe_ctl.display.model import DisplayModel
    from shoe_ctl.display.server import DisplaySink, start_display
    from shoe_ctl.embargo import public_state

__all__ = ["DisplayError", "DisplayModel", "DisplaySink", "parse_display", "public_state", "start_display"]

_WHERE = {"DisplayError": "shoe_ctl.display.address", "parse_display": "shoe_ctl.display.address",
          "DisplayModel": "shoe_ctl.display.model", "DisplaySink": "shoe_ctl.display.server",
          "start_display": "shoe_ctl.display.server", "public_state": "shoe_ctl.embargo"}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(where), name)

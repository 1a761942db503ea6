"""pyserial URL handlers of the simulation tools (``serial.protocol_handler_packages``).

``vshoe://NAME?seed=N&faults=SPEC``: the virtual shoe (:mod:`hil.urlhandler.protocol_vshoe`).
Listed by :func:`shoe_ctl.shoes.register_url_handlers`; docs/service.md.
"""

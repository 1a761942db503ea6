"""The shoe's own firmware: the shoe side of docs/protocol.md on off-the-shelf parts.

A package that runs unchanged under CPython (the bridge on the Pi, the virtual shoe, the tests)
and under CircuitPython on an RP2040 board (copied to the board as ``shoe_fw/``): relative
imports only, no threads, no dataclasses, no ``typing`` at run time, fixed-size buffers. The
hardware is behind small seams: the reader (:mod:`.reader`), the card-out beam, the byte port
and the non-volatile store. What a maker builds and flashes: docs/build-a-shoe.md.
"""

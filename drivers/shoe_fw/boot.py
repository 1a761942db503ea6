"""CIRCUITPY/boot.py: turn on the USB CDC data port the shoe speaks on (the console stays on
the first port). docs/build-a-shoe.md, "Flashing the RP2040"."""

import usb_cdc

usb_cdc.enable(console=True, data=True)

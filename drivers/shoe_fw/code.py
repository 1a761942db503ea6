"""CIRCUITPY/code.py: the shoe's firmware on an RP2040 board (copy ``shoe_fw/`` beside it).

docs/build-a-shoe.md, "Flashing the RP2040".
"""

import shoe_fw.rp2040

shoe_fw.rp2040.main()

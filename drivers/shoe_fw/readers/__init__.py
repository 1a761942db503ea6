"""Reader modules: one module per RFID reader family, each implementing the reader seam of
:mod:`shoe_fw.reader` (``name``, ``start()``, ``scan()``, ``check()``, ``reset()``).

- :mod:`.pn532`: NXP PN532 over UART (HSU) through the ``adafruit_pn532`` driver (ISO/IEC
  14443 A tags); runs on the Pi bridge and on the RP2040 board.
- :mod:`.pepper_c1`: Eccel Pepper C1 over USB serial through the ``pepper_c1`` driver (ISO 15693
  and ISO/IEC 14443 tags); runs on the Pi bridge.
- :mod:`.pins`: the reset line's pin seam (a ``digitalio.DigitalInOut``, or gpiozero on the Pi).

Which parts to buy and how to wire them: docs/build-a-shoe.md.
"""

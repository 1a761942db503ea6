"""A virtual Eccel Pepper C1 reader on a pty, at the level of its serial frames (the framing
Eccel's ``pepper_c1`` driver writes and parses), with faults (:meth:`VirtualPepper.fault`), for
the second reader module's tests. The frames, the commands modelled and the faults:
docs/build-a-shoe.md, "Testing without hardware"."""

from __future__ import annotations

import binascii
from collections import deque
from pathlib import Path

from hil.pty_device import PtyDevice

STX = 0xF5
ACK, ERROR = 0x00, 0xFF
GET_TAG_COUNT, GET_UID, REBOOT, GET_VERSION = 0x02, 0x03, 0x0A, 0x0B
VERSION = b"Pepper C1 virtual 1.0"
TYPE_ICODE_SLIX, TYPE_MIFARE_CLASSIC, TYPE_ULTRALIGHT = 0x24, 0x03, 0x02
FAULTS = ("no-answer", "bad-crc", "stale", "hang")


def frame(payload: bytes) -> bytes:
    """``payload`` in a Pepper frame."""
    length = len(payload) + 2
    lo, hi = length & 0xFF, length >> 8
    crc = binascii.crc_hqx(payload, 0xFFFF)
    return bytes([STX, lo, hi, lo ^ 0xFF, hi ^ 0xFF]) + payload + bytes([crc & 0xFF, crc >> 8])


def tag_type(uid: bytes) -> int:
    """The type byte for a UID: 8 bytes ICODE SLIX, 4 MIFARE Classic, else Ultralight."""
    return {8: TYPE_ICODE_SLIX, 4: TYPE_MIFARE_CLASSIC}.get(len(uid), TYPE_ULTRALIGHT)


class VirtualPepper:
    """The reader: bytes in, bytes out. :attr:`field` holds the UIDs (bytes) in the field."""

    def __init__(self) -> None:
        self.field: list[bytes] = []
        self._buf = bytearray()
        self._faults: deque[str] = deque(maxlen=16)
        self.hung = False
        self._last = b""
        self.commands = 0
        self.bad_frames = 0
        self.reboots = 0

    def fault(self, kind: str) -> None:
        """Inject a fault (one of :data:`FAULTS`).

        :raises ValueError: an unknown fault.
        """
        if kind not in FAULTS:
            raise ValueError(f"unknown Pepper C1 fault {kind!r}; one of {', '.join(FAULTS)}")
        if kind == "hang":
            self.hung = True
        else:
            self._faults.append(kind)

    def power_cycle(self) -> None:
        """Unplug and plug in again: a fresh reader."""
        self.hung = False
        self._buf.clear()
        self.reboots += 1

    def poll(self, now: float) -> bytes:
        return b""

    def receive(self, data: bytes, now: float = 0.0) -> bytes:
        """Take the host's bytes; return the answers."""
        if self.hung:
            return b""
        self._buf += data
        out = bytearray()
        while True:
            at = self._buf.find(STX)
            if at < 0:
                self._buf.clear()
                break
            del self._buf[:at]
            if len(self._buf) < 5:
                break
            lo, hi, nlo, nhi = self._buf[1:5]
            if lo ^ 0xFF != nlo or hi ^ 0xFF != nhi:
                self.bad_frames += 1
                del self._buf[:1]
                continue
            length = lo | hi << 8
            if len(self._buf) < 5 + length:
                break
            body = bytes(self._buf[5:5 + length])
            del self._buf[:5 + length]
            payload, crc = body[:-2], body[-2] | body[-1] << 8
            if length < 3 or binascii.crc_hqx(payload, 0xFFFF) != crc:
                self.bad_frames += 1
                continue
            out += self._answer(payload)
        return bytes(out)

    def _answer(self, payload: bytes) -> bytes:
        self.commands += 1
        fault = self._faults.popleft() if self._faults else None
        if fault == "no-answer":
            return b""
        if fault == "stale" and self._last:
            return self._last
        cmd, data = payload[0], payload[1:]
        if cmd == GET_VERSION:
            answer = frame(bytes([ACK, cmd]) + VERSION)
        elif cmd == GET_TAG_COUNT:
            answer = frame(bytes([ACK, cmd, len(self.field)]))
        elif cmd == GET_UID and data and data[0] < len(self.field):
            uid = self.field[data[0]]
            answer = frame(bytes([ACK, cmd, tag_type(uid), 0x00]) + uid)
        elif cmd == REBOOT:
            self.reboots += 1
            answer = frame(bytes([ACK, cmd]))
        else:
            answer = frame(bytes([ERROR, cmd, 0x01, 0x00]))
        if fault == "bad-crc":
            answer = answer[:-1] + bytes([answer[-1] ^ 0xFF])
        self._last = answer
        return answer


class VirtualPepperReader:
    """A :class:`VirtualPepper` on a pty: :attr:`url` for the reader module, :meth:`place`,
    :meth:`fault`, :meth:`power_cycle` under the line's lock."""

    def __init__(self, *, link_path: str | Path | None = None) -> None:
        self.device = VirtualPepper()
        self.line = PtyDevice(self.device, name="pepper", link_path=link_path)

    @property
    def url(self) -> str:
        return self.line.url

    def __enter__(self) -> VirtualPepperReader:
        self.line.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.line.close()

    def place(self, *uids: bytes) -> None:
        with self.line.lock:
            self.device.field = list(uids)

    def fault(self, kind: str) -> None:
        with self.line.lock:
            self.device.fault(kind)

    def power_cycle(self) -> None:
        with self.line.lock:
            self.device.power_cycle()

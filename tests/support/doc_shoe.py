"""A second shoe, written from the tables of docs/protocol.md alone (sections 1-5, 11, 12).

It shares no code with the reference shoe (hil/shoe_device.py) nor with the host's codec
(drivers/protocol/): its frames are built and checked here with ``struct``, ``binascii.crc32``
and the ``cobs`` package, as a firmware writer would from the document. It speaks on a pty
behind a stable symlink (re-pointed on a replug, like udev's by-id link), keeps its unacked
buffer across a power cycle (capability ``keeps-buffer``, no kept counters), and has its own
timers: HEARTBEAT every 0.4 s, resend after 0.3 s without progress, no-host after 3 s. The
conformance kit runs against it in tests/contract/test_conformance_kit.py.
"""

from __future__ import annotations

import binascii
import os
import random
import struct
import tempfile
import threading
import time
import tty
from collections import OrderedDict

from cobs import cobs

# message types (section 4)
HELLO, HEARTBEAT, CARD, FAULT, BUTTON = 0x01, 0x02, 0x10, 0x11, 0x12
HOST_HELLO, ACK, LED, RESET_COUNTER = 0x81, 0x82, 0x83, 0x84


def frame(mtype: int, seq: int, payload: bytes) -> bytes:
    """0x00 COBS(type:u8 seq:u32 payload crc:u32) 0x00, CRC-32/ISO-HDLC big-endian (section 2)."""
    body = struct.pack(">BI", mtype, seq) + payload
    body += struct.pack(">I", binascii.crc32(body) & 0xFFFFFFFF)
    return b"\x00" + cobs.encode(body) + b"\x00"


def parse(encoded: bytes) -> tuple[int, int, bytes] | None:
    """(type, seq, payload) of one frame between delimiters, or None when the frame must be
    dropped by a frame row of section 11 (F-LONG, F-COBS, F-SHORT, F-CRC)."""
    if len(encoded) > 255:
        return None
    try:
        body = cobs.decode(encoded)
    except cobs.DecodeError:
        return None
    if len(body) < 9 or len(body) > 254:
        return None
    if struct.unpack(">I", body[-4:])[0] != binascii.crc32(body[:-4]) & 0xFFFFFFFF:
        return None
    mtype, seq = struct.unpack(">BI", body[:5])
    return mtype, seq, body[5:-4]


class DocShoe:
    """The shoe: ``url`` (the symlink), ``pull(card)``, ``power_cycle()``, ``unplug()``,
    ``replug()``, ``close()``."""

    def __init__(self, serial_no: str = "DOC-7", cards: list[int] | None = None) -> None:
        self.serial_no = serial_no.encode()
        self.cards = list(cards if cards is not None else range(52))
        random.Random(7).shuffle(self.cards)
        self.dir = tempfile.mkdtemp(prefix="doc-shoe-")
        self.url = os.path.join(self.dir, "shoe")
        self.lock = threading.RLock()
        self.next_seq = 1          # non-volatile (section 3)
        self.held: OrderedDict[int, bytes] = OrderedDict()  # kept across power cycles (keeps-buffer)
        self.boot_id = 0
        self.master = -1
        self.stopping = False
        self.rx_bad = 0
        self._power_up()
        self.replug()
        self.thread = threading.Thread(target=self._loop, name="doc-shoe", daemon=True)
        self.thread.start()

    # ---------------------------------------------------------------- power and line

    def _power_up(self) -> None:
        now = time.monotonic()
        self.boot_id = random.randrange(1, 1 << 32)
        self.dispense = 0
        self.epoch = 0
        self.token = 0
        self.want = next(iter(self.held), self.next_seq)
        self.progress_at = now
        self.last_request: tuple[int, float] = (0, 0.0)
        self.host_at = now
        self.next_beat = now
        self.rx = b""

    def replug(self) -> None:
        """A new line; the symlink points at it; an unasked HELLO."""
        with self.lock:
            master, slave = os.openpty()
            tty.setraw(slave)
            path = os.ttyname(slave)
            self.master, self._slave = master, slave
            tmp = self.url + ".new"
            if os.path.lexists(tmp):
                os.unlink(tmp)
            os.symlink(path, tmp)
            os.replace(tmp, self.url)
            self.host_at = time.monotonic()
            self._hello()

    def unplug(self) -> None:
        """The cable is pulled: the host reads EIO."""
        with self.lock:
            if self.master >= 0:
                os.close(self.master)
                os.close(self._slave)
                self.master = -1

    def power_cycle(self) -> None:
        """Power lost and back: a new boot id, counter and epoch 0, buffer kept, HELLO unasked."""
        with self.lock:
            self.unplug()
            self._power_up()
        self.replug()

    def close(self) -> None:
        """Stop the thread and unplug."""
        self.stopping = True
        self.thread.join(2.0)
        self.unplug()

    # ---------------------------------------------------------------- the dealer

    def pull(self) -> int:
        """One card leaves: a CARD event (RFID). Returns its card code."""
        with self.lock:
            card = self.cards.pop() if self.cards else 0
            self.dispense = min(self.dispense + 1, 0xFFFF)
            self._event(CARD, struct.pack(">BBHH", card, 1, self.dispense, self.epoch))
            return card

    # ---------------------------------------------------------------- protocol

    def _tx(self, data: bytes) -> None:
        if self.master >= 0:
            try:
                os.write(self.master, data)
            except OSError:
                pass

    def _event(self, mtype: int, payload: bytes) -> None:
        seq = self.next_seq
        self.next_seq += 1
        data = frame(mtype, seq, payload)
        if not self.held:
            self.progress_at = time.monotonic()
        self.held[seq] = data
        self._tx(data)

    def _hello(self, version: int = 1) -> None:
        first = next(iter(self.held), self.next_seq)
        caps = bytes([0x01, 4]) + struct.pack(">I", 1 << 2)  # keeps-buffer, no kept counters
        payload = (struct.pack(">BBBIIHBB", version, 1, 1, self.boot_id, first, self.epoch, self.token, 1)
                   + bytes([len(b"doc-0.1")]) + b"doc-0.1" + bytes([len(self.serial_no)]) + self.serial_no + caps)
        self._tx(frame(HELLO, self.next_seq, payload))

    def _beat(self) -> None:
        self._tx(frame(HEARTBEAT, self.next_seq, struct.pack(">HHBBH", self.dispense, self.epoch, self.token, 0,
                                                             min(len(self.held), 0xFFFF))))

    def _resend(self, start: int, limit: int) -> None:
        for seq, data in list(self.held.items()):
            if seq >= start and limit > 0:
                self._tx(data)
                limit -= 1
        self.progress_at = time.monotonic()

    def _on_frame(self, mtype: int, payload: bytes, now: float) -> None:
        """Act on one host frame, after the checks of section 11 (shoe rows): any failure drops it."""
        if mtype == HOST_HELLO and len(payload) == 2:
            lo, hi = payload
            if not 1 <= lo <= hi:
                return self._bad()
            self.host_at = now
            common = lo <= 1 <= hi
            self._hello(1 if common else 0)
            if common:
                self.want = next(iter(self.held), self.next_seq)
                self._resend(self.want, 512)
        elif mtype == ACK and len(payload) == 9:
            acked, want, flags = struct.unpack(">IIB", payload)
            if want < 1 or acked >= want or flags > 1:
                return self._bad()
            self.host_at = now
            if acked >= self.next_seq or want > self.next_seq:
                return  # acks what was never sent (A-BEYOND): ignored
            for seq in [s for s in self.held if s <= acked]:
                del self.held[seq]
            if want > self.want:
                self.want = want
                self.progress_at = now
            if flags and want < self.next_seq:
                if self.last_request[0] != want or now - self.last_request[1] >= 0.02:
                    self.last_request = (want, now)
                    self._resend(want, 16)
        elif mtype == LED and len(payload) == 8:
            token, signal, leds, mode = payload[:4]
            if token == 0 or signal > 11 or leds & 0xE0 or mode > 2:
                return self._bad()
            self.host_at = now
            self.token = token
            self._beat()
        elif mtype == RESET_COUNTER and len(payload) == 2:
            (epoch,) = struct.unpack(">H", payload)
            if epoch == 0:
                return self._bad()
            self.host_at = now
            if epoch != self.epoch:
                self.epoch, self.dispense = epoch, 0
            self._beat()
        elif mtype in (HOST_HELLO, ACK, LED, RESET_COUNTER):
            self._bad()  # M-LENGTH
        # other types: unknown to a shoe (F-TYPE), ignored

    def _bad(self) -> None:
        self.rx_bad += 1

    def _loop(self) -> None:
        while not self.stopping:
            time.sleep(0.002)
            with self.lock:
                now = time.monotonic()
                if self.master >= 0:
                    try:
                        data = os.read(self.master, 4096) if _readable(self.master) else b""
                    except OSError:
                        data = b""
                    self.rx += data
                    *parts, self.rx = self.rx.split(b"\x00")
                    if len(self.rx) > 255:
                        self.rx = b""
                        self._bad()
                    for part in parts:
                        if part:
                            got = parse(part)
                            if got is None:
                                self._bad()
                            else:
                                self._on_frame(got[0], got[2], now)
                if now - self.host_at >= 3.0 and self.token != 0:
                    self.token = 0  # no host: the host's pattern goes, token 0 (section 4, LED)
                if now >= self.next_beat:
                    self.next_beat = now + 0.4
                    self._beat()
                if self.held and self.next_seq > self.want and now - self.progress_at >= 0.3:
                    self._resend(max(self.want, next(iter(self.held))), 32)


def _readable(fd: int) -> bool:
    import select

    return bool(select.select([fd], [], [], 0)[0])

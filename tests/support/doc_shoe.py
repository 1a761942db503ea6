"""A second shoe, written from the tables of docs/protocol.md alone (sections 1-5, 11, 12, and
for version 2 sections 14 and 15).

It shares no code with the reference shoe (hil/shoe_device.py) nor with the host's codec
(drivers/protocol/): its frames are built and checked here with ``struct``, ``binascii.crc32``,
``hmac`` and the ``cobs`` package, as a firmware writer would from the document. It speaks on a
pty behind a stable symlink (re-pointed on a replug, like udev's by-id link), keeps its unacked
buffer across a power cycle (capability ``keeps-buffer``, no kept counters), and has its own
timers: HEARTBEAT every 0.4 s, resend after 0.3 s without progress, no-host after 3 s. Given a
pairing ``secret`` it speaks version 2 only (authenticated frames, sessions, rotation by PAIR);
without one, version 1, and in its pairing mode it takes a first PAIR. The conformance kit runs
against it on both versions in tests/contract/test_conformance_kit.py.
"""

from __future__ import annotations

import binascii
import hashlib
import hmac
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
HOST_HELLO, ACK, LED, RESET_COUNTER, PAIR = 0x81, 0x82, 0x83, 0x84, 0x85


def frame(mtype: int, seq: int, payload: bytes) -> bytes:
    """0x00 COBS(type:u8 seq:u32 payload crc:u32) 0x00, CRC-32/ISO-HDLC big-endian (section 2)."""
    body = struct.pack(">BI", mtype, seq) + payload
    body += struct.pack(">I", binascii.crc32(body) & 0xFFFFFFFF)
    return b"\x00" + cobs.encode(body) + b"\x00"


def _body(encoded: bytes) -> bytes | None:
    """The body of one frame between delimiters without its CRC, or None when the frame must be
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
    return body[:-4]


def parse(encoded: bytes) -> tuple[int, int, bytes] | None:
    """(type, seq, payload) of one version-1 frame, or None (dropped: see :func:`_body`)."""
    body = _body(encoded)
    if body is None:
        return None
    mtype, seq = struct.unpack(">BI", body[:5])
    return mtype, seq, body[5:]


def hmac256(key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, hashlib.sha256).digest()


def sealed(mtype: int, seq: int, payload: bytes, key: bytes, ctr: int) -> bytes:
    """A version-2 frame (section 14, Frame): ``type seq payload ctr:u32 mac:8 crc:u32``, the
    MAC the first 8 bytes of HMAC-SHA256(key, type .. ctr), the CRC over everything before it."""
    head = struct.pack(">BI", mtype, seq) + payload + struct.pack(">I", ctr)
    body = head + hmac256(key, head)[:8]
    return b"\x00" + cobs.encode(body + struct.pack(">I", binascii.crc32(body) & 0xFFFFFFFF)) + b"\x00"


def unsealed(encoded: bytes) -> tuple[int, bytes, int, bytes, bytes] | None:
    """(type, payload with its challenge fields, ctr, mac, the bytes the MAC covers) of one
    version-2 frame, or None (dropped by a frame row, or too short to hold ctr and mac)."""
    body = _body(encoded)
    if body is None or len(body) < 5 + 12:
        return None
    head, mac = body[:-8], body[-8:]
    (ctr,) = struct.unpack(">I", head[-4:])
    return head[0], head[5:-4], ctr, mac, head


def keys(secret: bytes, challenge: bytes, nonce: bytes) -> tuple[bytes, bytes]:
    """(K_hs, K_sh) of a session (section 14, Keys)."""
    base = hmac256(secret, b"shoe-ctl/2 session" + challenge + nonce)
    return hmac256(base, b"host->shoe"), hmac256(base, b"shoe->host")


class DocShoe:
    """The shoe: ``url`` (the symlink), ``pull(card)``, ``power_cycle()``, ``unplug()``,
    ``replug()``, ``close()``."""

    def __init__(self, serial_no: str = "DOC-7", cards: list[int] | None = None, *, secret: bytes | None = None,
                 pairing: bool = False) -> None:
        self.secret = secret       # non-volatile; None: version 1
        self.pairing = pairing     # the physical pairing mode: a first PAIR is taken
        self.session: tuple[bytes, bytes] | None = None  # (K_hs, K_sh)
        self.tx_ctr = self.rx_ctr = 0
        self.serial_no = serial_no.encode()
        self.cards = list(cards if cards is not None else range(52))
        random.Random(7).shuffle(self.cards)
        self.dir = tempfile.mkdtemp(prefix="doc-shoe-")
        self.url = os.path.join(self.dir, "shoe")
        self.lock = threading.RLock()
        self.next_seq = 1          # non-volatile (section 3)
        self.held: OrderedDict[int, tuple[int, bytes]] = OrderedDict()  # kept across power cycles (keeps-buffer)
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
        self.session = None  # a session lives in RAM only

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

    def _send(self, mtype: int, seq: int, payload: bytes) -> None:
        """One message: version 1 unpaired; paired, under ``K_sh`` with the next counter in a
        session, else under the hello key with counter 0 (section 14, Handshake)."""
        if self.secret is None:
            self._tx(frame(mtype, seq, payload))
        elif self.session is not None:
            self.tx_ctr += 1
            self._tx(sealed(mtype, seq, payload, self.session[1], self.tx_ctr))
        else:
            self._tx(sealed(mtype, seq, payload, hmac256(self.secret, b"shoe-ctl/2 hello"), 0))

    def _event(self, mtype: int, payload: bytes) -> None:
        seq = self.next_seq
        self.next_seq += 1
        if not self.held:
            self.progress_at = time.monotonic()
        self.held[seq] = (mtype, payload)
        self._send(mtype, seq, payload)

    def _hello(self, version: int | None = None, challenge: bytes = bytes(8), nonce: bytes | None = None) -> None:
        """HELLO: version 1..1 unpaired, 2..2 paired (section 13); paired, the challenge it
        answers (all zero unasked) and a nonce follow the payload (section 14)."""
        low = 1 if self.secret is None else 2
        version = low if version is None else version
        first = next(iter(self.held), self.next_seq)
        caps = bytes([0x01, 4]) + struct.pack(">I", 1 << 2)  # keeps-buffer, no kept counters
        payload = (struct.pack(">BBBIIHBB", version, low, low, self.boot_id, first, self.epoch, self.token, 1)
                   + bytes([len(b"doc-0.1")]) + b"doc-0.1" + bytes([len(self.serial_no)]) + self.serial_no + caps)
        if self.secret is not None:
            payload += challenge + (nonce if nonce is not None else os.urandom(8))
        self._send(HELLO, self.next_seq, payload)

    def _beat(self) -> None:
        self._send(HEARTBEAT, self.next_seq, struct.pack(">HHBBH", self.dispense, self.epoch, self.token, 0,
                                                         min(len(self.held), 0xFFFF)))

    def _resend(self, start: int, limit: int) -> None:
        for seq, (mtype, payload) in list(self.held.items()):
            if seq >= start and limit > 0:
                self._send(mtype, seq, payload)
                limit -= 1
        self.progress_at = time.monotonic()

    def _on_sealed(self, encoded: bytes, now: float) -> None:
        """A frame to a paired shoe (section 14, What the shoe refuses): HOST_HELLO under the
        hello key, anything else under ``K_hs`` with a counter above the last; else dropped."""
        assert self.secret is not None
        got = unsealed(encoded)
        if got is None:
            return self._bad()
        mtype, payload, ctr, mac, head = got
        if mtype == HOST_HELLO:
            if not hmac.compare_digest(mac, hmac256(hmac256(self.secret, b"shoe-ctl/2 hello"), head)[:8]):
                return self._bad()
            if len(payload) != 2 + 8:
                return self._bad()  # M-LENGTH
            return self._host_hello(payload[:2], payload[2:], now)
        if self.session is None or ctr <= self.rx_ctr:
            return self._bad()
        if not hmac.compare_digest(mac, hmac256(self.session[0], head)[:8]):
            return self._bad()
        self.rx_ctr = ctr
        if mtype == PAIR and len(payload) == 32:
            pad = hmac256(self.session[0], b"shoe-ctl/2 pair" + struct.pack(">I", ctr))
            self.secret = bytes(a ^ b for a, b in zip(payload, pad, strict=True))
            self.session = None  # the session ends; HELLO unasked under the new secret
            self._hello()
            return None
        return self._on_frame(mtype, payload, now)

    def _first_pair(self, encoded: bytes) -> bool:
        """In pairing mode, an unpaired shoe takes PAIR in clear, sealed under the new secret's
        own hello key with counter 0 (section 15); True when it did."""
        got = unsealed(encoded)
        if got is None or got[0] != PAIR or len(got[1]) != 32 or got[2] != 0:
            return False
        secret = got[1]
        if not hmac.compare_digest(got[3], hmac256(hmac256(secret, b"shoe-ctl/2 hello"), got[4])[:8]):
            return False
        self.secret, self.pairing, self.session = secret, False, None
        self._hello()
        return True

    def _host_hello(self, payload: bytes, challenge: bytes | None, now: float) -> None:
        """Every HOST_HELLO is answered with HELLO; with a common version the unacked events
        are sent again, oldest first (section 4). Paired: a new session from its challenge and
        a fresh nonce, the HELLO the session's first frame (section 14, Handshake)."""
        lo, hi = payload
        if not 1 <= lo <= hi:
            return self._bad()
        self.host_at = now
        mine = 1 if self.secret is None else 2
        common = lo <= mine <= hi
        if challenge is None or self.secret is None:
            self._hello(mine if common else 0)
        elif common:
            nonce = os.urandom(8)
            self.session = keys(self.secret, challenge, nonce)
            self.tx_ctr = self.rx_ctr = 0
            self._hello(mine, challenge, nonce)
        else:
            self._hello(0, challenge)
        if common:
            self.want = next(iter(self.held), self.next_seq)
            self._resend(self.want, 512)
        return None

    def _on_frame(self, mtype: int, payload: bytes, now: float) -> None:
        """Act on one host frame, after the checks of section 11 (shoe rows): any failure drops it."""
        if mtype == HOST_HELLO and len(payload) == 2:
            return self._host_hello(payload, None, now)
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
        elif mtype in (HOST_HELLO, ACK, LED, RESET_COUNTER, PAIR):
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
                        if not part:
                            continue
                        if self.secret is not None:
                            self._on_sealed(part, now)
                        elif self.pairing and self._first_pair(part):
                            continue
                        elif (got := parse(part)) is None:
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

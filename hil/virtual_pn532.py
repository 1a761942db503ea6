"""A virtual PN532 NFC controller speaking the chip's HSU (UART) frames (PN532 User Manual
UM0701-02), with tags, a reset line and faults, served on a pty (:func:`serve`) where the real
``adafruit_pn532`` driver talks to it. The frames, the commands modelled and the faults:
docs/build-a-shoe.md, "Testing without hardware"."""

from __future__ import annotations

import json
import random
import time
from collections import deque
from collections.abc import Iterable, Sequence
from pathlib import Path

from hil.pty_device import PtyDevice

ACK = b"\x00\x00\xff\x00\xff\x00"
NACK = b"\x00\x00\xff\xff\x00\x00"
SYNTAX_ERROR = b"\x00\x00\xff\x01\xff\x7f\x81\x00"
HOST_TFI = 0xD4
CHIP_TFI = 0xD5
FIRMWARE = bytes([0x32, 0x01, 0x06, 0x07])
"""GetFirmwareVersion's answer: IC PN532, Ver 1, Rev 6, Support ISO 18092 + ISO/IEC 14443 A and B."""

CMD_GET_FIRMWARE_VERSION = 0x02
CMD_SAM_CONFIGURATION = 0x14
CMD_RF_CONFIGURATION = 0x32
CMD_IN_LIST_PASSIVE_TARGET = 0x4A
FAULTS = ("no-ack", "bad-checksum", "hang", "stale")


def information_frame(tfi: int, payload: bytes) -> bytes:
    """A normal information frame around ``tfi`` and ``payload`` (UM0701-02 section 6.2.1.1).

    :raises ValueError: a payload that does not fit a normal frame (LEN is one byte).
    """
    body = bytes([tfi]) + payload
    if len(body) > 255:
        raise ValueError(f"a normal frame carries at most 255 bytes, not {len(body)}")
    return (b"\x00\x00\xff" + bytes([len(body), (-len(body)) & 0xFF]) + body
            + bytes([(-sum(body)) & 0xFF, 0x00]))


class Tag:
    """An ISO/IEC 14443 type A tag.

    :param uid: its UID: 4 bytes (single size, e.g. MIFARE Classic) or 7 (double size, e.g.
        NTAG21x).
    :param random_uid: a tag that answers with a new random UID (``08 xx xx xx``, ISO/IEC
        14443-3's RID) at every activation.
    :raises ValueError: a UID of another length.
    """

    def __init__(self, uid: bytes, *, random_uid: bool = False, rng: random.Random | None = None) -> None:
        if len(uid) not in (4, 7):
            raise ValueError(f"a type A UID here is 4 or 7 bytes, not {len(uid)}")
        self.uid = bytes(uid)
        self.random_uid = random_uid
        self._rng = rng or random.Random(int.from_bytes(uid, "big"))

    def activate(self) -> bytes:
        """The target data InListPassiveTarget reports for this tag after ``Tg``: SENS_RES (2),
        SEL_RES, NFCIDLength, NFCID1 (UM0701-02 section 7.3.5, 106 kbps type A)."""
        uid = self.uid
        if self.random_uid:
            uid = b"\x08" + bytes(self._rng.randrange(256) for _ in range(3))
        if len(uid) == 4:
            sens, sel = b"\x00\x04", 0x08  # MIFARE Classic 1K
        else:
            sens, sel = b"\x00\x44", 0x00  # NTAG21x / Ultralight
        return sens + bytes([sel, len(uid)]) + uid

    def __repr__(self) -> str:
        return f"Tag({self.uid.hex()}{', random' if self.random_uid else ''})"


class ResetLine:
    """The chip's reset input (RSTPDN, active low) as a ``digitalio.DigitalInOut``-shaped pin:
    ``direction`` is accepted and ignored, ``value = False`` holds the chip in reset,
    ``value = True`` after that starts it again."""

    def __init__(self, chip: VirtualPN532, lock: object | None = None) -> None:
        self._chip = chip
        self._lock = lock
        self.direction: object = None
        self._value = True

    @property
    def value(self) -> bool:
        return self._value

    @value.setter
    def value(self, level: bool) -> None:
        level = bool(level)
        lock = self._lock
        if lock is not None:
            with lock:  # type: ignore[attr-defined]
                self._set(level)
        else:
            self._set(level)

    def _set(self, level: bool) -> None:
        if level and not self._value:
            self._chip.power_on()
        elif not level:
            self._chip.hold_reset()
        self._value = level

    def switch_to_output(self, value: bool = False, **_: object) -> None:
        self.value = value


class VirtualPN532:
    """The chip: bytes in, bytes out, no I/O (the line is :class:`hil.pty_device.PtyDevice`).

    :attr:`field` is the list of :class:`Tag` in the antenna's field now (the harness or a
    :class:`DeckScript` sets it under the line's lock). Counters: :attr:`commands` (good
    command frames), :attr:`bad_frames` (frames with a wrong LCS or DCS), :attr:`resets`.
    """

    def __init__(self) -> None:
        self.field: list[Tag] = []
        self._buf = bytearray()
        self.awake = False
        self.in_reset = False
        self.sam_configured = False
        self.max_retries = 0xFF
        self._last_response = b""
        self._before_reset = b""
        self._faults: deque[str] = deque(maxlen=16)
        self.hung = False
        self._stale_armed = False
        self._stale_due = False
        self.commands = 0
        self.bad_frames = 0
        self.resets = 0
        self.listings = 0
        """InListPassiveTarget commands answered."""
        self.log: deque[int] = deque(maxlen=64)
        """The command codes of the last 64 good command frames, oldest first."""

    # ---------------------------------------------------------------- faults and power

    def fault(self, kind: str) -> None:
        """Inject a fault (one of :data:`FAULTS`).

        :raises ValueError: an unknown fault.
        """
        if kind not in FAULTS:
            raise ValueError(f"unknown PN532 fault {kind!r}; one of {', '.join(FAULTS)}")
        if kind == "hang":
            self.hung = True
        elif kind == "stale":
            self._stale_armed = True
        else:
            self._faults.append(kind)

    def hold_reset(self) -> None:
        """RSTPDN low: the chip stops and forgets its input."""
        self.in_reset = True
        self._buf.clear()

    def power_on(self) -> None:
        """RSTPDN high again: a fresh chip, asleep until the HSU wake-up, not configured."""
        self.in_reset = False
        self.resets += 1
        self.awake = False
        self.sam_configured = False
        self.max_retries = 0xFF
        self.hung = False
        self._buf.clear()
        self._before_reset = self._last_response
        if self._stale_armed and self._before_reset:
            self._stale_armed = False
            self._stale_due = True

    # ---------------------------------------------------------------- bytes

    def poll(self, now: float) -> bytes:
        """Nothing is sent late: answers leave with the command's ACK."""
        return b""

    def receive(self, data: bytes, now: float = 0.0) -> bytes:
        """Take the host's bytes; return what the chip sends (ACKs and responses)."""
        if self.in_reset or self.hung:
            return b""
        if not self.awake:
            at = data.find(0x55)
            if at < 0:
                return b""  # asleep: the UART is not listening yet
            self.awake = True
            data = data[at:]
        self._buf += data
        if len(self._buf) > 1024:  # garbage without frames: keep the tail a frame could start in
            del self._buf[:-300]
        out = bytearray()
        while True:
            frame = self._next_frame()
            if frame is None:
                break
            out += self._answer(frame)
        return bytes(out)

    def _next_frame(self) -> bytes | None:
        """The next complete frame's ``TFI + PD`` (ACK and NACK as their marker), or None."""
        buf = self._buf
        while True:
            start = buf.find(b"\x00\xff")
            if start < 0:
                # keep a trailing 00 that may start a start code
                del buf[: max(0, len(buf) - 1)]
                return None
            if len(buf) < start + 4:
                return None
            length, lcs = buf[start + 2], buf[start + 3]
            if length == 0x00 and lcs == 0xFF:
                del buf[: start + 4]
                return b"ACK"
            if length == 0xFF and lcs == 0x00:
                del buf[: start + 4]
                return b"NACK"
            if (length + lcs) & 0xFF:
                self.bad_frames += 1
                del buf[: start + 2]
                continue
            end = start + 4 + length + 1
            if len(buf) < end:
                return None
            body = bytes(buf[start + 4: start + 4 + length])
            dcs = buf[start + 4 + length]
            del buf[:end]
            if (sum(body) + dcs) & 0xFF:
                self.bad_frames += 1  # the chip ignores a frame it cannot trust; the host times out
                continue
            return body

    def _answer(self, body: bytes) -> bytes:
        if body == b"ACK":
            return b""  # the host aborts the running command; nothing is running here
        if body == b"NACK":
            return self._last_response
        if len(body) < 2 or body[0] != HOST_TFI:
            self._last_response = SYNTAX_ERROR
            return ACK + SYNTAX_ERROR
        self.commands += 1
        self.log.append(body[1])
        if self._faults and self._faults[0] == "no-ack":
            self._faults.popleft()
            return b""
        if self._stale_due:
            self._stale_due = False
            return ACK + self._before_reset
        response = self._execute(body[1], body[2:])
        if response is None:
            return ACK  # acknowledged, still waiting for a target
        if self._faults and self._faults[0] == "bad-checksum":
            self._faults.popleft()
            response = response[:-2] + bytes([(response[-2] + 1) & 0xFF]) + response[-1:]
        self._last_response = response
        return ACK + response

    def _execute(self, command: int, params: bytes) -> bytes | None:
        def ok(payload: bytes) -> bytes:
            return information_frame(CHIP_TFI, bytes([command + 1]) + payload)

        if command == CMD_GET_FIRMWARE_VERSION:
            return ok(FIRMWARE)
        if command == CMD_SAM_CONFIGURATION:
            if not params or params[0] not in (1, 2, 3, 4):
                return SYNTAX_ERROR
            self.sam_configured = params[0] == 1
            return ok(b"")
        if command == CMD_RF_CONFIGURATION:
            if len(params) >= 4 and params[0] == 0x05:
                self.max_retries = params[3]
            return ok(b"")
        if command == CMD_IN_LIST_PASSIVE_TARGET:
            if len(params) < 2 or params[0] not in (1, 2) or not self.sam_configured:
                return SYNTAX_ERROR
            if params[1] != 0x00:  # only 106 kbps type A is modelled
                return ok(b"\x00")
            self.listings += 1
            targets = self.field[: params[0]]
            if not targets and self.max_retries == 0xFF:
                return None  # the power-on default retries for ever
            payload = bytearray([len(targets)])
            for n, tag in enumerate(targets, start=1):
                payload += bytes([n]) + tag.activate()
            return ok(bytes(payload))
        return SYNTAX_ERROR


class DeckScript:
    """Which tags are in the field during each card's pass, in order.

    :param passes: one entry per pass: the tags in the field while that card crosses the mouth
        (none: an untagged card; two: a double pull).
    """

    def __init__(self, passes: Iterable[Sequence[Tag]]) -> None:
        self._passes: deque[list[Tag]] = deque(list(p) for p in passes)

    def __len__(self) -> int:
        return len(self._passes)

    def next_pass(self) -> list[Tag]:
        """The tags of the next pass (removed from the script).

        :raises IndexError: the script is used up.
        """
        return self._passes.popleft()

    @classmethod
    def from_json(cls, path: str | Path) -> DeckScript:
        """Read a script: a JSON list whose items are lists of tag UIDs in hex (``"04a1b2c3"``)
        or objects ``{"uid": "...", "random": true}``.

        :raises ValueError: not such a list; the message names the file and the item.
        """
        where = str(path)
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeError, ValueError) as exc:
            raise ValueError(f"{where}: not a deck script ({exc})") from None
        if not isinstance(data, list):
            raise ValueError(f"{where}: a deck script is a JSON list of passes")
        passes = []
        for n, item in enumerate(data):
            if not isinstance(item, list):
                raise ValueError(f"{where}: pass {n}: a list of tag UIDs")
            tags = []
            for t in item:
                spec = t if isinstance(t, dict) else {"uid": t}
                try:
                    tags.append(Tag(bytes.fromhex(spec["uid"]), random_uid=bool(spec.get("random"))))
                except (KeyError, TypeError, ValueError) as exc:
                    raise ValueError(f"{where}: pass {n}: {t!r} is not a tag ({exc})") from None
            passes.append(tags)
        return cls(passes)


class VirtualReader:
    """A virtual PN532 on a pty with its reset line: what a test or harness holds.

    ``with VirtualReader() as vr:`` opens :attr:`url` (pyserial), :attr:`chip`,
    :attr:`reset_line`; :meth:`place` and :meth:`clear` change the field under the line's lock.
    """

    def __init__(self, *, link_path: str | Path | None = None) -> None:
        self.chip = VirtualPN532()
        self.line = PtyDevice(self.chip, name="pn532", link_path=link_path)
        self.reset_line = ResetLine(self.chip, self.line.lock)

    @property
    def url(self) -> str:
        return self.line.url

    def start(self) -> VirtualReader:
        self.line.start()
        return self

    def close(self) -> None:
        self.line.close()

    def __enter__(self) -> VirtualReader:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def place(self, *tags: Tag) -> None:
        """Put ``tags`` in the field (replacing what was there)."""
        with self.line.lock:
            self.chip.field = list(tags)

    def clear(self) -> None:
        """Empty the field."""
        self.place()

    def listings(self) -> int:
        """InListPassiveTarget commands the chip answered so far."""
        with self.line.lock:
            return self.chip.listings

    def wait_listings(self, more: int, timeout_s: float = 10.0) -> bool:
        """Wait until the chip has answered ``more`` further InListPassiveTarget commands; False
        when ``timeout_s`` passed first."""
        target = self.listings() + more
        deadline = time.monotonic() + timeout_s
        while self.listings() < target:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.005)
        return True

    def pass_card(self, *tags: Tag, reads: int = 3, gap_reads: int = 2, timeout_s: float = 10.0) -> bool:
        """One card crossing the antenna: ``tags`` in the field for ``reads`` scans, then the
        field empty for ``gap_reads`` scans (paced by the host's scans, not by time). False when
        the host stopped scanning for ``timeout_s``."""
        self.place(*tags)
        ok = self.wait_listings(reads, timeout_s)
        self.clear()
        return ok and self.wait_listings(gap_reads, timeout_s)

    def fault(self, kind: str) -> None:
        """:meth:`VirtualPN532.fault` under the line's lock."""
        with self.line.lock:
            self.chip.fault(kind)


def serve(link_path: str | Path | None = None) -> VirtualReader:
    """A started :class:`VirtualReader` (the caller closes it)."""
    return VirtualReader(link_path=link_path).start()

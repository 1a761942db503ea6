"""The shoe protocol's framing: a body on the line as ``0x00 COBS(body) 0x00``, and the
stream decoder that splits the bytes at the delimiters, drops and counts bad frames and resyncs
(``docs/protocol.md`` section 2).

Part of :mod:`drivers.protocol` (its public face).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cobs import cobs

from drivers.exc import FrameError, MessageError, UnknownMessageError
from drivers.protocol.codec import MAX_BODY, decode_body, encode_body
from drivers.protocol.messages import Message

DELIMITER = b"\x00"
MAX_ENCODED = MAX_BODY + 1
"""Largest COBS-encoded frame between two delimiters, in bytes."""


def encode(msg: Message) -> bytes:
    """The frame of ``msg`` as sent on the line: ``0x00 COBS(body) 0x00``.

    :raises MessageError: see :func:`encode_body`.
    """
    return DELIMITER + bytes(cobs.encode(encode_body(msg))) + DELIMITER


def decode_frame(encoded: bytes) -> Message:
    """The message in one COBS-encoded frame (without its delimiters).

    :raises FrameError: bad COBS (``reason`` "cobs"), too long, too short or a CRC mismatch.
    :raises MessageError: see :func:`decode_body`.
    """
    if len(encoded) > MAX_ENCODED:
        raise FrameError("long", f"frame of {len(encoded)} bytes exceeds {MAX_ENCODED}")
    try:
        body = cobs.decode(encoded)
    except cobs.DecodeError as exc:
        raise FrameError("cobs", f"bad COBS encoding: {exc}") from exc
    return decode_body(body)


@dataclass
class DecoderStats:
    """What a :class:`FrameDecoder` has seen: ``frames`` valid messages, ``bad_frames`` dropped
    frames (COBS, length, CRC, message checks), ``unknown`` valid frames of unknown type (also
    dropped, counted apart so a newer shoe is recognisable), ``reasons`` bad frames by cause,
    ``last_malformed`` the error of the last frame with a valid CRC that broke v1 (reason
    ``"message"``: with CRC-32 almost surely a sender defect, not line noise)."""

    frames: int = 0
    bad_frames: int = 0
    unknown: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    last_malformed: str = ""
    rules: dict[str, int] = field(default_factory=dict)
    """Every frame dropped, by the id of the constraint table's row it broke (docs/protocol.md
    section 11): the frame rows (``F-LONG``, ``F-COBS``, ``F-SHORT``, ``F-CRC``, ``F-TYPE``) and
    the message rows of a frame with a valid CRC."""


FRAME_ROWS = {"long": "F-LONG", "cobs": "F-COBS", "short": "F-SHORT", "crc": "F-CRC"}
"""The constraint table's row of each :class:`~drivers.exc.FrameError` reason."""


class FrameDecoder:
    """Turns a byte stream into messages: splits at 0x00, decodes, drops and counts bad frames.

    Bytes after the last delimiter wait for more input; a run longer than :data:`MAX_ENCODED`
    without a delimiter is dropped (one bad frame) and decoding resyncs at the next delimiter.
    Not thread-safe: one reader feeds it.
    """

    def __init__(self) -> None:
        self._buf = b""
        self._discarding = False
        self.stats = DecoderStats()

    def reset(self) -> None:
        """Forget any partial frame (after a reconnect)."""
        self._buf = b""
        self._discarding = False

    def _decode(self, part: bytes) -> Any:
        """The message of one encoded frame (a subclass decodes authenticated frames)."""
        return decode_frame(part)

    def _bad(self, reason: str, row: str) -> None:
        stats = self.stats
        stats.bad_frames += 1
        stats.reasons[reason] = stats.reasons.get(reason, 0) + 1
        stats.rules[row] = stats.rules.get(row, 0) + 1

    def feed(self, data: bytes) -> list[Any]:
        """Decode every complete frame in ``data`` (plus what was buffered), in order: messages
        (and, from :class:`SealedDecoder`, :class:`Sealed` frames)."""
        out: list[Any] = []
        parts = (self._buf + data).split(DELIMITER)
        self._buf = parts.pop()
        for part in parts:
            if self._discarding:
                self._discarding = False
                continue
            if not part:
                continue
            try:
                out.append(self._decode(part))
            except UnknownMessageError:
                self.stats.unknown += 1
                self.stats.rules["F-TYPE"] = self.stats.rules.get("F-TYPE", 0) + 1
                continue
            except FrameError as exc:
                self._bad(exc.reason, FRAME_ROWS[exc.reason])
                continue
            except MessageError as exc:
                self._bad("message", exc.rule)
                self.stats.last_malformed = f"{exc} [{exc.rule}]"
                continue
            self.stats.frames += 1
        if len(self._buf) > MAX_ENCODED:
            self._buf = b""
            if not self._discarding:
                self._discarding = True
                self._bad("long", "F-LONG")
        return out



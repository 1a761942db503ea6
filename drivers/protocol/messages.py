"""The shoe protocol's messages: the message types, their fields and value tables, and their
translation into :mod:`shoe_ctl.events` values and the test vectors' JSON.

Part of :mod:`drivers.protocol` (its public face); the normative text is ``docs/protocol.md``
(sections 3-5 for the messages, "Authentication (version 2)" for PAIR).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from drivers.exc import MessageError
from shoe_ctl.events import CardRead, FaultKind, ForeignCard, ForeignWhat, ShoeButton, ShoeFault, ShoeInfo
from shoe_ctl.rules.cards import Card

PROTOCOL_VERSION = 1
"""The unauthenticated version (a bench's); version 2 is :data:`drivers.protocol.authentication.AUTH_VERSION`."""
SEQ_MAX = 0xFFFFFFFF
"""Largest sequence number (u32); shoe sequence numbers wrap to 1 after it."""

# message types ------------------------------------------------------------------------------
T_HELLO = 0x01
T_HEARTBEAT = 0x02
T_STUB = 0x03
"""Shoe -> host, not an event, only to a host that took ``names-foreign`` (docs/protocol.md section 16)."""
T_CARD = 0x10
T_FAULT = 0x11
T_BUTTON = 0x12
T_FOREIGN = 0x13
"""Shoe -> host, an event, only to a host that took ``names-foreign`` (docs/protocol.md section 16)."""
T_HOST_HELLO = 0x81
T_ACK = 0x82
T_LED = 0x83
T_RESET = 0x84
T_PAIR = 0x85
"""Host -> shoe, version 2: a new pairing secret (docs/protocol.md, "Pairing")."""

READERS: tuple[str, ...] = ("rfid", "optical")
"""Reader kinds by bit of the HELLO ``readers`` mask (bit 0 = rfid, bit 1 = optical)."""
READER_CODES: Mapping[str, int] = {"none": 0, "rfid": 1, "optical": 2}
READER_NAMES: Mapping[int, str] = {v: k for k, v in READER_CODES.items()}

FAULT_CODES: Mapping[FaultKind, int] = {
    FaultKind.MISREAD: 1,
    FaultKind.JAM: 2,
    FaultKind.DOUBLE_PULL: 3,
    FaultKind.COVER_OPEN: 4,
    FaultKind.READER_ERROR: 5,
}
FAULT_KINDS: Mapping[int, FaultKind] = {v: k for k, v in FAULT_CODES.items()}

LED_NAMES: tuple[str, ...] = ("green", "amber", "blue", "white", "red")
"""The shoe's LEDs by bit of the LED ``leds`` mask (bit 0 = green ... bit 4 = red)."""
LED_MODES: tuple[str, ...] = ("steady", "blink", "pulse")
LED_SIGNALS: tuple[str, ...] = (
    "", "idle", "deal", "burn", "scramble", "cut", "community", "betting", "showdown", "stop",
    "shoe-fault", "degraded",
)
"""Signal names by LED ``signal`` code (0 = none/unnamed pattern)."""

CAPS: tuple[str, ...] = ("persistent-counters", "counts-unpowered", "keeps-buffer", "names-foreign")
"""Capability flags of the HELLO ``caps`` record by bit (bit 0 = persistent-counters ...);
docs/protocol.md section 12. A receiver ignores bits it does not know (a later revision's)."""
EXT_CAPS = 0x01
"""HELLO extension record tag: ``caps:u32``."""
EXT_COUNTERS = 0x02
"""HELLO extension record tag: ``boot_count:u32 card_total:u32 dispense:u16``."""
EXT_SECURITY = range(0x40, 0x80)
"""HELLO extension tags kept for link security; none is defined: version 2 carries its challenge and
nonce as frame fields (:func:`seal_body`), and its HELLO holds the records above in its payload as
version 1 does (docs/protocol.md section 13, "Versioning"). A receiver skips these tags."""

FOREIGN_WHAT: tuple[ForeignWhat, ...] = (ForeignWhat.UNKNOWN, ForeignWhat.OTHER_DECK, ForeignWhat.RETIRED)
"""FOREIGN ``what`` codes 1, 2, 3 (docs/protocol.md section 16)."""
ACK_RESEND = 0x01
ACK_NAMES_FOREIGN = 0x02
"""ACK flag bit 1: the host takes FOREIGN events; only to a shoe whose HELLO offered ``names-foreign``."""

HB_COVER_OPEN = 0x01
HB_JAMMED = 0x02
HB_READER_ERROR = 0x04
HB_FLAGS = HB_COVER_OPEN | HB_JAMMED | HB_READER_ERROR

# --------------------------------------------------------------------------- messages


@dataclass(frozen=True, slots=True)
class Hello:
    """Shoe -> host, type 0x01: the shoe's identity and where its sequence stands.

    :param seq: the shoe's *next* sequence number (the one its next new event will take).
    :param version: the version chosen for this connection (0 = none of the host's range).
    :param version_min: lowest version the shoe speaks.
    :param version_max: highest version the shoe speaks.
    :param boot_id: random per power-up of the shoe (nonzero).
    :param first_seq: the oldest event it still holds unacked (= ``seq`` when it holds none).
    :param epoch: the dispense-counter epoch (the last RESET_COUNTER it applied; 0 after boot).
    :param led_token: the token of the LED pattern it shows (0 = none since boot).
    :param readers: reader kinds fitted, from :data:`READERS`.
    :param firmware: firmware version text (UTF-8, at most 32 bytes).
    :param serial: serial number text (UTF-8, 1..32 bytes; it identifies the shoe to the host).
    :param caps: the capability flags (names from :data:`CAPS`) of the ``caps`` record, or
        None when the HELLO has none (a shoe of the first revision: no capability).
    :param boot_count: power-ups of the shoe so far (1 at the first), from the ``counters``
        record (None without one); kept in non-volatile memory.
    :param card_total: cards the shoe's sensor has counted over its life, 0..2^32-1 (None
        without a ``counters`` record); kept in non-volatile memory across power cycles.
    :param dispense: the dispense counter now, 0..65535 (None without a ``counters`` record).
    """

    seq: int
    version: int
    version_min: int
    version_max: int
    boot_id: int
    first_seq: int
    epoch: int
    led_token: int
    readers: tuple[str, ...]
    firmware: str
    serial: str
    caps: tuple[str, ...] | None = None
    boot_count: int | None = None
    card_total: int | None = None
    dispense: int | None = None
    TYPE: ClassVar[int] = T_HELLO

    @property
    def has_counters(self) -> bool:
        """True when the HELLO carries the ``counters`` record (persistent counters)."""
        return self.boot_count is not None

    def info(self) -> ShoeInfo:
        """The :class:`~shoe_ctl.events.ShoeInfo` of this hello."""
        return ShoeInfo(self.version, self.firmware, self.serial, self.readers, self.boot_id,
                        "names-foreign" in (self.caps or ()))


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """Shoe -> host, type 0x02, sent at least once a second.

    :param seq: the shoe's next sequence number (as in HELLO).
    :param dispense: the dispense counter (cards since the last counter reset), 0..65535.
    :param epoch: the dispense-counter epoch.
    :param led_token: the token of the LED pattern shown.
    :param cover_open: the cover is open.
    :param jammed: a jam is present.
    :param reader_error: a reader is failing.
    :param unacked: events the shoe holds unacked, 0..65535.
    """

    seq: int
    dispense: int
    epoch: int
    led_token: int
    cover_open: bool = False
    jammed: bool = False
    reader_error: bool = False
    unacked: int = 0
    TYPE: ClassVar[int] = T_HEARTBEAT


@dataclass(frozen=True, slots=True)
class StubMsg:
    """Shoe -> host, type 0x03, not an event (docs/protocol.md section 16): the stub counted under
    ``epoch`` is deck ``deck`` (1..32 bytes). ``seq``: the shoe's next_seq, as in HEARTBEAT.
    Sent after each HEARTBEAT to a host that took ``names-foreign``, once the deck is known."""

    seq: int
    epoch: int
    deck: str
    TYPE: ClassVar[int] = T_STUB


@dataclass(frozen=True, slots=True)
class CardMsg:
    """Shoe -> host, type 0x10, an event: one card left the shoe.

    :param card: the card, or ``None`` when it passed the sensor unread.
    :param reader: ``"rfid"`` or ``"optical"``; ``"none"`` exactly when ``card`` is ``None``.
    :param dispense: the dispense counter after this card, 1..65535.
    :param epoch: the dispense-counter epoch the counter belongs to.
    """

    seq: int
    card: Card | None
    reader: str
    dispense: int
    epoch: int = 0
    TYPE: ClassVar[int] = T_CARD


@dataclass(frozen=True, slots=True)
class FaultMsg:
    """Shoe -> host, type 0x11, an event: a fault appeared (or cleared)."""

    seq: int
    kind: FaultKind
    cleared: bool = False
    detail: str = ""
    TYPE: ClassVar[int] = T_FAULT


@dataclass(frozen=True, slots=True)
class ForeignMsg:
    """Shoe -> host, type 0x13, an event (docs/protocol.md section 16): the card of the CARD
    0xFF before it is not one of the stub's deck. It stands in the place of that card's misread
    FAULT, and only a host whose ACKs took ``names-foreign`` receives it.

    :param what: :data:`FOREIGN_WHAT`.
    :param card: its card in its own deck (None for a tag of no deck).
    :param tag: the tag's UID, 4..10 bytes.
    :param deck: the deck it belongs to ("" for none), ``stub``: the stub's deck ("" not known).
    """

    seq: int
    what: ForeignWhat
    card: Card | None
    tag: bytes
    deck: str = ""
    stub: str = ""
    TYPE: ClassVar[int] = T_FOREIGN


@dataclass(frozen=True, slots=True)
class ButtonMsg:
    """Shoe -> host, type 0x12, an event: shoe button ``button`` (1..255) was pressed."""

    seq: int
    button: int
    TYPE: ClassVar[int] = T_BUTTON


@dataclass(frozen=True, slots=True)
class HostHello:
    """Host -> shoe, type 0x81: the host's version range; the shoe answers with HELLO.

    ``seq`` of host frames is the host's own frame counter (informative only)."""

    seq: int
    version_min: int = PROTOCOL_VERSION
    version_max: int = PROTOCOL_VERSION
    TYPE: ClassVar[int] = T_HOST_HELLO


@dataclass(frozen=True, slots=True)
class Ack:
    """Host -> shoe, type 0x82.

    :param acked: every event up to and including ``acked`` is durably recorded (0 = none); the
        shoe may forget them.
    :param want: the next sequence the host needs; it has received every event below ``want``.
    :param resend: the host saw a hole (an event after ``want`` arrived, or a heartbeat announced
        more): the shoe resends its events from ``want`` at once.
    """

    seq: int
    acked: int
    want: int
    resend: bool = False
    names_foreign: bool = False
    """Flag bit 1: the host takes FOREIGN events (section 16); sent only to a shoe that offered it."""
    TYPE: ClassVar[int] = T_ACK


@dataclass(frozen=True, slots=True)
class Led:
    """Host -> shoe, type 0x83: show this pattern on the shoe's LEDs.

    :param token: 1..255, changes with every new pattern; the shoe echoes it in HEARTBEAT.
    :param signal: the signal's name (one of :data:`LED_SIGNALS`, ``""`` for none).
    :param leds: names from :data:`LED_NAMES` that light.
    :param mode: ``"steady"``, ``"blink"`` or ``"pulse"``.
    :param on_ms: milliseconds on (or fade-in), 0..65535.
    :param off_ms: milliseconds off (or fade-out), 0..65535.
    """

    seq: int
    token: int
    signal: str
    leds: tuple[str, ...] = ()
    mode: str = "steady"
    on_ms: int = 0
    off_ms: int = 0
    TYPE: ClassVar[int] = T_LED


@dataclass(frozen=True, slots=True)
class ResetCounter:
    """Host -> shoe, type 0x84: set the dispense counter to 0 under ``epoch`` (1..65535).

    Idempotent: the shoe applies it only when ``epoch`` differs from its current epoch."""

    seq: int
    epoch: int
    TYPE: ClassVar[int] = T_RESET



@dataclass(frozen=True, slots=True)
class Pair:
    """Host -> shoe, type 0x85, version 2 only: the shoe's new pairing secret.

    :param secret: :data:`~drivers.protocol.authentication.SECRET_SIZE` bytes as sent: in clear to a shoe in pairing mode, or (a
        rotation inside a session) the new secret XOR :func:`pair_pad` of the session.
    """

    seq: int
    secret: bytes = field(repr=False)
    TYPE: ClassVar[int] = T_PAIR



Message = (Hello | Heartbeat | StubMsg | CardMsg | FaultMsg | ForeignMsg | ButtonMsg | HostHello | Ack | Led
           | ResetCounter)
EventMsg = CardMsg | FaultMsg | ForeignMsg | ButtonMsg
EVENT_TYPES: tuple[type, ...] = (CardMsg, FaultMsg, ForeignMsg, ButtonMsg)


def to_event(msg: EventMsg) -> CardRead | ShoeFault | ForeignCard | ShoeButton:
    """The :mod:`shoe_ctl.events` value of a shoe event message."""
    if isinstance(msg, CardMsg):
        return CardRead(msg.seq, msg.card, msg.reader, msg.dispense, msg.epoch)
    if isinstance(msg, FaultMsg):
        return ShoeFault(msg.seq, msg.kind, msg.cleared, msg.detail)
    if isinstance(msg, ForeignMsg):
        return ForeignCard(msg.seq, msg.what, msg.tag.hex(), msg.card, msg.deck, msg.stub)
    return ShoeButton(msg.seq, msg.button)


_OPTIONAL_FIELDS = frozenset({"caps", "boot_count", "card_total", "dispense"})


def message_to_json(msg: Message) -> dict[str, Any]:
    """A JSON-safe dict of ``msg`` (``{"type": "CARD", "seq": 7, ...}``), as the test vectors
    in ``tests/vectors/protocol_v1.json`` write them."""
    out: dict[str, Any] = {"type": TYPE_NAMES[msg.TYPE]}
    for f in fields(msg):
        value = getattr(msg, f.name)
        if value is None and f.name in _OPTIONAL_FIELDS:
            continue  # a HELLO extension record that is not there
        if f.name == "names_foreign" and not value:
            continue  # an ACK without flag bit 1, as before it was defined
        if isinstance(value, Card):
            value = str(value)
        elif isinstance(value, tuple):
            value = list(value)
        elif isinstance(value, FaultKind | ForeignWhat):
            value = str(value)
        elif isinstance(value, bytes):
            value = value.hex()
        out[f.name] = value
    return out


def message_from_json(data: Mapping[str, Any]) -> Message:
    """The message a :func:`message_to_json` dict describes.

    :raises MessageError: unknown type name or fields.
    """
    values = dict(data)
    name = values.pop("type", None)
    cls = TYPES_BY_NAME.get(str(name))
    if cls is None:
        raise MessageError(f"unknown message type name {name!r}")
    if "card" in values:
        values["card"] = None if values["card"] is None else Card.parse(values["card"])
    if "kind" in values:
        values["kind"] = FaultKind(values["kind"])
    if "what" in values:
        values["what"] = ForeignWhat(values["what"])
    if isinstance(values.get("tag"), str):
        values["tag"] = bytes.fromhex(values["tag"])
    for key in ("readers", "leds", "caps"):
        if values.get(key) is not None:
            values[key] = tuple(values[key])
    try:
        msg: Message = cls(**values)
    except TypeError as exc:
        raise MessageError(f"{name}: {exc}") from exc
    return msg


TYPES_BY_NAME: Mapping[str, Any] = {
    "HELLO": Hello, "HEARTBEAT": Heartbeat, "STUB": StubMsg, "CARD": CardMsg, "FAULT": FaultMsg, "FOREIGN": ForeignMsg, "BUTTON": ButtonMsg,
    "HOST_HELLO": HostHello, "ACK": Ack, "LED": Led, "RESET_COUNTER": ResetCounter,
}
TYPE_NAMES: Mapping[int, str] = {cls.TYPE: name for name, cls in TYPES_BY_NAME.items()}

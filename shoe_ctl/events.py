"""The messages that cross the controller's one queue, and the commands it emits.

Everything that happens enters as an *event* on one queue owned by one thread (the state
machine's): card reads and link changes from the shoe link, dealer inputs from buttons, the
display or a HIL script, and timers. The machine answers only with *commands* (LED signals,
display updates, alerts, shoe commands) that the service hands to sinks. These are plain frozen
values: no I/O, no threads, safe to journal and to compare in tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from shoe_ctl.rules.cards import Card

# --------------------------------------------------------------------------- shoe -> controller


@dataclass(frozen=True, slots=True)
class ShoeInfo:
    """What the shoe said in its hello: protocol version, firmware, serial number, reader kinds,
    and ``boot_id`` (random per power-up of the shoe; 0 when unknown)."""

    protocol: int
    firmware: str
    serial: str
    readers: tuple[str, ...]
    boot_id: int = 0


@dataclass(frozen=True, slots=True)
class CardRead:
    """One card left the shoe.

    :param seq: the shoe's message sequence number (delivered once, in order, by the link).
    :param card: the card read, or ``None`` when it passed the sensor unreadable.
    :param reader: which reader saw it (``"rfid"``, ``"optical"``, ``"none"`` when unreadable).
    :param dispense: the shoe's dispense counter after this card (1 for the first card since the
        last counter reset); a jump of more than one is a gap: cards that left unreported.
    """

    seq: int
    card: Card | None
    reader: str
    dispense: int


class FaultKind(StrEnum):
    """Faults a shoe reports (protocol v1, message FAULT)."""

    MISREAD = "misread"
    JAM = "jam"
    DOUBLE_PULL = "double-pull"
    COVER_OPEN = "cover-open"
    READER_ERROR = "reader-error"


@dataclass(frozen=True, slots=True)
class ShoeFault:
    """The shoe reported a fault. ``cleared`` is True when the shoe reports the fault gone."""

    seq: int
    kind: FaultKind
    cleared: bool = False
    detail: str = ""


@dataclass(frozen=True, slots=True)
class ShoeButton:
    """A button on the shoe was pressed (``button`` is the shoe's button number, from 1)."""

    seq: int
    button: int


class LinkStatus(StrEnum):
    """The shoe link's connection state."""

    CONNECTED = "connected"
    DISCONNECTED = "disconnected"
    DEGRADED = "degraded"


@dataclass(frozen=True, slots=True)
class LinkChanged:
    """The link to the shoe changed state; ``info`` is the shoe's hello once connected."""

    status: LinkStatus
    detail: str = ""
    info: ShoeInfo | None = None


@dataclass(frozen=True, slots=True)
class SequenceGap:
    """The shoe's sequence numbers jumped: events were lost on the shoe's side (e.g. a reboot that
    dropped its unacked buffer). ``expected`` is the next sequence the host waited for, ``got`` the
    one that arrived."""

    expected: int
    got: int


ShoeEvent = CardRead | ShoeFault | ShoeButton | LinkChanged | SequenceGap

# --------------------------------------------------------------------------- dealer -> controller


class DealerAction(StrEnum):
    """What a dealer can report. The state machine rejects an action at the wrong time with an
    alert and changes nothing."""

    NEW_HAND = "new-hand"          # seats: the seats dealt in; args: game, rules
    FOLD = "fold"                  # seat
    ALL_IN = "all-in"              # seat
    BETTING_COMPLETE = "betting-complete"
    HAND_COMPLETE = "hand-complete"
    LAST_CARD_EXPOSED = "last-card-exposed"  # seat: whose 7th-street card was dealt face up
    STUB_RELOADED = "stub-reloaded"  # the scrambled stub is back in the shoe
    CUT_DONE = "cut-done"
    SCRAMBLE_DONE = "scramble-done"  # the named cards are gathered and scrambled into a new stub
    SHOW = "show"                  # seat: the hand is tabled at showdown (its downcards may show)
    ACK_ALERT = "ack-alert"        # args: code
    UNDO = "undo"
    EXPOSED_CARD = "exposed-card"  # seat: a card dealt to that seat was exposed; args: street
    ABSENT_PLAYER = "absent-player"  # seat: the player is away from the table


@dataclass(frozen=True, slots=True)
class DealerInput:
    """One dealer input. ``seat`` is the table seat number (1-based) where the action names one;
    ``args`` holds action-specific values (JSON-safe)."""

    action: DealerAction
    seat: int | None = None
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TimerFired:
    """A timer armed in ``state`` fired; ignored when the machine has left that state."""

    name: str
    state: str


Event = ShoeEvent | DealerInput | TimerFired

# --------------------------------------------------------------------------- controller -> sinks


class Signal(StrEnum):
    """The LED signals a dealer learns once."""

    IDLE = "idle"              # no hand running
    DEAL = "deal"              # pull the next card to the named seat (up or down)
    BURN = "burn"              # pull one card to the burn pile
    SCRAMBLE = "scramble"      # gather the named cards with the stub, scramble, reload the shoe
    CUT = "cut"                # cut the new stub
    COMMUNITY = "community"    # pull one card face up to the centre
    BETTING = "betting"        # no card now: betting round in progress
    SHOWDOWN = "showdown"
    STOP = "stop"              # attention: stop dealing, read the display
    SHOE_FAULT = "shoe-fault"  # the shoe reported a fault or is disconnected
    DEGRADED = "degraded"      # the link is noisy or a reader is failing


@dataclass(frozen=True, slots=True)
class Instruction:
    """What the dealer must do next: an LED signal plus the words for the display.

    :param signal: the LED signal.
    :param text: the display's large-type instruction (never names a downcard).
    :param seat: the seat a DEAL goes to, else ``None``.
    :param face: ``"up"`` or ``"down"`` for DEAL and COMMUNITY, else ``None``.
    :param street: ``"3rd"``..``"7th"`` or ``None``.
    :param cards: for SCRAMBLE, the public names of what to gather (e.g. ``("stub", "burn 4th")``).
    :param card_no: for DEAL, BURN, COMMUNITY, SCRAMBLE and CUT, the number (from 1, counted over
        the hand) of the next card to leave the shoe; the same instruction shown again after an
        interruption (shoe fault, stop, a restart) carries the same number, so a dealer who has
        already done it does not do it twice.
    """

    signal: Signal
    text: str
    seat: int | None = None
    face: str | None = None
    street: str | None = None
    cards: tuple[str, ...] = ()
    card_no: int | None = None


@dataclass(frozen=True, slots=True)
class Alert:
    """An alert for the dealer and the floor. ``code`` names the clause or cause
    (e.g. ``RP-10-H-B``, ``house-16.20``, ``duplicate-card``); ``latched`` alerts stay until a
    person acknowledges them."""

    code: str
    message: str
    street: str | None = None
    seat: int | None = None
    latched: bool = False


@dataclass(frozen=True, slots=True)
class DisplayUpdate:
    """The public table state (JSON-safe; never a downcard before showdown)."""

    state: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ShoeCommand:
    """A command for the shoe itself: ``"reset-counter"`` or ``"led"`` (``args``: pattern)."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)


Command = Instruction | Alert | DisplayUpdate | ShoeCommand

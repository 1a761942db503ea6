"""The messages that cross the controller's one queue, and the commands it emits.

Everything that happens enters as an *event* on one queue owned by one thread (the state
machine's): card reads and link changes from the shoe link, dealer inputs from buttons, the
display or a HIL script, and timers. The machine answers only with *commands* (LED signals,
display updates, alerts, shoe commands) that the service hands to sinks. These are plain frozen
values: no I/O, no threads, safe to journal and to compare in tests. Each is a frozen dataclass
that writes its own ``__init__`` (:func:`shoe_ctl.values.frozen_value`): the module defines them
without compiling generated methods at every start.
"""

from __future__ import annotations

from dataclasses import field
from enum import StrEnum
from typing import Any

from shoe_ctl.input_spec import DealerAction as DealerAction  # the dealer inputs are specified there
from shoe_ctl.rules.cards import Card
from shoe_ctl.values import FACTORY, FrozenValue, frozen_value

# --------------------------------------------------------------------------- shoe -> controller


@frozen_value
class ShoeInfo(FrozenValue):
    """What the shoe said in its hello: protocol version, firmware, serial number, reader kinds,
    ``boot_id`` (random per power-up of the shoe; 0 when unknown), and ``names_foreign``: it
    offered *names-foreign*, so the host takes its FOREIGN events and an unreadable card is followed
    by the event that says what it was (docs/protocol.md section 16; journaled only when true)."""

    protocol: int
    firmware: str
    serial: str
    readers: tuple[str, ...]
    boot_id: int = 0
    names_foreign: bool = field(default=False, metadata={"codec": "omit-default"})

    def __init__(self, protocol: int, firmware: str, serial: str, readers: tuple[str, ...],
                 boot_id: int = 0, names_foreign: bool = False) -> None:
        put = self._put
        put[0](self, protocol)
        put[1](self, firmware)
        put[2](self, serial)
        put[3](self, readers)
        put[4](self, boot_id)
        put[5](self, names_foreign)


@frozen_value
class CardRead(FrozenValue):
    """One card left the shoe.

    :param seq: the shoe's message sequence number (delivered once, in order, by the link).
    :param card: the card read, or ``None`` when it passed the sensor unreadable.
    :param reader: which reader saw it (``"rfid"``, ``"optical"``, ``"none"`` when unreadable).
    :param dispense: the shoe's dispense counter after this card (1 for the first card since the
        last counter reset); a jump of more than one is a gap: cards that left unreported.
    :param epoch: the counter epoch ``dispense`` belongs to (protocol v1 CARD ``epoch``: set by
        each counter reset, 0 after the shoe's power-up); ``None`` when unknown (older records).
        With it the machine tells a read made before a counter reset from one made after it.
    """

    seq: int
    card: Card | None
    reader: str
    dispense: int
    epoch: int | None = None

    def __init__(self, seq: int, card: Card | None, reader: str, dispense: int,
                 epoch: int | None = None) -> None:
        put = self._put
        put[0](self, seq)
        put[1](self, card)
        put[2](self, reader)
        put[3](self, dispense)
        put[4](self, epoch)


class FaultKind(StrEnum):
    """Faults a shoe reports (protocol v1, message FAULT)."""

    MISREAD = "misread"
    JAM = "jam"
    DOUBLE_PULL = "double-pull"
    COVER_OPEN = "cover-open"
    READER_ERROR = "reader-error"


@frozen_value
class ShoeFault(FrozenValue):
    """The shoe reported a fault. ``cleared`` is True when the shoe reports the fault gone."""

    seq: int
    kind: FaultKind
    cleared: bool = False
    detail: str = ""

    def __init__(self, seq: int, kind: FaultKind, cleared: bool = False, detail: str = "") -> None:
        put = self._put
        put[0](self, seq)
        put[1](self, kind)
        put[2](self, cleared)
        put[3](self, detail)


class ForeignWhat(StrEnum):
    """What a card that is not one of the stub's is (``ForeignCard.what``)."""

    UNKNOWN = "unknown"
    """Its tag is in no deck the shoe knows (a card from outside every enrolled deck)."""
    OTHER_DECK = "other-deck"
    """A card of another live (enrolled) deck than the stub's."""
    RETIRED = "retired"
    """A card of a retired deck (its tag is in no live deck)."""


@frozen_value
class ForeignCard(FrozenValue):
    """The card that just left the shoe (the unreadable ``CardRead`` right before it) is not one
    of the stub's deck (docs/protocol.md section 16, FOREIGN).

    :param seq: the shoe's sequence number (an event, delivered once and in order).
    :param what: :class:`ForeignWhat`.
    :param tag: the tag's UID, lowercase hex (never published to the floor).
    :param card: the card it is in its own deck (other-deck, retired), else None (never published).
    :param deck: the deck it belongs to ("" when none); a deck id is public.
    :param stub: the deck of the stub being dealt ("" before its first known card).
    """

    seq: int
    what: ForeignWhat
    tag: str
    card: Card | None = None
    deck: str = ""
    stub: str = ""

    def __init__(self, seq: int, what: ForeignWhat, tag: str, card: Card | None = None, deck: str = "",
                 stub: str = "") -> None:
        put = self._put
        put[0](self, seq)
        put[1](self, what)
        put[2](self, tag)
        put[3](self, card)
        put[4](self, deck)
        put[5](self, stub)

    def describe(self) -> str:
        """The card in words for the dealer: ``foreign card: tag 04a1..., not in deck D17`` or
        ``card of deck D12 in deck D17's shoe: the 9c``."""
        stub = f"deck {self.stub}" if self.stub else "this stub's deck"
        if self.what is ForeignWhat.OTHER_DECK:
            return f"card of deck {self.deck} in {stub}'s shoe: the {self.card} (tag {self.tag})"
        if self.what is ForeignWhat.RETIRED:
            return f"card of retired deck {self.deck} in {stub}'s shoe: the {self.card} (tag {self.tag})"
        return f"foreign card: tag {self.tag}, not in {stub} nor in any enrolled deck"


@frozen_value
class StubDeck(FrozenValue):
    """The shoe says which enrolled deck the stub counted under ``epoch`` is (docs/protocol.md
    section 16, STUB): the deck of its first known card since that counter reset. A deck id is
    public (it names no card); delivered when it changes, not sequenced."""

    epoch: int
    deck: str

    def __init__(self, epoch: int, deck: str) -> None:
        put = self._put
        put[0](self, epoch)
        put[1](self, deck)


@frozen_value
class ShoeButton(FrozenValue):
    """A button on the shoe was pressed (``button`` is the shoe's button number, from 1)."""

    seq: int
    button: int

    def __init__(self, seq: int, button: int) -> None:
        put = self._put
        put[0](self, seq)
        put[1](self, button)


class LinkStatus(StrEnum):
    """The shoe link's connection state."""

    CONNECTED = "connected"
    DISCONNECTED = "disconnected"
    DEGRADED = "degraded"


@frozen_value
class LinkChanged(FrozenValue):
    """The link to the shoe changed state; ``info`` is the shoe's hello once connected.

    ``sequence_reset`` is True on a ``connected`` event whose hello shows the shoe's sequence
    numbers went back (it lost its stored ``next_seq``, ``docs/protocol.md`` section 6, or a
    restarted host's resume point is beyond the shoe's last sequence): events the shoe held may
    be lost and cannot be told from old ones; the state machine raises ``shoe-sequence-reset``.

    ``refused`` is set when the link refused a shoe or a frame (``docs/protocol.md``,
    "Authentication (version 2)"; the codes are ``drivers.link_admission.REFUSALS``: ``unpaired``,
    ``unknown-shoe``, ``auth-failed``, ``forged``, ``replay``; the transport adds
    ``port-shared``): nothing it carried was delivered; the state machine raises the latched
    alert ``shoe-<code>``. ``auth`` is ``hmac`` (every frame authenticated) or ``off`` (an
    unauthenticated bench link), ``""`` when not known.
    """

    status: LinkStatus
    detail: str = ""
    info: ShoeInfo | None = None
    sequence_reset: bool = False
    refused: str = ""
    auth: str = field(default="", compare=False)

    def __init__(self, status: LinkStatus, detail: str = "", info: ShoeInfo | None = None,
                 sequence_reset: bool = False, refused: str = "", auth: str = "") -> None:
        put = self._put
        put[0](self, status)
        put[1](self, detail)
        put[2](self, info)
        put[3](self, sequence_reset)
        put[4](self, refused)
        put[5](self, auth)


@frozen_value
class SequenceGap(FrozenValue):
    """The shoe's sequence numbers jumped: events were lost on the shoe's side (e.g. a reboot that
    dropped its unacked buffer). ``expected`` is the next sequence the host waited for, ``got`` the
    one that arrived."""

    expected: int
    got: int

    def __init__(self, expected: int, got: int) -> None:
        put = self._put
        put[0](self, expected)
        put[1](self, got)


@frozen_value
class CounterReset(FrozenValue):
    """The shoe confirmed a dispense-counter reset: from now on it counts cards from 0 under
    ``epoch`` (1..65535). The link posts it once per reset the host asked for
    (``ShoeCommand("reset-counter")``), when a HEARTBEAT, HELLO or CARD first shows the new epoch,
    and before any card event counted under it. The state machine waits for it before the first
    deal of a hand, so that no card of the hand is counted under the old counter."""

    epoch: int

    def __init__(self, epoch: int) -> None:
        put = self._put
        put[0](self, epoch)


@frozen_value
class ShoeRestarted(FrozenValue):
    """The shoe restarted (a power loss, a watchdog, a firmware update) while the host knew it:
    a HELLO from the same serial number with another ``boot_id`` (``docs/protocol.md`` section 12).
    The link posts it once per restart, at once: after the ``connected`` event and any
    :class:`SequenceGap` of that HELLO, before every event that follows it.

    :param serial: the shoe's serial number.
    :param boot_before: the ``boot_id`` of the previous HELLO; ``boot_after`` the new one.
    :param boot_count_before: the shoe's power-up count at the previous HELLO (None: the shoe
        keeps no counters); ``boot_count_after`` now. More than one apart: it restarted more
        than once meanwhile.
    :param cards_counted: cards the shoe's sensor counted between the two HELLOs (None: the shoe
        keeps no card total); ``cards_reported`` the CARD events delivered for that span.
    :param counts_unpowered: the shoe counts cards also while its main power is off (capability
        ``counts-unpowered``): only then does ``cards_counted`` include a card pulled while it
        was off.
    :param in_flight: events made before the restart that the shoe still holds and will resend
        (they arrive after this event, as usual); each may be a card.
    """

    serial: str
    boot_before: int
    boot_after: int
    boot_count_before: int | None = None
    boot_count_after: int | None = None
    cards_counted: int | None = None
    cards_reported: int = 0
    counts_unpowered: bool = False
    in_flight: int = 0

    def __init__(self, serial: str, boot_before: int, boot_after: int,
                 boot_count_before: int | None = None, boot_count_after: int | None = None,
                 cards_counted: int | None = None, cards_reported: int = 0, counts_unpowered: bool = False,
                 in_flight: int = 0) -> None:
        put = self._put
        put[0](self, serial)
        put[1](self, boot_before)
        put[2](self, boot_after)
        put[3](self, boot_count_before)
        put[4](self, boot_count_after)
        put[5](self, cards_counted)
        put[6](self, cards_reported)
        put[7](self, counts_unpowered)
        put[8](self, in_flight)

    @property
    def unreported(self) -> int | None:
        """Cards the shoe counted that no CARD reported nor will (None: the shoe cannot say):
        counted less reported less the events still in flight (exact when those are all cards,
        else a lower bound)."""
        if self.cards_counted is None:
            return None
        return max(0, self.cards_counted - self.cards_reported - self.in_flight)

    @property
    def certain(self) -> bool:
        """True when the shoe's count covers the time it was off, so ``unreported == 0`` means
        no card left unseen."""
        return self.counts_unpowered and self.cards_counted is not None

    def procedure(self) -> str:
        """The alert text for the dealer and the floor: what happened, what to count, who
        decides, how the hand goes on (docs/protocol.md section 12)."""
        lost = self.unreported
        if lost:
            what = f"{lost} card(s) left the shoe with no read reaching the table"
        elif self.certain:
            what = "the shoe counted no card leaving unreported, also while it was off"
        else:
            what = "cards pulled while it was off cannot be known (this shoe does not count without power)"
        return (f"the shoe {self.serial} restarted during the hand: {what}. STOP: pull no card. Count the cards "
                "on the table (every seat, burns, set-aside) and compare with the display's card count; the "
                "floor decides: if the counts agree the hand goes on from the display's next instruction, "
                "otherwise the floor rules the hand (misdeal or the cards placed) and the dealer acknowledges")


ShoeEvent = (CardRead | ShoeFault | ForeignCard | ShoeButton | LinkChanged | SequenceGap | CounterReset | ShoeRestarted
             | StubDeck)
SHOE_NUMBERED = (CardRead, ShoeFault, ForeignCard, ShoeButton)
"""The shoe's events with a sequence number: journaled, then acked (docs/protocol.md section 5)."""

# --------------------------------------------------------------------------- dealer -> controller


@frozen_value
class DealerInput(FrozenValue):
    """One dealer input. ``seat`` is the table seat number (1-based) where the action names one;
    ``args`` holds action-specific values (JSON-safe). ``source`` says where it came from, set by
    the input path and journaled with it (``docs/security.md``, "Tamper-evident record"):
    ``button:<name>``, ``display:<client address>``, ``dealer-port:uid=<uid>,pid=<pid>``;
    ``None`` when not known (older records, tests, the simulation). It is provenance, not part of
    the input: two inputs that differ only in ``source`` compare equal. ``gate``: what the
    controller's gate did with it instead of handing it to the machine (docs/compliance.md):
    ``role-refused``, ``tilt-refused``, or ``tilt-recheck`` (a technician's acknowledgement of the
    tilt, which the controller handles); "" for an input the machine took. Set only in the record
    (journaled only when set): a replay of the journal hands such an input to no machine's rules."""

    action: DealerAction
    seat: int | None = None
    args: dict[str, Any] = field(default_factory=dict)
    source: str | None = field(default=None, compare=False)
    gate: str = field(default="", compare=False, metadata={"codec": "omit-default"})

    def __init__(self, action: DealerAction, seat: int | None = None, args: dict[str, Any] = FACTORY,
                 source: str | None = None, gate: str = "") -> None:
        put = self._put
        put[0](self, action)
        put[1](self, seat)
        put[2](self, dict() if args is FACTORY else args)
        put[3](self, source)
        put[4](self, gate)


@frozen_value
class TimerFired(FrozenValue):
    """A timer armed in ``state`` fired; ignored when the machine has left that state. ``entry``:
    the machine's state-entry count when it was armed (``Dealing.entries``); a timer armed before
    the state was left and entered again is ignored too (``None``: not known, the state decides)."""

    name: str
    state: str
    entry: int | None = None

    def __init__(self, name: str, state: str, entry: int | None = None) -> None:
        put = self._put
        put[0](self, name)
        put[1](self, state)
        put[2](self, entry)


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


@frozen_value
class Instruction(FrozenValue):
    """What the dealer must do next: an LED signal plus the words for the display.

    :param signal: the LED signal.
    :param text: the display's large-type instruction (never names a downcard).
    :param seat: the seat a DEAL goes to, else ``None``.
    :param face: ``"up"`` or ``"down"`` for DEAL and COMMUNITY, else ``None``.
    :param street: ``"3rd"``..``"7th"`` or ``None``.
    :param cards: for SCRAMBLE, the public names of what to gather (e.g. ``("stub", "burn 4th")``,
        ``"premature 5th"``: the premature cards dealt to the seats); for BURN ``("set-aside",)``
        when the card goes to the set-aside pile (house 16.16).
    :param card_no: the number (from 1, counted over the hand) of the next card to leave the
        shoe, on every instruction inside a hand (``None`` when no hand runs); the same
        instruction shown again after an interruption (shoe fault, stop, a restart) carries the
        same number, so a dealer who has already done it does not do it twice, and a dealer can
        tell that the machine has seen every card it pulled.
    :param ref: the ``ref`` of the dealer input this instruction answers (see
        :class:`DealerAction`), else ``None``.
    """

    signal: Signal
    text: str
    seat: int | None = None
    face: str | None = None
    street: str | None = None
    cards: tuple[str, ...] = ()
    card_no: int | None = None
    ref: int | None = None

    def __init__(self, signal: Signal, text: str, seat: int | None = None, face: str | None = None,
                 street: str | None = None, cards: tuple[str, ...] = (), card_no: int | None = None,
                 ref: int | None = None) -> None:
        put = self._put
        put[0](self, signal)
        put[1](self, text)
        put[2](self, seat)
        put[3](self, face)
        put[4](self, street)
        put[5](self, cards)
        put[6](self, card_no)
        put[7](self, ref)


@frozen_value
class Alert(FrozenValue):
    """An alert for the dealer and the floor. ``code`` names the clause or cause
    (e.g. ``RP-10-H-B``, ``house-16.20``, ``duplicate-card``); ``latched`` alerts stay until a
    person acknowledges them. ``moves``: the cards already on the table the dealer must move for a
    ruling, in order, each ``"<from> -> <to>"`` (places: ``seat N up``, ``seat N down``,
    ``burn <street>``, ``set-aside``, ``out`` (out of play), ``muck``); never names a card.
    ``service``: raised by the service around the machine (a tilt, a refused PIN or input, a start
    warning; ``Controller.raise_alert``), not by the dealing machine from its events: a replay of
    the journal does not raise it again (docs/journal.md, "Records"). Journaled only when true and
    left out of ``repr``, so the machine's own alerts read and encode as they always did."""

    code: str
    message: str
    street: str | None = None
    seat: int | None = None
    latched: bool = False
    moves: tuple[str, ...] = ()
    service: bool = field(default=False, repr=False, metadata={"codec": "omit-default"})

    def __init__(self, code: str, message: str, street: str | None = None, seat: int | None = None,
                 latched: bool = False, moves: tuple[str, ...] = (), service: bool = False) -> None:
        put = self._put
        put[0](self, code)
        put[1](self, message)
        put[2](self, street)
        put[3](self, seat)
        put[4](self, latched)
        put[5](self, moves)
        put[6](self, service)


@frozen_value
class DisplayUpdate(FrozenValue):
    """The public table state (JSON-safe; never a downcard before showdown)."""

    state: dict[str, Any]

    def __init__(self, state: dict[str, Any]) -> None:
        put = self._put
        put[0](self, state)


@frozen_value
class ShoeCommand(FrozenValue):
    """A command for the shoe itself: ``"reset-counter"`` (the only one the machine sends; the
    shoe's LEDs follow the instructions through ``drivers.leds.ShoeLedSink``)."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)

    def __init__(self, name: str, args: dict[str, Any] = FACTORY) -> None:
        put = self._put
        put[0](self, name)
        put[1](self, dict() if args is FACTORY else args)


Command = Instruction | Alert | DisplayUpdate | ShoeCommand

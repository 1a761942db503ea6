"""The shoe's side of naming a card of another deck (docs/protocol.md section 16): which form a
held FOREIGN event takes for the host of this connection.

:class:`ForeignNaming` keeps the host's answer (ACK flag bit 1 of its first ACK after a
HOST_HELLO or a power-up): FOREIGN to a host that took names-foreign, the misread FAULT it stood
for to any other, nothing while the answer is not known yet. Runs on CircuitPython.
"""

from . import codec as c
from .deckmap import card_name, uid_hex

try:
    from typing import TYPE_CHECKING
except ImportError:  # CircuitPython: no typing module
    TYPE_CHECKING = False  # type: ignore[misc]
if TYPE_CHECKING:
    from collections.abc import Callable

    from .auth import ShoeAuth
    from .ring import Entry

RAW = 0
"""An entry type of the buffer whose payload is a whole frame, sent as it is (a simulation's
broken event)."""


def foreign_text(payload: bytes) -> str:
    """The misread FAULT's detail that stands for a FOREIGN before a host that did not take
    names-foreign: ``foreign card, tag 04a1...`` (also a retired deck's tag: no live deck has it)
    or ``9c of deck D12 in deck D17's stub``."""
    what, code, uid, deck, stub = c.foreign_fields(payload)
    if what == c.FOREIGN_OTHER_DECK:
        return card_name(code) + " of deck " + deck + " in deck " + stub + "'s stub"
    return "foreign card, tag " + uid_hex(uid)


class ForeignNaming:
    """One connection's form of FOREIGN events.

    :param offered: the shoe offers names-foreign in its HELLO (else every FOREIGN goes as the
        misread FAULT, at once).
    """

    def __init__(self, offered: bool) -> None:
        self.offered = offered
        self.ok = None  # type: bool | None
        """The host takes FOREIGN: None until its first ACK, then that ACK's flag bit 1."""
        self.withheld = False
        """A FOREIGN was held back while the answer was not known."""
        self.stub = None  # type: tuple[int, str] | None
        """The stub's deck, ``(epoch, deck id)``, once its first known card was read (the
        firmware sets it); None before."""

    def forget(self) -> None:
        """A new host (HOST_HELLO), connection or power-up: its first ACK answers again."""
        self.ok = None

    def form(self, mtype: int, payload: bytes) -> "tuple[int, bytes] | None":
        """``(type, payload)`` of a held event for this connection's host, or None for a FOREIGN
        while the host has not answered yet."""
        if mtype != c.T_FOREIGN:
            return (mtype, payload)
        if self.ok is None and self.offered:
            self.withheld = True
            return None
        if self.ok:
            return (mtype, payload)
        return (c.T_FAULT, c.fault_payload(c.FAULT_MISREAD, False, foreign_text(payload)))

    def send(self, entries: "list[Entry]", auth: "ShoeAuth", emit: "Callable[[bytes], None]") -> int:
        """Seal and ``emit`` the frames of held ``entries`` in order, each in this host's form;
        stops before a FOREIGN that waits for the host's answer (what follows it waits with it).
        Returns the number sent."""
        sent = 0
        for seq, mtype, payload in entries:
            if mtype == RAW:
                emit(payload)
            else:
                form = self.form(mtype, payload)
                if form is None:
                    break
                emit(auth.frame(form[0], seq, form[1]))
            sent += 1
        return sent

    def after_heartbeat(self, auth: "ShoeAuth", seq: int, epoch: int, emit: "Callable[[bytes], None]") -> None:
        """A STUB after each HEARTBEAT (``seq``: its number) to a host that took names-foreign,
        while the deck of the stub counted under ``epoch`` (the shoe's now) is known: repeated,
        so a lost one is said again within a second."""
        if self.ok and self.stub is not None and self.stub[0] == epoch:
            emit(auth.frame(c.T_STUB, seq, c.stub_payload(self.stub[0], self.stub[1])))

    def ack(self, names_foreign: bool) -> bool:
        """An ACK came (``names_foreign``: its flag bit 1). True when it is the connection's first
        and a FOREIGN waited for it (the caller resends from the host's ``want``)."""
        if self.ok is not None:
            return False
        self.ok = names_foreign and self.offered
        waited, self.withheld = self.withheld, False
        return waited

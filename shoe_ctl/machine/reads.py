"""One card read of a hand and where it went (:class:`Read`), as the dealing machine keeps it.
See ``docs/state-machine.md``."""

from __future__ import annotations

from dataclasses import dataclass

from shoe_ctl.rules.cards import Card

__all__ = ["Read"]


@dataclass(slots=True)
class Read:
    """One card read of the hand and where it went.

    :param seq: the shoe's sequence number.
    :param card: the card, ``None`` when unreadable.
    :param role: ``"burn"``, ``"down"``, ``"up"``, ``"community"`` or ``"stray"`` (not expected).
    :param street: the street it was dealt on.
    :param seat: the table seat it went to (deal steps), else ``None``.
    :param suspect: True once a later read of the same card (or a foreign read) casts doubt on it.
    """

    seq: int
    card: Card | None
    role: str
    street: str | None
    seat: int | None
    suspect: bool = False

    def where(self) -> str:
        """The read's place, e.g. ``"seat 1 down on 3rd"``. Private when the read is not face up
        (:attr:`public`): for the journal and DEBUG logs only, never for an alert text."""
        if self.role in ("down", "up"):
            return f"seat {self.seat} {self.role} on {self.street}"
        if self.role == "stray":
            return "a card not expected"
        return f"{self.role} on {self.street}"

    @property
    def public(self) -> bool:
        """The card lies face up for everyone to see (an upcard or the community card)."""
        return self.role in ("up", "community")

    def public_where(self) -> str:
        """Public description of a face-up read's place: ``"seat 2's upcard on 3rd"``,
        ``"the community card"``."""
        if self.role == "community":
            return "the community card"
        return f"seat {self.seat}'s upcard on {self.street}"

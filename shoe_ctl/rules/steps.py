"""One step of a street's deal (:class:`Step`): what the dealer does next, in order. The street's
plan (:mod:`shoe_ctl.rules.stub`) is a list of them and the hand (:mod:`shoe_ctl.rules.hand`)
records each card against the step it filled; docs/rules.md.
"""

from __future__ import annotations

from shoe_ctl.values import FrozenValue, frozen_value

__all__ = ["Step"]


@frozen_value
class Step(FrozenValue):
    """One thing the dealer does, in order.

    :param kind: ``"burn"``, ``"deal"``, ``"community"``, ``"scramble"`` or ``"cut"``.
    :param seat_index: the player index a ``deal`` goes to, else ``None``.
    :param face: ``"up"`` or ``"down"`` for ``deal`` (``"up"`` for ``community``), else ``None``.
    :param gather: for ``scramble``: the piles gathered with the stub, e.g. ``("stub", "burn 4th",
        "burn 5th", "burn 6th", "set-aside")``; empty otherwise.
    :param street: the street the step belongs to (names the burn pile a burn goes to).
    """

    kind: str
    seat_index: int | None = None
    face: str | None = None
    gather: tuple[str, ...] = ()
    street: str | None = None

    def __init__(self, kind: str, seat_index: int | None = None, face: str | None = None,
                 gather: tuple[str, ...] = (), street: str | None = None) -> None:
        put = self._put
        put[0](self, kind)
        put[1](self, seat_index)
        put[2](self, face)
        put[3](self, gather)
        put[4](self, street)

    @property
    def pulls_card(self) -> bool:
        """True when the step takes a card out of the shoe (burn, deal, community)."""
        return self.kind in ("burn", "deal", "community")

"""A shoe keeps a new pairing secret before it takes it (docs/protocol.md section 15): when its
store fails, a first pairing and a rotation both leave it with the secret it had, it answers
nothing under the new one, and the host, whose pair then times out, keeps its own secret: the two
never part. Through the virtual shoe on its pty and the host's real link."""

from __future__ import annotations

import queue

import pytest

from drivers.exc import ShoeError
from drivers.shoe import ShoeLink
from hil.deck import Deck
from hil.virtual_shoe import VirtualShoe

OLD, NEW = bytes(range(32)), bytes(range(1, 33))


def failing_store(secret: bytes) -> None:
    """A store that is full by the time the new secret comes (the old one was kept before)."""
    if secret == NEW:
        raise OSError(28, "No space left on device")


@pytest.mark.parametrize("paired", [False, True])
def test_a_secret_the_shoe_cannot_keep_is_not_taken(paired: bool) -> None:
    with VirtualShoe(Deck.seeded(1), serial="VS-KEEP", secret=OLD if paired else None, pairing=not paired,
                     on_secret=failing_store) as shoe:
        with ShoeLink(shoe.url, queue.Queue(), secret=OLD if paired else None, serial="VS-KEEP") as link:
            link.wait_connected(10)
            with pytest.raises((TimeoutError, ShoeError)):
                link.pair(NEW, 2)
        assert shoe.secret == (OLD if paired else None)
        assert shoe.device.auth.unkept == 1
        with ShoeLink(shoe.url, queue.Queue(), secret=OLD if paired else None, serial="VS-KEEP") as link:
            assert link.wait_connected(10).protocol == (2 if paired else 1)  # still the shoe it was

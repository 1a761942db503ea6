"""pytest plugin: one contract suite against the virtual shoe or a real shoe on a bench
(``--shoe-url``, ``--shoe-transport``, ``--shoe-operator``), with the fixtures ``shoe_target``,
``shoe_events`` and ``shoe_link``. The options, the isolation between tests and the
conformance kit: docs/conformance.md."""

from __future__ import annotations

import queue
from collections.abc import Iterator
from typing import Any

import pytest

from drivers.shoe import ShoeLink
from hil.conform import CommandOperator, Kit
from hil.deck import Deck
from hil.virtual_shoe import VirtualShoe
from shoe_ctl.rules.cards import Card

VIRTUAL = "virtual"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("shoe", "the shoe under test")
    group.addoption("--shoe-url", default=VIRTUAL, metavar="URL",
                    help="shoe to run the contract suite against (default: a virtual shoe per test)")
    group.addoption("--shoe-transport", default="pty", choices=("pty", "tcp"),
                    help="line of the virtual shoe (default: pty)")
    group.addoption("--shoe-operator", default=None, metavar="CMD",
                    help="on a real shoe, run 'CMD pull-card' when a test needs a card pulled (exit 0 = done)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "faults: needs fault injection; skipped against a real shoe")


def _real(config: pytest.Config) -> bool:
    return str(config.getoption("--shoe-url", default=VIRTUAL)) != VIRTUAL


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not _real(config):
        return
    skip = pytest.mark.skip(reason="needs fault injection: runs on the virtual shoe only")
    for item in items:
        if "faults" in item.keywords:
            item.add_marker(skip)


class ShoeTarget:
    """The shoe under test: ``url`` to open, ``virtual`` (None on a real shoe), ``pull()``."""

    def __init__(self, url: str, virtual: VirtualShoe | None, operator: str | None) -> None:
        self.url = url
        self.virtual = virtual
        self.operator = None if operator is None else CommandOperator(operator)

    @property
    def is_virtual(self) -> bool:
        """True on the virtual shoe."""
        return self.virtual is not None

    def pull(self) -> Card | None:
        """Dispense one card: the virtual shoe pulls it; on a real shoe the operator does
        (``--shoe-operator CMD``), otherwise the test is skipped. Returns the card on the
        virtual shoe, None on a real one."""
        if self.virtual is not None:
            return self.virtual.pull()
        if self.operator is None or not self.operator.request("pull-card").done:
            pytest.skip("pulling a card on a real shoe needs --shoe-operator CMD")
        return None

    def resync(self) -> None:
        """Take and ack every event the shoe holds (a real shoe between tests)."""
        kit = Kit(self.url)
        try:
            kit.host.open()
            kit.resync()
        finally:
            kit.host.close()


@pytest.fixture
def shoe_target(request: pytest.FixtureRequest) -> Iterator[ShoeTarget]:
    """The shoe under test (a fresh virtual shoe unless ``--shoe-url`` names a real one)."""
    config = request.config
    if _real(config):
        target = ShoeTarget(str(config.getoption("--shoe-url")), None, config.getoption("--shoe-operator"))
        target.resync()
        yield target
        target.resync()
        return
    shoe = VirtualShoe(Deck.seeded(0), transport=str(config.getoption("--shoe-transport")),
                       heartbeat_s=0.1, seed=0).start()
    try:
        yield ShoeTarget(shoe.url, shoe, None)
    finally:
        shoe.close()


@pytest.fixture
def shoe_events() -> queue.Queue[Any]:
    """A fresh event queue for a link."""
    return queue.Queue()


@pytest.fixture
def shoe_link(shoe_target: ShoeTarget, shoe_events: queue.Queue[Any]) -> Iterator[ShoeLink]:
    """A started, auto-acking :class:`ShoeLink` on the shoe under test, closed afterwards."""
    link = ShoeLink(shoe_target.url, shoe_events, auto_ack=True).start()
    try:
        yield link
    finally:
        link.close()

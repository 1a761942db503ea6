"""Fixtures shared by every layer's tests (plain helpers live in tests/support, on pytest's
pythonpath): the rule profiles, the recording mock LEDs, started virtual shoes, and the journal
table driver. The shoe fixtures of the contract suite come from :mod:`hil.pytest_plugin`."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from paths import HAVE_SHARED, SHARED_MISSING
from rule_profiles import PROFILES

pytest_plugins = ["hil.pytest_plugin"]

# No per-example time limit for property tests: on a loaded CI machine a thread kept off the CPU
# for a few hundred milliseconds is no failure of the code under test (a test may still set one).
settings.register_profile("shoe-ctl", deadline=None)
settings.load_profile("shoe-ctl")

# The scratch table configurations of the tests run development code: no signed release manifest
# (a test of the release check sets [release] verify = "on" itself; docs/compliance.md).
os.environ.setdefault("SHOE_CTL_RELEASE_VERIFY", "off")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "shared: needs ../shared (real PHH hands); skipped where absent")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked ``shared`` is skipped with the one reason where ../shared is absent."""
    if not HAVE_SHARED and item.get_closest_marker("shared") is not None:
        pytest.skip(SHARED_MISSING)


@pytest.fixture
def profiles() -> dict[str, Any]:
    """``{"tda": RuleProfile, "house": RuleProfile}`` (config/tda.toml, config/house.toml); a copy,
    so a test may add a profile of its own."""
    return dict(PROFILES)


@pytest.fixture
def mock_leds() -> Iterator[Any]:
    """A :class:`drivers.leds.MockLedSink` keeping every pattern shown with its time."""
    from drivers.leds import MockLedSink

    sink = MockLedSink()
    yield sink
    sink.close()


@pytest.fixture
def virtual_shoe() -> Iterator[Callable[..., Any]]:
    """A factory: ``virtual_shoe(deck=None, **kwargs)`` starts a :class:`hil.virtual_shoe.VirtualShoe`
    on a pty (the keyword arguments of its constructor); every shoe started is closed after the test."""
    from hil.virtual_shoe import VirtualShoe

    started: list[Any] = []

    def start(*args: Any, **kwargs: Any) -> Any:
        shoe = VirtualShoe(*args, **kwargs).start()
        started.append(shoe)
        return shoe

    yield start
    for shoe in reversed(started):
        shoe.close()


@pytest.fixture
def journal_table(tmp_path: Path) -> Callable[..., Any]:
    """A factory: ``journal_table(profile="tda", marks=False)`` gives the journal table driver of
    ``tests/support/journal_table.py`` on a fresh journal file in the test's folder."""
    from journal_table import Table

    def make(profile: str = "tda", *, marks: bool = False, name: str = "t.journal") -> Any:
        return Table(tmp_path / name, profile, marks=marks)

    return make

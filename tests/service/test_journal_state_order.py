"""The journal writer's fail / recover reports reach the dealer whatever order the controller
runs its urgent calls in (``docs/journal.md``, "The writer"): a latched ``journal-write-failed``
alert for every failure reported after the last alert, and the controller ends in the writer's
newest state."""

from __future__ import annotations

from typing import Any

from shoe_ctl.config import load_profile
from shoe_ctl.events import Alert
from shoe_ctl.machine import Dealing
from shoe_ctl.service.controller import Controller


class _Journal:
    """A journal with a writer (``WriterJournal``) whose state the test drives; it keeps nothing."""

    def __init__(self) -> None:
        self.listeners: list[Any] = []

    def add_state_listener(self, fn: Any) -> None:
        self.listeners.append(fn)

    def append(self, event: Any) -> None:
        return None

    def append_many(self, events: Any) -> list[int]:
        return []

    def submit(self, items: Any, **kw: Any) -> None:
        return None

    def wait_written(self, entry: Any, timeout: float | None) -> bool:
        return True

    def tell(self, exc: BaseException | None) -> None:
        for fn in self.listeners:
            fn(exc)


class _Sink:
    def __init__(self) -> None:
        self.alerts: list[Alert] = []

    def handle(self, command: Any) -> None:
        if isinstance(command, Alert) and command.code == "journal-write-failed":
            self.alerts.append(command)

    def close(self) -> None:
        return None


def _controller() -> tuple[Controller, _Journal, _Sink]:
    journal = _Journal()
    machine = Dealing({"tda": load_profile("tda"), "house": load_profile("house")}, default_rules="tda")
    ctl = Controller(machine, journal=journal)  # type: ignore[arg-type]
    sink = _Sink()
    ctl.add_sink(sink)
    return ctl, journal, sink


def test_fail_recover_fail_reported_before_the_controller_runs_alerts_and_ends_failing() -> None:
    """Both failures wait together: one alert tells the dealer, with the newest error, and the
    controller ends failing as the writer does (not in the recovery reported between them)."""
    ctl, journal, sink = _controller()
    journal.tell(OSError("disk full"))
    journal.tell(None)
    journal.tell(OSError("disk full again"))
    with ctl:
        assert ctl.wait_idle(5)
        assert [a.latched for a in sink.alerts] == [True]
        assert "disk full again" in sink.alerts[-1].message
        assert ctl._journal_failing is True


def test_fail_then_recover_reported_together_alerts_once_and_ends_writing() -> None:
    ctl, journal, sink = _controller()
    journal.tell(OSError("disk full"))
    journal.tell(None)
    with ctl:
        assert ctl.wait_idle(5)
        assert len(sink.alerts) == 1
        assert ctl._journal_failing is False
        journal.tell(OSError("full once more"))
        assert ctl.wait_idle(5)
        assert len(sink.alerts) == 2
        assert ctl._journal_failing is True


def test_a_repeated_failure_report_without_recovery_alerts_once_per_episode() -> None:
    ctl, journal, sink = _controller()
    with ctl:
        journal.tell(OSError("disk full"))
        assert ctl.wait_idle(5)
        journal.tell(None)
        assert ctl.wait_idle(5)
        journal.tell(OSError("disk full"))
        assert ctl.wait_idle(5)
    assert len(sink.alerts) == 2


def test_the_stop_stays_while_the_journal_cannot_be_written() -> None:
    """A STOP stops: the dealer acknowledges ``journal-write-failed`` while the journal still cannot
    be written, and the stop is up again at once (before, the deal went on with nothing written and
    nothing said, until the shoe's buffer of unacked cards was full). Once the journal writes again
    an acknowledgement clears it for good."""
    from shoe_ctl.events import DealerAction, DealerInput

    ctl, journal, sink = _controller()
    with ctl:
        journal.tell(OSError("disk full"))
        assert ctl.wait_idle(5)
        assert [a["code"] for a in ctl.machine.alerts] == ["journal-write-failed"]
        for _ in range(2):
            ctl.post(DealerInput(DealerAction.ACK_ALERT, args={"code": "journal-write-failed"}))
            assert ctl.wait_idle(5)
            listed = [a for a in ctl.machine.alerts if a["code"] == "journal-write-failed"]
            assert len(listed) == 1 and listed[0]["latched"]
            assert "disk full" in listed[0]["message"]
        assert ctl.machine.instruction().signal.value == "stop"
        ctl.post(DealerInput(DealerAction.ACK_ALERT))  # every alert, the same
        assert ctl.wait_idle(5)
        assert [a["code"] for a in ctl.machine.alerts] == ["journal-write-failed"]
        journal.tell(None)
        assert ctl.wait_idle(5)
        ctl.post(DealerInput(DealerAction.ACK_ALERT, args={"code": "journal-write-failed"}))
        assert ctl.wait_idle(5)
        assert ctl.machine.alerts == []
        assert ctl.machine.instruction().signal.value != "stop"
    assert len(sink.alerts) == 4  # the first, and once for each acknowledgement while failing

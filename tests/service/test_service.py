"""The controller (journal before ack, sinks, timers), the simulated dealer's isolation from the
state machine, the state diagram document, and ``shoe-ctl run`` end to end."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT, SHARED_PHH
from rule_profiles import PROFILES

from shoe_ctl.events import CardRead, DealerAction, DealerInput, Instruction, Signal
from shoe_ctl.machine import Dealing, diagram
from shoe_ctl.rules.cards import Card
from shoe_ctl.service.controller import Controller


class Log:
    """A journal, a link and a sink that write into one shared log."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, object]] = []
        self.fail_journal = False

    def append(self, item: object) -> int:
        if self.fail_journal:
            raise OSError("disk full")
        self.calls.append(("journal", item))
        return len(self.calls)

    def ack(self, seq: int) -> None:
        self.calls.append(("ack", seq))

    def handle(self, command: object) -> None:
        self.calls.append(("sink", command))

    def close(self) -> None:
        self.calls.append(("close", None))


def test_controller_journals_each_event_before_its_ack_then_delivers() -> None:
    """A dealer input is journaled before the machine acts; a card read's LED command goes to the
    sinks first, then the card is journaled, then acked (the ack stays the durability boundary)."""
    log = Log()
    ctl = Controller(Dealing(PROFILES), journal=log, link=log)
    ctl.add_sink(log)
    with ctl:
        ctl.post(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2]}))
        ctl.post(CardRead(1, Card.parse("As"), "rfid", 1))
        assert ctl.wait_idle(5)
    kinds = [k for k, _ in log.calls]
    first = kinds.index("journal")
    assert isinstance(log.calls[first][1], DealerInput)
    assert kinds.index("sink", first) > first  # the input's commands after its journal entry
    j = kinds.index("journal", first + 1)  # the card read's journal entry
    assert log.calls[j] == ("journal", CardRead(1, Card.parse("As"), "rfid", 1))
    assert log.calls[j + 1] == ("ack", 1)
    card_sinks = [c for k, c in log.calls[first + 1:j] if k == "sink"]
    assert any(isinstance(c, Instruction) and c.card_no == 2 for c in card_sinks)  # the next card's signal
    assert kinds[-1] == "close"


def test_unjournaled_event_is_not_acked() -> None:
    log = Log()
    log.fail_journal = True
    ctl = Controller(Dealing(PROFILES), journal=log, link=log)
    ctl.step(CardRead(1, Card.parse("As"), "rfid", 1))
    assert ("ack", 1) not in log.calls and ctl.errors == 1


def test_a_failing_sink_does_not_stop_the_others() -> None:
    class Broken:
        def handle(self, command: object) -> None:
            raise RuntimeError("boom")

        def close(self) -> None:
            return None

    log = Log()
    ctl = Controller(Dealing(PROFILES))
    ctl.add_sink(Broken())
    ctl.add_sink(log)
    ctl.step(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2]}))
    assert any(isinstance(c, Instruction) and c.signal is Signal.DEAL for k, c in log.calls if k == "sink")


def test_simulated_dealer_imports_nothing_of_the_state_machine() -> None:
    """It reads only the command stream (shoe_ctl.events), the inputs' specifications, the cards and the
    value classes (shoe_ctl.values, which imports nothing of the product)."""
    tree = ast.parse((ROOT / "hil" / "dealer.py").read_text())
    mods = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    mods |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    allowed = {"shoe_ctl.events", "shoe_ctl.input_spec", "shoe_ctl.rules.cards", "shoe_ctl.lifecycle", "shoe_ctl.values"}
    assert all(m is not None and (m in allowed or not m.startswith("shoe_ctl")) for m in mods), mods
    for leaf in ("lifecycle.py", "values.py"):
        tree = ast.parse((ROOT / "shoe_ctl" / leaf).read_text())
        assert not [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and (n.module or "").startswith(
            ("shoe_ctl", "drivers", "hil"))], leaf
    code = "import sys, hil.dealer; print(sorted(m for m in sys.modules if m.startswith('shoe_ctl')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert "shoe_ctl.machine" not in out.stdout and "transitions" not in out.stdout


def test_state_machine_document_is_current() -> None:
    """docs/state-machine.md holds the diagram generated from the machine's definition."""
    doc = (ROOT / "docs" / "state-machine.md").read_text()
    assert diagram.render(doc) == doc, "stale: run python -m shoe_ctl.machine.diagram"
    assert "hand_seventh_scramble --> hand_seventh_cut: scramble_done" in doc


def test_diagram_check_notices_a_stale_document(tmp_path: Path) -> None:
    stale = tmp_path / "state-machine.md"
    stale.write_text("# State machine\n\n" + diagram.BEGIN + "\nold\n" + diagram.END + "\n")
    assert diagram.main(["--check", "--path", str(stale)]) == 1
    assert diagram.main(["--path", str(stale)]) == 0
    assert diagram.main(["--check", "--path", str(stale)]) == 0
    assert "stateDiagram-v2" in stale.read_text()


@pytest.mark.shared
def test_run_deals_recorded_hands_and_exits_when_done() -> None:
    """``shoe-ctl run --hands`` on the virtual shoe: one plain line per signal when not a tty."""
    hand = SHARED_PHH / "Stars" / "30506593746.phh"
    out = subprocess.run(
        [sys.executable, "-m", "shoe_ctl.cli", "run", "--hands", str(hand), "--pace", "0", "--exit-when-done",
         "--display", "off"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    signals = [ln.split()[0] for ln in lines if ln.startswith("signal=")]  # not the status lines
    assert signals[0] == "signal=idle" and signals[-1] == "signal=idle"
    assert signals.count("signal=scramble") == 1 and signals.count("signal=community") == 1
    assert signals.count("signal=burn") == 4  # 4th, 5th, 6th and after the cut
    assert signals.count("signal=deal") == 8 * 3 + 8 * 3


def test_run_rejects_bad_seats() -> None:
    out = subprocess.run([sys.executable, "-m", "shoe_ctl.cli", "run", "--seats", "1,1", "--display", "off"],
                         capture_output=True, text=True, timeout=30, cwd=ROOT)
    assert out.returncode == 2 and "--seats" in out.stderr


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_run_without_hands_deals_until_stopped_and_stops_cleanly(sig: str) -> None:
    """The main job: random hands on the virtual shoe until Ctrl-C (or SIGTERM), then a clean stop."""
    import signal

    proc = subprocess.Popen([sys.executable, "-m", "shoe_ctl.cli", "run", "--pace", "0.005", "--display", "off"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(60)]
        proc.send_signal(getattr(signal, sig))
        rest, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    signals = [ln.split()[0] for ln in lines + rest.splitlines() if ln.startswith("signal=")]
    assert signals[0] == "signal=idle" and "signal=deal" in signals and "signal=burn" in signals


@pytest.mark.shared
def test_run_journals_every_event_and_marks_the_hands(tmp_path: Path) -> None:
    from shoe_ctl.events import CardRead as Read
    from shoe_ctl.service.journal import Journal

    hands = SHARED_PHH / "FTP"
    path = tmp_path / "journal.sqlite3"
    out = subprocess.run(
        [sys.executable, "-m", "shoe_ctl.cli", "run", "--hands", str(hands), "--pace", "0", "--exit-when-done",
         "--display", "off", "--journal", str(path)], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert path.stat().st_mode & 0o777 == 0o600
    j = Journal(path, table=None, profile=None, readonly=True)
    try:
        finished = j.hands(finished_only=True)
        reads = [r.item for r in j.records() if r.kind == "CardRead"]
    finally:
        j.close()
    assert len(finished) == 17
    assert reads and all(isinstance(r, Read) for r in reads)
    assert len({r.seq for r in reads}) == len(reads)  # each card once


def test_run_hands_names_every_unreadable_file_and_deals_the_rest(tmp_path: Path) -> None:
    """``run --hands FOLDER``: each unreadable file is named on stderr with its reason, the
    readable hand is still dealt, and the exit status says something was skipped."""
    folder = tmp_path / "hands"
    folder.mkdir()
    (folder / "a_good.phh").write_bytes((ROOT / "examples" / "razz-suit-tie.phh").read_bytes())
    (folder / "b_broken.phh").write_text('variant = "F7S"\nplayers = [\n', encoding="utf-8")
    (folder / "c_binary.phh").write_bytes(b"\xff\xfe\x00garbage\x81")
    out = subprocess.run(
        [sys.executable, "-m", "shoe_ctl.cli", "run", "--hands", str(folder), "--pace", "0", "--exit-when-done",
         "--display", "off", "--journal", "off"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 3, out.stderr
    bad = [ln for ln in out.stderr.splitlines() if "unreadable hand file" in ln]
    assert len(bad) == 2, out.stderr
    assert "b_broken.phh: line 3: not a PHH hand record (not TOML: " in bad[0] and "c_binary.phh: " in bad[1]
    assert bad[1].split("c_binary.phh: ", 1)[1].strip()  # a reason follows
    signals = [ln.split()[0] for ln in out.stdout.splitlines() if ln.startswith("signal=")]
    assert "signal=deal" in signals and signals[-1] == "signal=idle"

"""Rehearsing the real-shoe flow by hand (docs/service.md, *Rehearsing a real shoe by hand*):
``shoe-ctl sim --keys`` pulls a card per key through a
pty, with faults on keys; ``shoe-ctl hil soak --shoe URL`` asks an operator hook
(:mod:`hil.operator`) to pull the cards."""

from __future__ import annotations

import io
import json
import os
import queue
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from waiting import card_reads

from drivers.shoe import ShoeLink
from hil.deck import Deck
from hil.operator import CommandHook, OperatorError, PromptHook, hook_from_spec, request_text
from hil.soak import passed_real, run_soak_real
from hil.virtual_shoe import VirtualShoe

CLI = [sys.executable, "-m", "shoe_ctl.cli"]


@pytest.fixture()
def keyed_sim() -> Any:
    """``shoe-ctl sim --keys --transport tcp`` with its stdin and stderr on a pty; yields (master
    fd, url, process)."""
    master, slave = os.openpty()
    proc = subprocess.Popen([*CLI, "sim", "--keys", "--transport", "tcp", "--seed", "3"], stdin=slave,
                            stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    url = proc.stdout.readline().strip() if proc.stdout else ""
    _read_pty(master, "dealing by hand")  # the keypad is listening
    try:
        yield master, url, proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(10)
        os.close(master)


def _read_pty(master: int, until: str, timeout: float = 10.0) -> str:
    import select

    out = ""
    end = time.monotonic() + timeout
    while until not in out and time.monotonic() < end:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                out += os.read(master, 4096).decode(errors="replace")
            except OSError:
                break
    return out


def test_keys_on_a_pty_pull_cards_and_inject_faults(keyed_sim: Any) -> None:
    master, url, proc = keyed_sim
    assert url.startswith("socket://127.0.0.1:")
    events: queue.Queue[Any] = queue.Queue()
    link = ShoeLink(url, events, auto_ack=True)
    link.start()
    try:
        link.wait_connected(10)
        os.write(master, b"p \r3")  # one key per card; a digit pulls that many (no Enter needed)
        cards = card_reads(events, 6)
        assert len(cards) == 6
        deck = Deck.seeded(3)
        assert [c.card for c in cards] == [deck.take() for _ in range(6)]  # the seeded deck, in order
        os.write(master, b"cp")  # the next card's frame corrupted: dropped, sent again, delivered
        again = card_reads(events, 1)
        assert [c.card for c in again] == [deck.take()] and link.stats.bad_frames >= 1
        assert card_reads(events, 1, timeout=0.5) == []  # exactly one card per key
        os.write(master, b"?")
        assert "c: corrupt the next card" in _read_pty(master, "q, Ctrl-D: quit")
        os.write(master, b"q")
        assert proc.wait(10) == 0
    finally:
        link.close()


def test_unplug_and_reboot_keys(keyed_sim: Any) -> None:
    master, url, proc = keyed_sim
    events: queue.Queue[Any] = queue.Queue()
    link = ShoeLink(url, events, auto_ack=True)
    link.start()
    try:
        link.wait_connected(10)
        os.write(master, b"u")
        assert "cable unplugged" in _read_pty(master, "cable unplugged")
        os.write(master, b"u")
        assert "plugged back" in _read_pty(master, "plugged back")
        os.write(master, b"r")
        assert "shoe rebooted" in _read_pty(master, "shoe rebooted")
        os.write(master, b"2")
        assert len(card_reads(events, 2, timeout=15)) == 2  # the link came back after both
        assert link.stats.reconnects >= 1
    finally:
        link.close()


def test_keys_and_pace_together_are_refused() -> None:
    proc = subprocess.run([*CLI, "sim", "--keys", "--pace", "1"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "--keys and --pace" in proc.stderr


# --------------------------------------------------------------------------- operator hooks


def test_command_hook_gets_the_request_as_arguments_stdin_and_environment(tmp_path: Path) -> None:
    log = tmp_path / "log"
    script = tmp_path / "op.py"
    script.write_text("import json, os, sys\n"
                      f"open({str(log)!r}, 'a').write(json.dumps([sys.argv[1:], json.loads(sys.stdin.read()), "
                      "os.environ['SHOE_CTL_OP_COUNT']]) + '\\n')\n")
    hook = CommandHook(f"{sys.executable} {script}")
    hook.ask("pull", count=5, first=1, last=5, total=20)
    argv, body, env = json.loads(log.read_text())
    assert argv == ["pull", "count=5", "first=1", "last=5", "total=20"]
    assert body == {"action": "pull", "count": 5, "first": 1, "last": 5, "total": 20} and env == "5"
    with pytest.raises(OperatorError, match="exit status 3: robot arm stuck"):
        CommandHook(f"{sys.executable} -c \"import sys; sys.stderr.write('robot arm stuck'); sys.exit(3)\"").ask("pull")


def test_prompt_hook_says_the_request_and_waits_for_enter_on_reload() -> None:
    out = io.StringIO()
    hook = PromptHook(out, io.StringIO("\n"))
    hook.ask("pull", count=3, first=4, last=6, total=9)
    hook.ask("reload", deck=2)
    assert out.getvalue().startswith("operator: pull 3 cards (4-6 of 9)\n")
    assert "reload: put a fresh shuffled deck in the shoe (deck 2), then press Enter" in out.getvalue()
    with pytest.raises(OperatorError, match="input closed"):
        PromptHook(io.StringIO(), io.StringIO("")).ask("reload", deck=3)
    assert request_text("pull", {"count": 1}) == "pull 1 card"
    with pytest.raises(ValueError):
        hook_from_spec("robot")


class _Hands:
    """A hook that pulls on a virtual shoe (the operator's hands); ``double_at`` pulls one more."""

    def __init__(self, shoe: VirtualShoe, double_at: int | None = None) -> None:
        self.shoe, self.double_at, self.asked = shoe, double_at, []

    def ask(self, action: str, **details: Any) -> None:
        self.asked.append((action, details))
        if action == "reload":
            self.shoe.reload(Deck.seeded(details["deck"]))
            return
        for n in range(details["first"], details["last"] + 1):
            self.shoe.pull()
            if n == self.double_at:
                self.shoe.pull()


def test_soak_real_asks_for_batches_and_a_new_deck_and_checks_every_card() -> None:
    with VirtualShoe(Deck.seeded(1), transport="tcp") as shoe:
        hands = _Hands(shoe)
        res = run_soak_real(shoe.url, 60, hands, batch=20, stall_s=5)
    assert [a for a, _ in hands.asked] == ["pull", "pull", "pull", "reload", "pull"]
    assert [d.get("count") for _, d in hands.asked if _ == "pull"] == [20, 20, 12, 8]
    assert res["delivered"] == 60 and res["lost"] == 0 and res["repeated_in_deck"] == 0, res
    assert passed_real(res) and res["serial"] == "VS-0001"


def test_soak_real_sees_an_extra_card_and_a_stall() -> None:
    with VirtualShoe(Deck.seeded(1), transport="tcp") as shoe:
        res = run_soak_real(shoe.url, 10, _Hands(shoe, double_at=4), batch=5, stall_s=5)
    assert res["extra"] == 1 and res["lost"] == 0

    class Idle:
        def ask(self, action: str, **details: Any) -> None:
            pass  # nobody at the bench

    with VirtualShoe(Deck.seeded(1), transport="tcp") as shoe:
        res = run_soak_real(shoe.url, 5, Idle(), batch=5, stall_s=0.5)
    assert res["lost"] == 5 and "stalled" in res["error"] and not passed_real(res)


def test_cli_soak_on_a_shoe_driven_by_an_operator_command(tmp_path: Path) -> None:
    """The whole rehearsal: ``sim --keys`` reading keys from a FIFO, ``hil soak --shoe URL`` whose
    operator command types the keys (a space per card, ``n`` for a new deck)."""
    fifo = tmp_path / "keys"
    os.mkfifo(fifo)
    keep = os.open(fifo, os.O_RDWR)  # a writer that stays: the sim never sees the end of its input
    sim = subprocess.Popen([*CLI, "sim", "--keys", "--transport", "tcp"], stdin=os.open(fifo, os.O_RDONLY),
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = sim.stdout.readline().strip() if sim.stdout else ""
        op = tmp_path / "op.py"
        op.write_text("import sys\nargs = dict(a.split('=') for a in sys.argv[2:])\n"
                      f"with open({str(fifo)!r}, 'w') as f:\n"
                      "    f.write(' ' * int(args['count']) if sys.argv[1] == 'pull' else 'n')\n")
        proc = subprocess.run([*CLI, "hil", "soak", "--shoe", url, "--cards", "60", "--batch", "25", "--json",
                               "--stall-s", "10", "--operator", f"command:{sys.executable} {op}"],
                              capture_output=True, text=True, timeout=120)
    finally:
        sim.terminate()
        sim.wait(10)
        os.close(keep)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = json.loads(proc.stdout)
    assert res["delivered"] == 60 and res["lost"] == 0 and res["duplicated"] == 0 and res["repeated_in_deck"] == 0


def test_cli_soak_on_a_shoe_refuses_faults_and_a_prompt_without_a_terminal() -> None:
    proc = subprocess.run([*CLI, "hil", "soak", "--shoe", "/dev/null", "--faults", "corrupt=0.1"],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and "virtual shoe only" in proc.stderr
    proc = subprocess.run([*CLI, "hil", "soak", "--shoe", "/dev/null"], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and "stdin is not a terminal" in proc.stderr

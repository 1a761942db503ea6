"""The keyboard rehearsal exactly as docs/service.md (*Rehearsing a real shoe by hand*) writes it:
``shoe-ctl sim --keys --pairing ...``, the bench configuration, ``shoe-ctl pair``, ``shoe-ctl run``,
each taken from the document and run as its own process, the keys on a pipe. The service takes
the paired simulator with no alert (the simulator's own end of the pty is no second reader), a
key pulls a card the service reads, a scramble reloads the shoe, and the end of the keys quits."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from paths import ROOT
from waiting import interrupt

from drivers.shoe import port_holders
from hil.deck import Deck
from shoe_ctl.cli.sim_keys import KeyPad

CLI = [sys.executable, "-m", "shoe_ctl.cli"]


def rehearsal() -> tuple[list[str], str]:
    """The section's ``shoe-ctl`` commands (in order) and its bench configuration."""
    text = (ROOT / "docs" / "service.md").read_text()
    section = text.split("## Rehearsing a real shoe by hand", 1)[1].split("\n## ", 1)[0]
    commands = [line.strip() for block in re.findall(r"```sh\n(.*?)```", section, re.S)
                for line in block.splitlines() if line.strip().startswith("shoe-ctl ")]
    (toml,) = re.findall(r"```toml\n(.*?)```", section, re.S)
    return commands, toml


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def state(port: int) -> dict[str, Any] | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/state", timeout=2) as r:
            return json.loads(r.read())
    except OSError:
        return None


def wait_state(port: int, ok: Any, what: str, limit: float = 30.0) -> dict[str, Any]:
    end = time.monotonic() + limit
    last = None
    while time.monotonic() < end:
        last = state(port)
        if last is not None and ok(last):
            return last
        time.sleep(0.2)
    raise AssertionError(f"{what}: last state {last}")


@pytest.mark.parametrize("auth", ["hmac", "off"])
def test_the_documented_rehearsal_pairs_runs_deals_and_quits(tmp_path: Path, auth: str) -> None:
    commands, toml = rehearsal()
    sim_cmd, pair_cmd, run_cmd = commands
    assert sim_cmd.startswith("shoe-ctl sim --keys") and "--pairing" in sim_cmd
    assert pair_cmd.startswith("shoe-ctl pair") and run_cmd.startswith("shoe-ctl run")
    link = tmp_path / "shoe"
    bench = toml.replace('"/tmp/shoe"', f'"{link}"')
    if auth == "off":  # the document's unauthenticated bench: auth = "off" instead of secrets, no pair
        bench = re.sub(r"secrets = .*\n", 'auth = "off"\n', bench)
    (tmp_path / "bench.toml").write_text(bench)
    display = free_port()

    def args(cmd: str) -> list[str]:
        return [*CLI, *cmd.replace("/tmp/shoe", str(link)).split()[1:]]

    sim = subprocess.Popen(args(sim_cmd), cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    run = None
    try:
        assert sim.stdout is not None and sim.stdout.readline().strip() == str(link)
        if auth == "hmac":
            paired = subprocess.run(args(pair_cmd), cwd=tmp_path, capture_output=True, text=True, timeout=60)
            assert paired.returncode == 0, paired.stderr
            assert "shoe VS-BENCH paired" in paired.stdout
            assert (tmp_path / "bench-shoes" / "VS-BENCH.key").is_file()
        # the simulator holds its end of the pty: the far end of the line, not a second reader
        assert port_holders(str(link)) == []
        run = subprocess.Popen([*args(run_cmd), "--display", f"127.0.0.1:{display}"], cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        up = wait_state(display, lambda s: (s.get("shoe") or {}).get("status") == "connected", "the shoe connects")
        assert up["shoe"]["auth"] == auth and "VS-BENCH" in up["shoe"]["detail"]
        assert up["alerts"] == []  # no port-shared STOP naming the simulator
        assert sim.stdin is not None
        sim.stdin.write("p")  # a card pulled before a hand is started: the service reads it and stops
        sim.stdin.flush()
        stopped = wait_state(display, lambda s: s["alerts"], "the card pulled is read")
        assert [a["code"] for a in stopped["alerts"]] == ["card-not-expected"], stopped["alerts"]
        sim.stdin.close()  # the end of the keys: the simulator quits by itself
        assert sim.wait(20) == 0
        assert "end of input: quit" in (sim.stderr.read() if sim.stderr else "")
        # the simulator has gone and the link retries its pty: Ctrl-C stops the service cleanly
        assert interrupt(run) == 0, run.stderr.read() if run.stderr else ""
    finally:
        for proc in (run, sim):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()


class FakeShoe:
    """The parts of a virtual shoe the keypad uses, over one deck."""

    def __init__(self, deck: Deck) -> None:
        self.device = type("Device", (), {"deck": deck})()
        self.loaded: list[Any] = []

    def remaining(self) -> int:
        return self.device.deck.remaining()

    def pull(self) -> Any:
        return self.device.deck.take()

    def reload(self, deck: Deck) -> None:
        self.device.deck = deck
        self.loaded.append(deck)


def test_s_loads_the_stub_and_the_cards_gathered_shuffled(tmp_path: Path) -> None:
    import io

    shoe = FakeShoe(Deck.seeded(4))
    out = io.StringIO()
    pad = KeyPad(shoe, seed=4, out=out)
    for ch in "9":
        pad.key(ch)
    pulled = shoe.device.deck.dealt()
    stub = shoe.device.deck.cards()
    for ch in f"s 2 5 {pulled[7]}\n":
        pad.key(ch)
    (deck,) = shoe.loaded
    assert sorted(c.code for c in deck.cards()) == sorted(c.code for c in [*stub, pulled[1], pulled[4], pulled[7]])
    assert deck.cards()[:len(stub)] != stub  # shuffled
    assert "scrambled stub loaded: 43 from the shoe and 3 gathered, 46 cards" in out.getvalue()
    # a card that did not leave this deck (2 went back in the scramble) loads nothing
    for ch in "s 2 99\n":
        pad.key(ch)
    assert len(shoe.loaded) == 1 and "'2' is no card pulled from this deck" in out.getvalue()


def test_the_end_of_piped_keys_quits(tmp_path: Path) -> None:
    done = subprocess.run([*CLI, "sim", "--keys", "--link", str(tmp_path / "shoe")], input="pp",
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert done.stderr.count(" out: ") == 2 and "end of input: quit" in done.stderr
    assert not os.path.lexists(tmp_path / "shoe")

"""``shoe-ctl sim --state DIR``: the simulated shoe keeps its pairing secret in ``DIR/secret``, so a
simulator started again from the same folder is the same paired shoe (the table's key and the
decks sealed under it stay good), a rotation is kept there, and a shoe without its folder is a new,
unpaired one that ``shoe-ctl pair`` will not pretend to rotate. Each simulator is its own process
on a real pty; the guide's bench blocks (docs/build-a-shoe.md, *A deck on the bench, without a
reader*) are run as written (docs/service.md, *The simulated shoe's pairing*)."""

from __future__ import annotations

import os
import queue
import re
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from paths import ROOT
from waiting import wait_for

from drivers.shoe import ShoeLink
from shoe_ctl.cli import main
from shoe_ctl.events import LinkChanged
from shoe_ctl.service.shoe_secrets import SecretStore

CLI = [sys.executable, "-m", "shoe_ctl.cli"]
SERIAL = "VS-KEPT"


def bench_blocks() -> list[str]:
    """The two shell blocks of the guide's bench section, in order."""
    text = (ROOT / "docs" / "build-a-shoe.md").read_text()
    section = text.split("**A deck on the bench, without a reader.**", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", section, re.S)


@contextmanager
def simulator(tmp_path: Path, *extra: str) -> Iterator[subprocess.Popen[str]]:
    """``shoe-ctl sim --serial VS-KEPT --link tmp/shoe EXTRA...`` until the block ends, stopped
    with SIGTERM and waited for (its link removed) before the next one starts."""
    link = tmp_path / "shoe"
    proc = subprocess.Popen([*CLI, "sim", "--serial", SERIAL, "--link", str(link), *extra], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == str(link)
        yield proc
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    assert not os.path.lexists(link)


def config(tmp_path: Path) -> Path:
    cfg = tmp_path / "table.toml"
    cfg.write_text(f'[shoe]\nurl = "{tmp_path / "shoe"}"\nserial = "{SERIAL}"\nsecrets = "{tmp_path / "shoes"}"\n')
    return cfg


def connects(tmp_path: Path, secret: bytes | None, timeout: float = 10.0) -> bool:
    """Whether a host holding ``secret`` gets the shoe's hello (None: a version-1 host)."""
    with ShoeLink(str(tmp_path / "shoe"), queue.Queue(), secret=secret, serial=SERIAL) as link:
        try:
            info = link.wait_connected(timeout)
        except TimeoutError:
            return False
    return info.serial == SERIAL and info.protocol == (1 if secret is None else 2)


def test_the_bench_guide_restarts_the_same_paired_shoe(tmp_path: Path) -> None:
    first, second = bench_blocks()
    assert "--state" in first and "--pairing" in first and "--state" in second and "--pairing" not in second
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    outputs = []
    for block in (first, second):
        # the guide's 2 s pause becomes a wait for the shoe's link: the machine may be slower
        script = block.replace("& sleep 2", '& until [ -e "$PWD/shoe" ]; do sleep 0.1; done')
        done = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=240, start_new_session=True)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
        # the simulator got its SIGTERM from the block's last line: gone (its link removed) before the next
        assert wait_for(lambda: not os.path.lexists(tmp_path / "bench" / "shoe"), 30)
    bench = tmp_path / "bench"
    table_key = SecretStore(bench / "shoes").load("VS-0001")
    kept = bench / "vshoe" / "secret"
    assert table_key is not None and bytes.fromhex(kept.read_text()) == table_key
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600 and stat.S_IMODE(kept.parent.stat().st_mode) == 0o700
    assert "paired" in outputs[0] and "enrolled" in outputs[0]
    assert re.search(r"ok +handshake +protocol 2, .*serial VS-0001", outputs[1]), outputs[1]
    assert "52 of 52 cards read" in outputs[1] and "balanced" in outputs[1]


def test_a_restarted_simulator_is_the_same_shoe_and_keeps_a_rotation(tmp_path: Path, capsys) -> None:
    cfg, state = config(tmp_path), tmp_path / "vshoe"
    store = SecretStore(tmp_path / "shoes")
    with simulator(tmp_path, "--pairing", "--state", str(state)):
        assert main(["pair", "--config", str(cfg), "--timeout", "10"]) == 0
        first = store.load(SERIAL)
        assert first is not None and bytes.fromhex((state / "secret").read_text()) == first
        assert main(["pair", "--config", str(cfg), "--timeout", "10"]) == 0  # a rotation, inside the session
        rotated = store.load(SERIAL)
        assert rotated is not None and rotated != first
        assert bytes.fromhex((state / "secret").read_text()) == rotated
    with simulator(tmp_path, "--state", str(state)) as sim:
        assert connects(tmp_path, rotated)  # paired at once, under the rotated secret
        assert not connects(tmp_path, first, timeout=2)  # the old secret is no longer the shoe's
        assert not connects(tmp_path, None, timeout=2)  # and it speaks no version 1
    assert sim.stderr is not None and f"paired (secret kept in {state / 'secret'})" in sim.stderr.read()
    with simulator(tmp_path, "--pairing", "--state", str(state)) as sim:
        # a shoe holding a secret takes no new one in pairing mode: the table's rotates it
        assert connects(tmp_path, rotated)
    assert sim.stderr is not None and "pairing mode takes no new secret" in sim.stderr.read()
    capsys.readouterr()


def test_a_simulator_without_its_folder_is_a_new_shoe_that_pair_does_not_rotate(tmp_path: Path, capsys) -> None:
    cfg = config(tmp_path)
    cfg.write_text(cfg.read_text() + f'[journal]\npath = "{tmp_path / "journal.sqlite3"}"\n')
    uids = tmp_path / "uids.txt"
    uids.write_text("".join(f"04a1b2c3d4{i:04x}\n" for i in range(52)))
    store = SecretStore(tmp_path / "shoes")
    with simulator(tmp_path, "--pairing", "--state", str(tmp_path / "vshoe")):
        assert main(["pair", "--config", str(cfg), "--timeout", "10"]) == 0
    assert main(["deck", "enrol", "red-1", "--config", str(cfg), "--uids", str(uids), "--by", "ann"]) == 0
    table_key = store.load(SERIAL)
    with simulator(tmp_path, "--pairing") as sim:  # no --state: another shoe, unpaired
        assert main(["pair", "--config", str(cfg), "--timeout", "3"]) == 1
        err = capsys.readouterr().err
        assert "answers unpaired" in err and str(store.path(SERIAL)) in err and "enrol the decks again" in err
        assert store.load(SERIAL) == table_key  # nothing stored: the decks sealed under it stay good
        assert main(["deck", "list", "--config", str(cfg)]) == 0
        assert not connects(tmp_path, table_key, timeout=2)  # only the paired shoe is believed
        # pairing it is a new table key, as for a built shoe paired anew: the deck is refused
        store.path(SERIAL).unlink()
        assert main(["pair", "--config", str(cfg), "--timeout", "10"]) == 0
        assert store.load(SERIAL) != table_key
        capsys.readouterr()
        assert main(["deck", "list", "--config", str(cfg)]) == 1
        assert "red-1.json: seal: does not match" in capsys.readouterr().err
    assert sim.stderr is not None and "lasts while it runs (--state DIR keeps it)" in sim.stderr.read()


@pytest.mark.parametrize(("content", "mode", "said"), [
    (bytes(range(32)).hex() + "\n", 0o644, "others may read the shoe's secret"),
    ("not a secret\n", 0o600, "not a shoe secret"),
    ("abcd\n", 0o600, "a secret is 32 bytes"),
])
def test_a_secret_file_that_cannot_be_used_stops_the_simulator_naming_it(tmp_path: Path, content: str, mode: int,
                                                                         said: str) -> None:
    state = tmp_path / "vshoe"
    state.mkdir(mode=0o700)
    (state / "secret").write_text(content)
    (state / "secret").chmod(mode)
    done = subprocess.run([*CLI, "sim", "--state", str(state), "--link", str(tmp_path / "shoe")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert str(state / "secret") in done.stderr and said in done.stderr
    assert not os.path.lexists(tmp_path / "shoe")


def test_a_state_folder_that_cannot_be_made_stops_the_simulator_before_it_takes_a_secret(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    cases = {tmp_path / "file" / "vshoe": f"{tmp_path / 'file' / 'vshoe' / 'secret'}: cannot read the shoe's secret",
             # /proc takes no folder, not even root's: the write check refuses it
             Path("/proc/shoe-ctl-no-such-state"): "/proc/shoe-ctl-no-such-state: cannot keep the shoe's secret there"}
    for state, said in cases.items():
        done = subprocess.run([*CLI, "sim", "--pairing", "--state", str(state), "--link", str(tmp_path / "shoe")],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and done.stdout == ""
        assert said in done.stderr
        assert not os.path.lexists(tmp_path / "shoe")


def test_a_simulator_stopping_leaves_the_link_of_the_one_started_after_it(tmp_path: Path) -> None:
    """Started again on the same --link before the old one has gone (``kill %1`` and the next
    line at once): the old one, stopping, does not take the new one's link away."""
    link = tmp_path / "shoe"
    old = subprocess.Popen([*CLI, "sim", "--serial", SERIAL, "--link", str(link)], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
    try:
        assert old.stdout is not None and old.stdout.readline().strip() == str(link)
        with simulator(tmp_path):  # the new one's link replaces the old one's
            old.send_signal(signal.SIGTERM)
            assert old.wait(30) == 0
            assert os.path.lexists(link)
            assert connects(tmp_path, None)  # the new shoe, still there behind the link
    finally:
        if old.poll() is None:
            old.kill()
            old.wait(30)


def test_a_restarted_simulator_goes_on_with_its_sequence_numbers_and_counts(tmp_path: Path) -> None:
    """With --state the shoe keeps its counts as a built shoe does (docs/protocol.md section 12):
    started again, its boot count is one more and its numbering goes on, so a table that
    journaled the earlier run's cards sees a restart, not a sequence reset."""
    import json

    state = tmp_path / "vshoe"
    with simulator(tmp_path, "--state", str(state), "--pace", "0.05"):
        assert wait_for(lambda: json.loads((state / "state.json").read_text())["next_seq"] > 5, 30)
    first = json.loads((state / "state.json").read_text())
    assert first["boot_count"] == 1 and first["card_total"] == first["next_seq"] - 1
    with simulator(tmp_path, "--state", str(state)):
        again = json.loads((state / "state.json").read_text())
        assert again["boot_count"] == 2 and again["next_seq"] == first["next_seq"]
        events: queue.Queue[object] = queue.Queue()
        with ShoeLink(str(tmp_path / "shoe"), events, serial=SERIAL, resume_seq=first["next_seq"] - 1) as link:
            link.wait_connected(10)
            up = _drain_connected(events)
        assert up and not up[0].sequence_reset
    fresh = tmp_path / "other"
    fresh.mkdir()
    with simulator(fresh):  # without --state: numbering from 1, the table sees the reset
        events = queue.Queue()
        with ShoeLink(str(fresh / "shoe"), events, serial=SERIAL, resume_seq=first["next_seq"] - 1) as link:
            link.wait_connected(10)
            up = _drain_connected(events)
        assert up and up[0].sequence_reset


def _drain_connected(events: queue.Queue[object]) -> list[LinkChanged]:
    found = []
    while True:
        try:
            event = events.get_nowait()
        except queue.Empty:
            return found
        if isinstance(event, LinkChanged) and event.info is not None:
            found.append(event)


def test_a_first_pairing_of_a_shoe_that_holds_a_secret_says_how_to_reset_it(tmp_path: Path, capsys) -> None:
    """The table's key deleted, the simulator still paired: pairing mode takes no new secret (only
    the paired shoe is believed, and a shoe changes its secret only by rotation); pair says what
    to do and stores nothing."""
    cfg, state = config(tmp_path), tmp_path / "vshoe"
    store = SecretStore(tmp_path / "shoes")
    with simulator(tmp_path, "--pairing", "--state", str(state)):
        assert main(["pair", "--config", str(cfg), "--timeout", "10"]) == 0
    kept = (state / "secret").read_text()
    store.path(SERIAL).unlink()
    capsys.readouterr()
    with simulator(tmp_path, "--pairing", "--state", str(state)):
        assert main(["pair", "--config", str(cfg), "--timeout", "2"]) == 1
    err = capsys.readouterr().err
    assert "holds a secret already" in err and "delete the secret file in their state folder" in err
    assert "answers sealed frames" in err and f"Restore the key file {store.path(SERIAL)}" in err
    assert store.load(SERIAL) is None and (state / "secret").read_text() == kept


def test_doctor_names_a_wiped_key_file_instead_of_a_silent_shoe(tmp_path: Path, capsys) -> None:
    cfg, state = config(tmp_path), tmp_path / "vshoe"
    store = SecretStore(tmp_path / "shoes")
    with simulator(tmp_path, "--pairing", "--state", str(state)):
        assert main(["pair", "--config", str(cfg), "--timeout", "10"]) == 0
    key = store.path(SERIAL)
    key.unlink()  # the host's key file is gone; the shoe keeps the secret in its folder
    capsys.readouterr()
    with simulator(tmp_path, "--state", str(state)):
        assert main(["doctor", "--config", str(cfg), "--timeout", "3"]) == 1
        said = capsys.readouterr().out
    (handshake,) = [line for line in said.splitlines() if line.split()[1:2] == ["handshake"]]
    assert "answers sealed frames: it is paired with a secret this host does not have" in handshake
    assert f"restore the key file {key}" in said and "pair it again (docs/install-pi.md, 4b)" in said
    assert "baud rate" not in said and "powered" not in said and not key.exists()

"""``shoe-ctl run`` in a terminal: the status line (never a hole card), NO_COLOR, --version on every
subcommand, a shoe port or display port held by another program, the display's reachable
addresses (docs/service.md, *The terminal*)."""

from __future__ import annotations

import errno
import fcntl
import io
import os
import re
import select
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from drivers.leds import ConsoleLedSink
from shoe_ctl.cli import build_parser, load_all
from shoe_ctl.cli.status import StatusLine, last_read, use_color
from shoe_ctl.config import load_profile
from shoe_ctl.events import DisplayUpdate, Instruction, Signal
from shoe_ctl.hostaddr import bind_problem, display_urls, interface_addresses

CARD = re.compile(r"\b(?:[2-9TJQKA][cdhs])\b")


def run_cli(*argv: str, env: dict[str, str] | None = None, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "shoe_ctl.cli", *argv], capture_output=True, text=True,
                          timeout=timeout, env=env)


def in_pty(argv: list[str], env: dict[str, str], timeout: float = 90) -> tuple[int, str]:
    """Run ``argv`` with stdin/stdout/stderr on a new pty; everything it wrote and its status."""
    master, slave = os.openpty()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    out = bytearray()
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the pty
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    return proc.wait(timeout=10), out.decode("utf-8", "replace")


def state(hand: int | None, seats: list[dict], **extra: object) -> DisplayUpdate:
    base = {"hand": hand, "street": "3rd", "seats": seats, "community": None,
            "stub": {"count": 40, "required": 10, "drawn": 12}, "shoe": {"status": "connected"}, "alerts": []}
    base.update(extra)
    return DisplayUpdate(base)


# --------------------------------------------------------------------------- the status line


def _places(events: list[Any]) -> list[tuple[int, str | None, str | None]]:
    """Each card read's place on the status line: (seq, the status line's words after it, the
    machine's private place of that read), through a real machine's public states."""
    from shoe_ctl.events import CardRead
    from shoe_ctl.machine import Dealing

    m = Dealing({"tda": load_profile("tda"), "house": load_profile("house")}, default_rules="tda")
    m.start()
    out = []
    for ev in events:
        states = [c.state for c in m.handle(ev) if isinstance(c, DisplayUpdate)]
        if isinstance(ev, CardRead):
            read = next(r for r in m.reads if r.seq == ev.seq)
            out.append((ev.seq, last_read(states[-1]), read.where()))
    return out


def test_last_read_names_where_the_machine_put_the_card() -> None:
    """The status line's last card is the machine's own place for the read (never a downcard's
    identity), also for a card held aside as not expected (it was named a burn: the stub drew
    a card no seat got) and for a card too many a count gives to a seat."""
    from shoe_ctl.events import CardRead, DealerAction, DealerInput
    from shoe_ctl.rules.cards import parse_cards

    deck = parse_cards("AsKd2c7h8h9sQsJd3cTc4d5d6d7c8c9cTdJcQcKcAc")
    reads = iter(CardRead(k + 1, c, "rfid", k + 1) for k, c in enumerate(deck))
    new = DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3]})
    places = _places([new, *(next(reads) for _ in range(9)), next(reads)])
    assert [p for _, p, _ in places] == [
        "seat 1 down", "seat 2 down", "seat 3 down", "seat 1 down", "seat 2 down", "seat 3 down",
        "seat 1 up Qs", "seat 2 up Jd", "seat 3 up 3c", "held aside"]
    assert not any(str(c) in (p or "") for c, (_, p, where) in zip(deck, places, strict=False) if "down" in where)


def test_last_read_follows_a_read_the_counts_book_again() -> None:
    """Seat 2 gets two 4th-street cards (the second booked to seat 3, the plan's next seat): the
    last card read is first named where the plan put it, and after the counts (seat 3 has its
    3rd-street cards only, seat 2 one card too many) where it lies."""
    from shoe_ctl.events import CardRead, DealerAction, DealerInput
    from shoe_ctl.machine import Dealing
    from shoe_ctl.rules.cards import parse_cards

    deck = parse_cards("AsKd2c7h8h9sQsJd3cTc4d5d6d7c8c9cTdJcQcKcAc")
    m = Dealing({"tda": load_profile("tda"), "house": load_profile("house")}, default_rules="tda")
    m.start()
    m.handle(DealerInput(DealerAction.NEW_HAND, args={"seats": [1, 2, 3]}))
    for k in range(9):
        m.handle(CardRead(k + 1, deck[k], "rfid", k + 1))
    m.handle(DealerInput(DealerAction.BETTING_COMPLETE))
    states = []
    for k in range(9, 13):  # the burn, then seat 1, seat 2, seat 2 again (the plan says seat 3)
        states = [c.state for c in m.handle(CardRead(k + 1, deck[k], "rfid", k + 1)) if isinstance(c, DisplayUpdate)]
    assert last_read(states[-1]) == f"seat 3 up {deck[12]}"  # where the plan put it
    m.handle(DealerInput(DealerAction.CARD_COUNT, 3, {"cards": 3}))
    states = [c.state for c in m.handle(DealerInput(DealerAction.CARD_COUNT, 2, {"cards": 5}))
              if isinstance(c, DisplayUpdate)]
    assert last_read(states[-1]) == "seat 2 extra"


def test_plain_status_lines_when_not_a_terminal() -> None:
    out = io.StringIO()
    line = StatusLine(out)
    line.handle(state(4, [{"seat": 2, "up": [], "down_count": 1}], last_read="seat 2 down"))
    line.handle(state(4, [{"seat": 2, "up": [], "down_count": 2}], alerts=[{"id": 1}], last_read="seat 2 down"))
    line.handle(state(4, [{"seat": 2, "up": [], "down_count": 2}], alerts=[{"id": 1}],
                      last_read="seat 2 down"))  # unchanged: no line
    line.handle(state(4, [{"seat": 2, "up": ["Kc"], "down_count": 2}], alerts=[{"id": 1}],
                      last_read="seat 2 up Kc"))  # a card: no line
    assert line.flush()
    line.close()
    lines = out.getvalue().splitlines()
    assert lines[-1] == 'status hand=4 street=3rd stub="40 / 10" shoe=connected last="seat 2 down" alerts=1'
    assert len(lines) == 2 and "\x1b" not in out.getvalue() and "\r" not in out.getvalue()


def test_terminal_line_is_redrawn_in_place_and_kept_below_led_lines() -> None:
    out = io.StringIO()
    line = StatusLine(out, tty=True, color=False, width=200)
    line.handle(state(1, [{"seat": 5, "up": [], "down_count": 1}], last_read="seat 5 down"))
    assert line.flush()
    line.console.write("DEAL seat 5 down\n")
    line.handle(state(1, [{"seat": 5, "up": ["Qh"], "down_count": 1}], last_read="seat 5 up Qh"))
    assert line.flush()
    text = out.getvalue()
    assert "\n" not in text.replace("DEAL seat 5 down\n", "")  # the status itself never scrolls
    assert text.endswith("\r\x1b[2Khand 1 | street 3rd | stub 40 / 10 | shoe connected | last seat 5 up Qh")
    # the LED line cleared the status line first and redrew it after
    assert "\r\x1b[2KDEAL seat 5 down\nhand 1 | " in text
    line.close()


def test_status_line_fits_the_terminal_width() -> None:
    out = io.StringIO()
    line = StatusLine(out, tty=True, color=True, width=40)
    line.handle(state(1, [], alerts=[{}] * 3))
    assert line.flush()
    shown = out.getvalue().rsplit("\r\x1b[2K", 1)[-1]
    line.close()
    assert len(re.sub(r"\x1b\[[0-9;]*m", "", shown)) <= 40


def test_a_stalled_terminal_never_holds_up_the_caller() -> None:
    """A terminal paused (Ctrl-S, a pipe nobody reads): handle() and the LED lines' stream
    return at once; what waits is drawn once the terminal takes output again."""
    release = threading.Event()

    class Paused(io.StringIO):
        def write(self, text: str) -> int:
            release.wait(10)
            return super().write(text)

    out = Paused()
    line = StatusLine(out, tty=False)
    leds = ConsoleLedSink(line.console, color=False)
    try:
        started = time.monotonic()
        for hand in range(1, 300):
            line.handle(state(hand, [{"seat": 1, "up": [], "down_count": 1}]))
            leds.handle(Instruction(Signal.DEAL, f"Deal seat 1 down (hand {hand})", seat=1, face="down"))
        assert time.monotonic() - started < 5.0  # never waited for the terminal (it waits 10 s)
        release.set()
        assert line.flush(5.0) and leds.flush(5.0)
    finally:
        leds.close()
        line.close()
    text = out.getvalue()
    assert "status hand=299 " in text and 'text="Deal seat 1 down (hand 299)"' in text


def test_no_color_env_turns_colour_off() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert use_color(Tty(), {}) is True
    assert use_color(Tty(), {"NO_COLOR": "1"}) is False
    assert use_color(Tty(), {"NO_COLOR": ""}) is True  # no-color.org: present and not empty
    assert use_color(io.StringIO(), {}) is False


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update(extra)
    env["COLUMNS"] = "300"
    return env


def test_run_on_a_terminal_shows_the_status_and_never_a_hole_card() -> None:
    # a pace above the status line's 10 ms turn: each card read is drawn (unpaced, the line shows
    # the newest read at each turn only)
    status, out = in_pty([sys.executable, "-m", "shoe_ctl.cli", "run", "--display", "off", "--count", "2",
                          "--pace", "0.015", "--exit-when-done", "--seed", "7"], _env(TERM="xterm"))
    assert status == 0, out
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)
    frames = [f for part in plain.split("\r\x1b[2K") for f in [part.split("\r\n")[-1]] if f.startswith("hand ")]
    assert any("last seat" in f and " down" in f for f in frames), frames[:5]
    assert any(f.startswith("hand 2 │ ") for f in frames)
    for f in frames:
        last = f.split("last ", 1)[1].split(" │", 1)[0]
        if last.endswith("down"):
            assert not CARD.search(last), f  # a downcard read is a place, never its identity
    assert "\x1b[32m" in out  # colour on a terminal


def test_run_honours_no_color_on_a_terminal() -> None:
    status, out = in_pty([sys.executable, "-m", "shoe_ctl.cli", "run", "--display", "off", "--count", "1",
                          "--pace", "0", "--exit-when-done"], _env(TERM="xterm", NO_COLOR="1"))
    assert status == 0, out
    assert "\x1b[3" not in out and "\x1b[1" not in out  # no colour, bold or blink codes
    assert "hand 1 | street" in out  # the status line is still redrawn in place


def test_version_on_every_subcommand() -> None:
    parser = load_all(build_parser())
    import argparse

    def walk(p: argparse.ArgumentParser, path: list[str]) -> list[list[str]]:
        found = [path]
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, child in a.choices.items():
                    found += walk(child, path + [name])
        return found

    paths = walk(parser, [])
    assert ["run"] in paths and ["hil", "soak"] in paths and len(paths) >= 9
    for path in paths:
        with pytest.raises(SystemExit) as done:
            parser.parse_args([*path, "--version"])
        assert done.value.code == 0


# --------------------------------------------------------------------------- ports held by others


def test_run_names_a_shoe_port_held_by_another_program(tmp_path: Path) -> None:
    master, slave = os.openpty()
    path = os.ttyname(slave)
    fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # what pyserial's exclusive open takes
    try:
        proc = run_cli("run", "--shoe", path, "--display", "off", timeout=60)
    finally:
        os.close(fd)
        os.close(slave)
        os.close(master)
    assert proc.returncode == 2, proc.stderr
    assert f"shoe port {path}: in use by another program" in proc.stderr
    assert "exclusively lock" not in proc.stderr and "Errno" not in proc.stderr


def test_run_names_a_busy_display_port_given_on_the_command_line() -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        proc = run_cli("run", "--display", f"127.0.0.1:{port}", "--count", "1", "--pace", "0", "--exit-when-done")
    assert proc.returncode == 2
    assert f"127.0.0.1:{port}: port in use by another program" in proc.stderr
    assert "--display off" in proc.stderr


def test_busy_configured_display_stays_on_the_status_line(tmp_path: Path) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        cfg = tmp_path / "t.toml"
        cfg.write_text(f"[display]\nport = {port}\n")
        proc = run_cli("run", "--config", str(cfg), "--count", "1", "--pace", "0", "--exit-when-done")
    assert proc.returncode == 0, proc.stderr
    assert "THE DEALER DISPLAY IS NOT SERVED" in proc.stderr
    status_lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("status ")]
    assert status_lines and all(f'display="NOT SERVED: 127.0.0.1:{port} port in use' in ln for ln in status_lines)


def test_wildcard_display_lists_interface_addresses() -> None:
    def fake() -> list[str]:
        return ["127.0.0.1", "::1", "192.168.1.40", "fe80::1", "10.0.0.7", "2001:db8::5", "192.168.1.40"]

    assert interface_addresses(fake) == ["192.168.1.40", "10.0.0.7", "2001:db8::5", "127.0.0.1", "::1"]
    assert display_urls("0.0.0.0", 8080, fake) == ["http://192.168.1.40:8080/", "http://10.0.0.7:8080/",
                                                  "http://127.0.0.1:8080/"]
    assert "http://[2001:db8::5]:8080/" in display_urls("::", 8080, fake)
    assert display_urls("127.0.0.1", 8080, fake) == ["http://127.0.0.1:8080/"]
    real = interface_addresses()
    assert "127.0.0.1" in real and "0.0.0.0" not in real  # this host's own, from ip -j addr or the ioctl


def test_run_with_wildcard_display_prints_reachable_urls() -> None:
    env = dict(os.environ, SHOE_CTL_DISPLAY_TOKEN="a-long-enough-token-123")
    proc = run_cli("run", "--display", "0.0.0.0:0", "--count", "1", "--pace", "0", "--exit-when-done", env=env)
    assert proc.returncode == 0, proc.stderr
    urls = re.findall(r"dealer display: (http://\S+)", proc.stderr)
    assert urls and not any("0.0.0.0" in u for u in urls)
    assert any(u.startswith("http://127.0.0.1:") for u in urls)


def test_bind_problem_words() -> None:
    assert bind_problem(OSError(errno.EADDRINUSE, "x")).startswith("port in use by another program")
    assert bind_problem(OSError(errno.EADDRNOTAVAIL, "x")) == "address not on this host"


def test_link_retry_warning_for_a_held_port_is_in_doctors_words() -> None:
    import logging

    from shoe_ctl.cli.run import _name_busy_port

    record = logging.LogRecord("drivers.shoe", logging.WARNING, __file__, 1, "%s (retrying)",
                               ("cannot open /dev/ttyACM0: Could not exclusively lock port /dev/ttyACM0: "
                                "[Errno 11] Resource temporarily unavailable",), None)
    assert _name_busy_port(record) is True
    assert record.getMessage() == "shoe port /dev/ttyACM0: in use by another program (retrying)"
    other = logging.LogRecord("drivers.shoe", logging.WARNING, __file__, 1, "%s (retrying)",
                              ("cannot open /dev/ttyACM0: [Errno 2] No such file or directory",), None)
    _name_busy_port(other)
    assert "No such file" in other.getMessage()


def test_doctor_indents_every_config_problem_and_honours_no_color(tmp_path: Path) -> None:
    cfg = tmp_path / "t.toml"
    cfg.write_text("seats = 1\n[shoe]\nbaudrate = 0\n")
    env = _env(TERM="xterm", NO_COLOR="1")
    status, out = in_pty([sys.executable, "-m", "shoe_ctl.cli", "doctor", "--config", str(cfg)], env)
    assert status == 1
    assert "\x1b[" not in out
    lines = out.replace("\r\n", "\n").splitlines()
    first = next(i for i, ln in enumerate(lines) if ln.startswith("FAIL  config"))
    assert f"{cfg}: seats: 1 is out of range" in lines[first]
    assert lines[first + 1] == " " * 17 + f"{cfg}: shoe.baudrate: 0 is out of range; allowed: 50..4000000 (e.g. 115200)"

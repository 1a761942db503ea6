"""The command line loads one subcommand: building the parser imports no subcommand's module,
``shoe-ctl --help`` still lists them all, and each one still parses, prints its help and runs."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import os
import pkgutil
import subprocess
import sys
from typing import Any

import pytest
from paths import EXAMPLES, ROOT

import shoe_ctl.cli
from shoe_ctl.cli import SUBCOMMANDS, build_parser, command_named, main


def _imported_after(code: str) -> set[str]:
    """The project's modules a fresh interpreter has imported after running ``code``."""
    probe = (f"import sys\n{code}\n"
             "print('\\n'.join(m for m in sys.modules if m.startswith(('shoe_ctl', 'hil', 'drivers', 'aiohttp'))))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return set(out.stdout.split())


def test_building_the_parser_imports_no_subcommand_module() -> None:
    loaded = _imported_after("from shoe_ctl.cli import build_parser\nbuild_parser()")
    assert {f"shoe_ctl.cli.{name}" for name in SUBCOMMANDS} & loaded == set()
    assert "shoe_ctl.cli.args" not in loaded


def test_one_subcommand_imports_its_own_module_only() -> None:
    loaded = _imported_after("from shoe_ctl.cli import build_parser\n"
                             "build_parser().parse_args(['verify', '--seed', '00', '--manifest', 'm.json'])")
    assert "shoe_ctl.cli.verify" in loaded
    assert {f"shoe_ctl.cli.{name}" for name in SUBCOMMANDS if name != "verify"} & loaded == set()


def test_the_direct_replay_imports_no_table_display_or_web_server() -> None:
    """``shoe-ctl replay --direct`` needs the machine and the simulated dealer, not the service's
    table (serial link, journal, floor client) nor the display's aiohttp."""
    loaded = _imported_after("import shoe_ctl.cli.replay, hil.replay")
    assert {"shoe_ctl.table", "shoe_ctl.display.server", "aiohttp", "drivers.shoe"} & loaded == set()


def test_the_direct_replay_loads_no_toml_parser_nor_datetime() -> None:
    """The rule profiles and the hands are flat TOML, read by ``shoe_ctl.phh_toml``'s fast reader:
    a direct replay loads neither ``tomllib`` nor the ``datetime`` it brings."""
    probe = ("import sys, io, contextlib\nfrom shoe_ctl.cli import main\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n"
             f"    status = main(['replay', '--direct', '--json', {str(EXAMPLES / 'razz-suit-tie.phh')!r}])\n"
             "print(status, sorted(m for m in ('tomllib', 'datetime') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.stdout.split("\n")[-2] == "0 []", out.stderr[-2000:]


def test_a_replay_owning_the_process_freezes_what_its_imports_made() -> None:
    """``shoe-ctl replay`` run as the process (``main()`` on ``sys.argv``) moves the start-up heap
    to the collector's permanent generation; called inside another program it leaves the
    program's collector as it was."""
    example = str(EXAMPLES / "razz-suit-tie.phh")
    probe = ("import gc, io, sys, contextlib\nfrom shoe_ctl.cli import main\n"
             "before = gc.get_freeze_count()\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n"
             f"    inside = main(['replay', '--direct', '--json', {example!r}])\n"
             "after_call = gc.get_freeze_count()\n"
             f"sys.argv = ['shoe-ctl', 'replay', '--direct', '--json', {example!r}]\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n"
             "    whole = main()\n"
             "print(inside, whole, before == after_call, gc.get_freeze_count() > after_call)")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.stdout.split("\n")[-2] == "0 0 True True", out.stderr[-2000:]


def _modules_with_register() -> set[str]:
    found = set()
    for info in pkgutil.iter_modules(shoe_ctl.cli.__path__):
        if info.name == "__main__":  # runs the command line when imported
            continue
        module = importlib.import_module(f"shoe_ctl.cli.{info.name}")
        if callable(getattr(module, "register", None)):
            found.add(info.name)
    return found


def test_every_subcommand_module_is_listed() -> None:
    assert _modules_with_register() == set(SUBCOMMANDS)


def test_help_lists_every_subcommand_with_its_modules_help() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    text = " ".join(out.getvalue().split())
    for name, help_text in SUBCOMMANDS.items():
        assert f"{name} {' '.join(help_text.split())}" in text, name


class _Recorder:
    """Stands for the subparsers: keeps the help a module's ``register`` gives its command."""

    def __init__(self) -> None:
        self.helps: dict[str, Any] = {}

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        self.helps[name] = kwargs.get("help")
        return argparse.ArgumentParser(prog=name)


@pytest.mark.parametrize("name", list(SUBCOMMANDS))
def test_listed_help_is_the_one_the_module_registers(name: str) -> None:
    rec = _Recorder()
    importlib.import_module(f"shoe_ctl.cli.{name}").register(rec)
    assert rec.helps == {name: SUBCOMMANDS[name]}


@pytest.mark.parametrize("name", list(SUBCOMMANDS))
def test_every_subcommand_parses_and_prints_its_help(name: str) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as stop:
        main([name, "--help"])
    assert stop.value.code == 0
    assert out.getvalue().startswith(f"usage: shoe-ctl {name}")
    assert "--version" in out.getvalue()


def test_a_subcommand_runs_from_the_lazy_parser() -> None:
    """``replay --direct --json`` on an example hand: parsed, loaded and run through ``main``."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(["replay", "--direct", "--json", str(EXAMPLES / "razz-suit-tie.phh")])
    assert status == 0
    report = json.loads(out.getvalue())
    assert report["game"] == "razz" and report["error"] is None and report["bring_in"] is not None


def _subcommands(parser: argparse.ArgumentParser) -> list[str]:
    return [name for a in parser._actions if isinstance(a, argparse._SubParsersAction) for name in a.choices]


def test_a_command_builds_its_own_subcommand_parser_alone() -> None:
    """``shoe-ctl replay ...`` makes one subcommand's parser, not eighteen; ``--help``, nothing
    or an unknown word before any command makes them all (their list is shown then)."""
    assert _subcommands(build_parser(command_named(["replay", "--direct", "x.phh"]))) == ["replay"]
    for argv in (["--help"], [], ["no-such-command"], ["--version", "replay"]):
        assert command_named(argv) is None
        assert _subcommands(build_parser(command_named(argv))) == list(SUBCOMMANDS)
    assert _subcommands(build_parser("no-such-command")) == list(SUBCOMMANDS)


def _outcome(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[Any, str, str]:
    """What parsing ``argv`` gives: the namespace (its callable by name) or the exit status, and
    what was printed."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            args = vars(parser.parse_args(argv))
            result: Any = {k: getattr(v, "__qualname__", v) for k, v in args.items()}
        except SystemExit as stop:
            result = stop.code
    return result, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("name", list(SUBCOMMANDS))
def test_one_subcommands_parser_parses_as_the_whole_tree(name: str) -> None:
    """The parser built for one subcommand gives what the whole tree gives for its help, an
    unknown option, a missing argument and ``--version``."""
    for tail in (["--help"], ["--no-such-option"], [], ["--version"]):
        argv = [name, *tail]
        assert _outcome(build_parser(name), argv) == _outcome(build_parser(), argv), argv


def test_one_subcommands_parser_parses_a_command_as_the_whole_tree() -> None:
    for argv in (["replay", "--direct", "--json", "--seed", "3", "a.phh", "b"],
                 ["journal", "check", "x.journal"], ["verify", "--seed", "00", "--manifest", "m.json"],
                 ["replay", "a.phh", "--no-such-option"]):
        assert _outcome(build_parser(argv[0]), argv) == _outcome(build_parser(), argv), argv


def test_a_sub_subcommand_is_reached_through_the_lazy_parser() -> None:
    args = build_parser().parse_args(["journal", "check", "x.journal"])
    assert args.command == "journal" and callable(args.func)


def test_an_unknown_subcommand_is_refused_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["no-such-command"])
    assert stop.value.code == 2
    assert "invalid choice: 'no-such-command'" in capsys.readouterr().err


def test_the_service_is_ready_before_the_display_server_and_floor_client_load(tmp_path: Any) -> None:
    """``shoe-ctl run`` tells systemd ``READY=1`` before it loads aiohttp (the display server)
    and paho (the floor client); the display still comes up after it."""
    probe = (
        "import sys\n"
        "import shoe_ctl.service.notify as notify\n"
        "seen = []\n"
        "ready = notify.Notifier.ready\n"
        "def note(self, status=''):\n"
        "    seen.append(sorted(m for m in ('aiohttp', 'paho', 'shoe_ctl.display.server') if m in sys.modules))\n"
        "    return ready(self, status)\n"
        "notify.Notifier.ready = note\n"
        "from shoe_ctl.cli import main\n"
        "status = main(['run', '--shoe', 'sim', '--pace', '0', '--count', '1', '--exit-when-done',\n"
        "               '--display', '127.0.0.1:0', '--journal', 'off'])\n"
        "print(seen, 'aiohttp' in sys.modules, status)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("WATCHDOG_USEC", "WATCHDOG_PID")}
    env["NOTIFY_SOCKET"] = str(tmp_path / "notify")  # nobody listens: the datagram is dropped
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env=env)
    last = out.stdout.strip().splitlines()[-1]
    assert last == "[[]] True 0", (last, out.stderr[-2000:])

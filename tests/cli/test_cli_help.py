"""Every subcommand's ``--help`` is plain text: no reST markup from docstrings."""

from __future__ import annotations

import argparse
import re

from shoe_ctl.cli import build_parser, load_all

MARKUP = re.compile(r"``|:(mod|func|class|meth|attr|data|exc):`|\*\*")


def _parsers(parser: argparse.ArgumentParser, name: str = "shoe-ctl") -> list[tuple[str, argparse.ArgumentParser]]:
    out = [(name, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                out.extend(_parsers(sub, f"{name} {sub_name}"))
    return out


def test_every_help_text_is_free_of_rest_markup() -> None:
    parsers = _parsers(load_all(build_parser()))
    names = {n for n, _ in parsers}
    # the whole tree is walked, sub-subcommands included
    assert {"shoe-ctl doctor", "shoe-ctl hil soak", "shoe-ctl hil crash", "shoe-ctl export"} <= names
    bad = [(n, m.group(0)) for n, p in parsers for m in [MARKUP.search(p.format_help())] if m]
    assert bad == []


def test_doctor_help_names_the_command_plainly() -> None:
    doctor = dict(_parsers(load_all(build_parser())))["shoe-ctl doctor"]
    text = doctor.format_help()
    assert "installation" in text
    assert "``" not in text

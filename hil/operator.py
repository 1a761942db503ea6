"""The operator hook (:class:`OperatorHook`): how a bench run against a real shoe asks a person
(``prompt``, :class:`PromptHook`) or a robot (``command:CMD``, :class:`CommandHook`) to pull
cards or load a deck; :func:`hook_from_spec` builds one from ``--operator``. The requests and the
command's contract: docs/service.md, "Rehearsing a real shoe by hand"."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from typing import Any, Protocol, TextIO

__all__ = ["CONFIRMED", "CommandHook", "OperatorError", "OperatorHook", "PromptHook", "hook_from_spec",
           "request_text"]

CONFIRMED = frozenset({"reload"})
"""Actions whose effect the run cannot see on the wire: ``ask`` returns when the operator confirms."""


class OperatorError(RuntimeError):
    """The operator could not be asked, or refused: a command that failed, a closed terminal."""


class OperatorHook(Protocol):
    """Asks the operator to do ``action`` (``pull``: ``count`` cards, numbered ``first`` to
    ``last`` of ``total``; ``reload``: put a fresh deck in the shoe, ``deck`` its number).

    :raises OperatorError: the request could not be made or was refused.
    """

    def ask(self, action: str, **details: object) -> None: ...


def request_text(action: str, details: dict[str, Any]) -> str:
    """The request in words: ``pull 10 cards (1-10 of 100)``, ``reload: a fresh deck (deck 2)``."""
    if action == "pull":
        n = details.get("count", 1)
        where = f" ({details['first']}-{details['last']} of {details['total']})" if "first" in details else ""
        return f"pull {n} card{'' if n == 1 else 's'}{where}"
    if action == "reload":
        return f"reload: put a fresh shuffled deck in the shoe (deck {details.get('deck', '?')})"
    rest = " ".join(f"{k}={v}" for k, v in details.items())
    return f"{action} {rest}".strip()


class CommandHook:
    """Runs ``command`` (a shell-like command line, split with :func:`shlex.split`, not run by a
    shell) for each request: ``CMD ACTION key=value ...``; stdin one JSON object ``{"action": ...,
    **details}``; environment ``SHOE_CTL_OP_ACTION`` and ``SHOE_CTL_OP_<KEY>``.

    :param command: the command line.
    :param timeout: seconds the command may take (None: no limit).
    :raises ValueError: an empty command.
    """

    def __init__(self, command: str, *, timeout: float | None = 60.0) -> None:
        self.argv = shlex.split(command)
        if not self.argv:
            raise ValueError("operator command: empty")
        self.timeout = timeout

    def ask(self, action: str, **details: object) -> None:
        """Run the command for one request; :raises OperatorError: it cannot run, times out or
        exits non-zero (its stderr's last line named)."""
        env = dict(os.environ, SHOE_CTL_OP_ACTION=action)
        env.update({f"SHOE_CTL_OP_{k.upper()}": str(v) for k, v in details.items()})
        argv = [*self.argv, action, *(f"{k}={v}" for k, v in details.items())]
        try:
            done = subprocess.run(argv, input=json.dumps({"action": action, **details}) + "\n", text=True,
                                  capture_output=True, env=env, timeout=self.timeout, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            raise OperatorError(f"operator command {self.argv[0]}: {exc}") from None
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or [""])[-1]
            raise OperatorError(f"operator command {self.argv[0]} {action}: exit status {done.returncode}"
                                + (f": {last}" if last else ""))


class PromptHook:
    """Prints each request for a person at the bench (``operator: pull 10 cards (1-10 of 100)``);
    an action of :data:`CONFIRMED` waits for Enter.

    :param out: where to print (default stderr); :param inp: where Enter is read (default stdin).
    """

    def __init__(self, out: TextIO | None = None, inp: TextIO | None = None) -> None:
        self.out = out if out is not None else sys.stderr
        self.inp = inp if inp is not None else sys.stdin

    def ask(self, action: str, **details: object) -> None:
        """Say the request; for a confirmed action wait for Enter. :raises OperatorError: the
        input closed before the confirmation."""
        text = request_text(action, details)
        if action in CONFIRMED:
            self.out.write(f"operator: {text}, then press Enter: ")
            self.out.flush()
            if not self.inp.readline():
                raise OperatorError(f"operator: no answer to {text!r} (input closed)")
        else:
            self.out.write(f"operator: {text}\n")
            self.out.flush()


def hook_from_spec(spec: str) -> OperatorHook:
    """``command:CMD`` -> :class:`CommandHook`; ``prompt`` -> :class:`PromptHook` (stdin must be
    a terminal).

    :raises ValueError: another spec, an empty command, or ``prompt`` without a terminal.
    """
    if spec.startswith("command:"):
        return CommandHook(spec[len("command:"):])
    if spec == "prompt":
        if not sys.stdin.isatty():
            raise ValueError("--operator prompt: stdin is not a terminal (use --operator command:CMD)")
        return PromptHook()
    raise ValueError(f"--operator {spec!r}: expected 'prompt' or 'command:CMD'")

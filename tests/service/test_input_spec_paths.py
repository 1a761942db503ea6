"""One specification per dealer input (shoe_ctl/input_spec.py): every input with bad arguments,
or without the seat it needs, is refused by the display (``POST /input``) and by the dealer port
with the same words, and neither posts it; a good input passes both (docs/state-machine.md,
*Dealer inputs*)."""

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from waiting import wait_for

from shoe_ctl.display.server import DisplaySink
from shoe_ctl.events import DealerAction, DealerInput
from shoe_ctl.input_spec import COMMON, SPECS, SeatRule
from shoe_ctl.service import codec
from shoe_ctl.service.dealer_port import DealerPort
from shoe_ctl.service.ratelimit import RateLimiter
from shoe_ctl.web_guard import Limits

CANDIDATES: list[Any] = ["x", 1.5, -1, 99, [0], [True], True, None, 2]


def bad_inputs() -> list[tuple[DealerAction, int | None, dict[str, Any], str]]:
    """``(action, seat, args, field)`` for every way an input's row refuses: the seat missing,
    each required argument missing, each argument with each candidate value its check refuses."""
    out: list[tuple[DealerAction, int | None, dict[str, Any], str]] = []
    for action, spec in SPECS.items():
        seat = 3 if spec.seat is SeatRule.REQUIRED else None
        good = {a.name: a.choices[0] if a.choices else _good(a.name) for a in spec.args if a.required}
        if spec.seat is SeatRule.REQUIRED:
            out.append((action, None, dict(good), "seat"))
        for arg in (*COMMON, *spec.args):
            if arg.required:
                out.append((action, seat, {k: v for k, v in good.items() if k != arg.name}, f"args.{arg.name}"))
            for value in CANDIDATES:
                if not arg.test(value):
                    out.append((action, seat, {**good, arg.name: value}, f"args.{arg.name}"))
    return out


def _good(name: str) -> Any:
    return {"cards": 7, "burns": 2, "confirm": True, "places": ["seat 1 down"]}[name]


BAD = bad_inputs()


class Posted:
    def __init__(self) -> None:
        self.items: list[Any] = []

    def __call__(self, ev: Any) -> bool:
        self.items.append(ev)
        return True


@pytest.fixture
def paths(tmp_path: Path) -> Iterator[tuple[DisplaySink, socket.socket, Posted]]:
    posted = Posted()
    sink = DisplaySink(posted, port=0, limits=Limits(inputs_per_s=1e6, inputs_burst=10**6)).start()
    port = DealerPort(tmp_path / "d.sock", posted)
    port._rate = RateLimiter(1e6, 10**6, "test")  # every case is sent at once
    port.start()
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.connect(str(tmp_path / "d.sock"))
    c.settimeout(5)
    try:
        yield sink, c, posted
    finally:
        c.close()
        port.close()
        sink.close()


def via_display(sink: DisplaySink, action: DealerAction, seat: int | None, args: dict[str, Any]) -> tuple[int, str]:
    req = urllib.request.Request(sink.url + "input", method="POST", headers={"Content-Type": "application/json"},
                                 data=json.dumps({"action": action.value, "seat": seat, "args": args}).encode())
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, ""
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())["error"]


def via_port(c: socket.socket, buf: list[bytes], action: DealerAction, seat: int | None,
             args: dict[str, Any], within: float = 30.0) -> str:
    """The error line the dealer port answers (``""`` when it answers nothing within ``within`` s:
    a refusal is waited for as long as a loaded machine may take; a check that an input is
    taken, with no error, passes a short ``within``)."""
    c.sendall(codec.dumps(DealerInput(action, seat, args)).encode() + b"\n")
    end = time.monotonic() + within
    while True:
        for k, line in enumerate(buf):
            item = json.loads(line)
            if isinstance(item, dict) and "error" in item:
                del buf[: k + 1]
                return str(item["error"])
        buf.clear()
        if time.monotonic() > end:
            return ""
        c.settimeout(max(0.01, end - time.monotonic()))
        try:
            data = c.recv(65536)
        except TimeoutError:
            return ""
        buf.extend(x for x in data.split(b"\n") if x.strip())


def test_every_bad_input_gets_the_same_refusal_through_the_display_and_the_dealer_port(
        paths: tuple[DisplaySink, socket.socket, Posted]) -> None:
    sink, c, posted = paths
    assert {a for a, *_ in BAD} == set(SPECS)  # every input (each takes ref and street)
    buf: list[bytes] = []
    for action, seat, args, field in BAD:
        status, shown = via_display(sink, action, seat, args)
        said = via_port(c, buf, action, seat, args)
        where = f"{action.value} seat={seat} args={args}"
        assert status == 400 and shown.startswith(field), (where, status, shown)
        assert said == f"dealer port: {shown}; refused", (where, said)
    assert posted.items == []


def test_a_misdeal_needs_its_confirmation_on_the_dealer_port_too(
        paths: tuple[DisplaySink, socket.socket, Posted]) -> None:
    sink, c, posted = paths
    assert "args.confirm" in via_port(c, [], DealerAction.MISDEAL, None, {})
    assert posted.items == []
    assert via_port(c, [], DealerAction.MISDEAL, None, {"confirm": True}, within=0.5) == ""
    assert wait_for(lambda: len(posted.items) == 1, 30)  # the port answers nothing: its post is waited for
    assert via_display(sink, DealerAction.MISDEAL, None, {"confirm": True})[0] == 202
    assert [e.action for e in posted.items] == [DealerAction.MISDEAL, DealerAction.MISDEAL]

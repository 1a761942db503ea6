"""Recovery after a stop between an event's append and its alerts' append; the dealer port."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path
from typing import Any

from test_recovery import NEW, Counter, cards

from shoe_ctl import events as E
from shoe_ctl.service import codec
from shoe_ctl.service.dealer_port import DealerPort
from shoe_ctl.service.journal import Journal
from shoe_ctl.service.recovery import recover


def test_alerts_of_the_last_event_are_journaled_by_the_recovery(tmp_path: Path) -> None:
    path = tmp_path / "t.journal"
    with Journal(path, table="t", profile="tda") as j:
        j.append(cards(1, 1)[0])  # a card when no hand is open: the machine alerts, but the stop came first
    with Journal(path, table="t", profile="tda") as j:
        _m, _last, report = recover(j, Counter)
        assert report.clean and report.completed_alerts == 1
        kinds = [(r.kind, getattr(r.item, "code", None)) for r in j.records()]
        assert kinds[-2:] == [("CardRead", None), ("Alert", "card-not-expected")]
    with Journal(path, table="t", profile="tda") as j:  # a second start adds nothing and matches
        n = len(list(j.records()))
        _m, _last, report = recover(j, Counter)
        assert report.clean and report.completed_alerts == 0
        assert len(list(j.records())) == n
        j.append(NEW)


def _lines(sock: socket.socket, n: int, timeout: float = 5.0) -> list[Any]:
    sock.settimeout(timeout)
    buf = b""
    while buf.count(b"\n") < n:
        chunk = sock.recv(65536)
        assert chunk, "the dealer port closed"
        buf += chunk
    return [codec.loads(x) if b'"type"' in x else x for x in buf.split(b"\n")[:n]]


def test_dealer_port_streams_commands_and_posts_inputs(tmp_path: Path) -> None:
    posted: list[Any] = []
    got = threading.Event()

    def post(ev: Any) -> None:
        posted.append(ev)
        got.set()

    port = DealerPort(tmp_path / "dealer.sock", post)
    try:
        assert (tmp_path / "dealer.sock").stat().st_mode & 0o077 == 0
        ins = E.Instruction(E.Signal.DEAL, "Seat 3 down", seat=3, face="down")
        disp = E.DisplayUpdate({"hand": 1})
        port.handle(ins)
        port.handle(disp)  # before any client: kept only as the current state
        port.start()
        with socket.socket(socket.AF_UNIX) as c:
            c.connect(str(tmp_path / "dealer.sock"))
            assert _lines(c, 2) == [disp, ins]  # the table first, then the signal
            alert = E.Alert("duplicate-card", "Ah twice", street="4th", seat=2)
            port.handle(alert)
            assert _lines(c, 1) == [alert]
            c.sendall(codec.dumps(E.DealerInput(E.DealerAction.FOLD, 4)).encode() + b"\n")
            assert got.wait(5)
            assert posted == [E.DealerInput(E.DealerAction.FOLD, 4)]
            c.sendall(codec.dumps(ins).encode() + b"\n")  # not a dealer input: refused, nothing posted
            err = _lines(c, 1)[0]
            assert b"expected a DealerInput" in err
            time.sleep(0.05)
            assert len(posted) == 1 and port.rejected == 1
    finally:
        port.close()
    assert not (tmp_path / "dealer.sock").exists()


def test_shoe_commands_for_an_absent_shoe_are_kept_by_the_link_not_raised() -> None:
    from drivers.exc import NotConnectedError
    from shoe_ctl.service.shoe_commands import ShoeCommandSink

    class AwayLink:
        calls: list[str] = []

        def reset_counter(self) -> None:
            self.calls.append("reset")
            raise NotConnectedError("shoe at x not connected; counter reset kept for later")

        def send_leds(self, pattern: Any) -> None:
            self.calls.append("led")
            raise NotConnectedError("shoe at x not connected; LED pattern kept for later")

    link = AwayLink()
    sink = ShoeCommandSink(link)
    sink.handle(E.ShoeCommand("reset-counter"))
    sink.handle(E.ShoeCommand("led", {"pattern": "deal"}))  # not a shoe command: the LED sinks show signals
    assert link.calls == ["reset"]

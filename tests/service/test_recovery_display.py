"""A restarted service shows the dealer what the stopped one showed (``shoe-ctl run --journal``
stopped and started again on a TCP virtual shoe, its display and dealer port on loopback): the
alerts the dealer acknowledged, and the refusals shown only as the answer to the page's own input,
stay hidden; the alerts still shown are shown again (also the notice of the misdeal that ended the
hand, raised before the replay's start); an ``undo`` after the restart is refused in the words the
stopped service used. Before, every information alert of an input refused since the
last hand came back as a band, and an undo after a misdeal was refused with "no dealer input to
undo" (docs/journal.md, "Recovery")."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from waiting import wait_for

from hil.crash import DealerClient
from hil.virtual_shoe import VirtualShoe
from shoe_ctl.events import DealerAction, DealerInput
from shoe_ctl.floor.broker import free_port
from shoe_ctl.input_spec import REFUSED_CODES
from shoe_ctl.service.shoe_secrets import SecretStore, new_secret


class Service:
    """``shoe-ctl run`` on a TCP virtual shoe with a journal, the display and a dealer port."""

    def __init__(self, folder: Path, rules: str = "tda", faults: str | None = None) -> None:
        secret = new_secret()
        SecretStore(folder / "shoes").save("VS-0001", secret)
        self.shoe = VirtualShoe(transport="tcp", seed=3, serial="VS-0001", secret=secret, faults=faults).start()
        cfg = folder / "table.toml"
        cfg.write_text(f'rules = "{rules}"\n[shoe]\nserial = "VS-0001"\nsecrets = "{folder / "shoes"}"\n'
                       '[release]\nverify = "off"\n')
        self.port = free_port()
        self.sock = folder / "dealer.sock"
        self.log = folder / "service.log"
        self.argv = [sys.executable, "-m", "shoe_ctl.cli", "run", "--shoe", self.shoe.url, "--journal",
                     str(folder / "table.journal"), "--display", f"127.0.0.1:{self.port}", "--dealer-socket",
                     str(self.sock), "--config", str(cfg)]
        self.proc: subprocess.Popen[bytes] | None = None
        self.dealer: DealerClient | None = None

    def start(self) -> None:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        assert wait_for(self._up, 60), self.log.read_text()[-2000:]
        self.dealer = DealerClient(self.sock, lambda _cmd: None)
        self.dealer.connect(30, lambda: self.proc is not None and self.proc.poll() is None, lambda: None)

    def _up(self) -> bool:
        try:
            return bool(self.state().get("state"))  # idle, or the hand the replay resumed
        except OSError:
            return False

    def stop(self) -> None:
        if self.dealer is not None:
            self.dealer.down()
            self.dealer.wait_reader(1.0)
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            assert self.proc.wait(30) == 0, self.log.read_text()[-2000:]

    def http(self, method: str, path: str, body: Any = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            return json.loads(resp.read())

    def state(self) -> dict[str, Any]:
        return self.http("GET", "/state")  # type: ignore[no-any-return]

    def tap(self, action: str, seat: int | None = None, **args: Any) -> dict[str, Any]:
        """An input on the page; its answer (the reply carrying its ref)."""
        ref = self.http("POST", "/input", {"action": action, "seat": seat, "args": args})["ref"]
        assert wait_for(lambda: (self.state().get("reply") or {}).get("ref") == ref, 20)
        return self.state()["reply"]  # type: ignore[no-any-return]

    def port_input(self, action: DealerAction, seat: int | None = None) -> None:
        """An input on the dealer port (no ref: the machine answers it with no reply)."""
        assert self.dealer is not None
        before = len(self.state()["alerts"])
        self.dealer.post(DealerInput(action, seat, {}))
        assert wait_for(lambda: len(self.state()["alerts"]) > before, 20)

    def close(self) -> None:
        self.stop()
        self.shoe.close()


def bands(state: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(a["code"], a["message"], a["seat"], a.get("latched")) for a in state["alerts"]]


def refusals(state: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [b for b in bands(state) if b[0] in REFUSED_CODES]


def refusals_shown(state: dict[str, Any]) -> list[dict[str, Any]]:
    return [a for a in state["alerts"] if a["code"] in REFUSED_CODES]


def stops_shown(state: dict[str, Any]) -> list[dict[str, Any]]:
    return [a for a in state["alerts"] if a.get("latched")]


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    s = Service(tmp_path)
    try:
        s.start()
        yield s
    finally:
        s.close()


def test_a_restart_shows_the_alerts_and_words_the_dealer_saw(service: Service) -> None:
    # a hand ended by a misdeal, then an undo: refused, the answer on the page only
    assert service.tap("new-hand", seats=[1, 2, 3, 4])["refused"] is False
    # the hand running (its shoe's counter reset confirmed) before it is declared a misdeal
    assert wait_for(lambda: (service.state().get("instruction") or {}).get("signal") == "deal", 20), \
        service.state()
    assert service.tap("misdeal", confirm=True)["refused"] is False
    undo_said = service.tap("undo")["alerts"]
    assert "misdeal" in undo_said[0]["message"], undo_said
    assert service.tap("fold", 3)["refused"] and service.tap("betting-complete")["refused"]
    assert refusals(service.state()) == [], "a refusal answering the page's input is its answer, not a band"
    at_stop = bands(service.state())
    assert [b[0] for b in at_stop] == ["misdeal"]  # the misdeal's own notice, on the NO HAND screen
    service.stop()
    service.start()
    assert refusals(service.state()) == [], "the refusals answered on the page came back as bands"
    assert bands(service.state()) == at_stop, "the notice of the event that ended the hand was lost"
    assert service.tap("undo")["alerts"] == undo_said, "an undo after the restart is refused in other words"

    # inputs on the dealer port (no answer on the page): bands; one acknowledged on the page
    service.port_input(DealerAction.FOLD, 5)
    service.port_input(DealerAction.ALL_IN, 6)
    shown = [a for a in service.state()["alerts"] if a["code"] == "input-wrong-time"]
    assert [a["seat"] for a in shown] == [5, 6]
    assert service.http("POST", "/ack", {"id": shown[0]["id"]})  # that alert, not the other of its code
    assert service.tap("betting-complete")["refused"]  # answered: the acknowledgement before it was handled
    assert [a["seat"] for a in refusals_shown(service.state())] == [6]
    service.port_input(DealerAction.FOLD, 7)
    before = bands(service.state())
    undo_before = service.tap("undo")["alerts"]
    service.stop()
    service.start()
    assert bands(service.state()) == before
    assert service.tap("undo")["alerts"] == undo_before
    time.sleep(0.2)
    assert bands(service.state()) == before, "the page's undo after the restart added a band"


@pytest.mark.parametrize("rules", ["tda", "house"])
def test_acknowledging_one_stop_leaves_the_other_of_its_code_up_across_a_restart(tmp_path: Path, rules: str) -> None:
    """Two ``duplicate-card`` STOPs (pulls 2 and 3 copy a card dealt before, to seats 2 and 3):
    the dealer acknowledges one on the display; the other, of the same code, stays up and the
    dealer stays stopped, live and after a restart (the journal's record of the acknowledgement
    names that alert, not its code). Before, the one acknowledgement cleared both and the hand
    moved on under an open STOP."""
    service = Service(tmp_path, rules=rules, faults="duplicate-at=2:3")
    try:
        service.start()
        started = service.tap("new-hand", seats=[1, 2, 3, 4])
        assert started["refused"] is False, started
        # pulled once the hand asks for its first card (the shoe's counter reset confirmed)
        assert wait_for(lambda: (service.state().get("instruction") or {}).get("signal") == "deal", 20), \
            service.state()
        for _ in range(3):
            service.shoe.pull()
        assert wait_for(lambda: len(stops_shown(service.state())) == 2, 20), service.state()["alerts"]
        first, second = stops_shown(service.state())
        assert first["code"] == second["code"] == "duplicate-card" and first["seat"] != second["seat"]
        assert service.http("POST", "/ack", {"id": second["id"]})  # the newer one first
        assert service.tap("betting-complete")["refused"]  # handled after the acknowledgement
        assert [a["seat"] for a in stops_shown(service.state())] == [first["seat"]]
        assert service.state()["instruction"]["signal"] == "stop"
        at_stop = bands(service.state())
        service.stop()
        service.start()
        # the display may answer before the replayed hand reaches it: wait for the hand, then compare
        assert wait_for(lambda: service.state().get("hand") is not None, 20)
        assert wait_for(lambda: bands(service.state()) == at_stop, 20), "the restart changed which STOP is up"
        assert service.state()["instruction"]["signal"] == "stop"
        (left,) = stops_shown(service.state())
        assert service.http("POST", "/ack", {"ids": [left["id"]]})  # the band's button, after the restart
        assert wait_for(lambda: stops_shown(service.state()) == [], 20)
        assert service.tap("betting-complete")
        assert service.state()["instruction"]["signal"] != "stop"
        after = bands(service.state())
        service.stop()
        service.start()
        assert wait_for(lambda: service.state().get("hand") is not None, 20)
        assert wait_for(lambda: bands(service.state()) == after, 20), "an acknowledged STOP came back"
    finally:
        service.close()

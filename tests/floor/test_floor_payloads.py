"""The floor's payloads and configuration without a broker: the whitelists of
``shoe_ctl.floor.topics`` (no card of a journal record, no downcard of a state even at
showdown), the severities, topic names, ``[floor]`` parsing and the credentials file's mode."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from paths import ROOT

from shoe_ctl.cli import main
from shoe_ctl.config import ConfigError, load_table_config
from shoe_ctl.events import Alert, CardRead, DealerAction, DealerInput, ForeignCard, ForeignWhat, StubDeck
from shoe_ctl.floor.broker import acl_text
from shoe_ctl.floor.config import (
    Credentials,
    check_credentials_file,
    doctor_floor,
    load_credentials,
    load_floor_config,
    parse_floor,
    write_credentials,
)
from shoe_ctl.floor.topics import Topics, event_payload, floor_state, severity
from shoe_ctl.rules.cards import parse_card
from shoe_ctl.service import codec


@dataclass
class Rec:
    seq: int
    time_us: int
    kind: str
    hand: int | None
    body: str


def test_card_reads_and_alerts_publish_no_card() -> None:
    read = CardRead(7, parse_card("As"), "rfid", 12, 3)
    p = event_payload(Rec(5, 1_000, "CardRead", 2, codec.dumps(read)), table="t1", session=4)
    assert p == {"v": 1, "table": "t1", "session": 4, "seq": 5, "time_us": 1_000, "hand": 2, "kind": "CardRead",
                 "dispense": 12, "epoch": 3, "reader": "rfid", "readable": True}
    alert = Alert("RP-10-H-C", "community card: deal Kd face up (seat 3 holds Qs)", "7th", 3, latched=True,
                  moves=("seat 3 down -> muck",))
    p = event_payload(Rec(6, 2_000, "Alert", 2, codec.dumps(alert)), table="t1", session=4)
    assert "Kd" not in json.dumps(p) and "Qs" not in json.dumps(p) and "??" in p["message"]
    assert p["severity"] == "critical" and p["moves"] == ["seat 3 down -> muck"]
    inp = DealerInput(DealerAction.FOLD, 3, {"ref": 9, "note": "Ah"})
    p = event_payload(Rec(7, 3_000, "DealerInput", 2, codec.dumps(inp)), table="t1", session=4)
    assert p["action"] == "fold" and p["seat"] == 3 and "args" not in p
    summary = {"seats": [{"down": ["2c", "3d"], "up": ["4h"]}], "hand": 2}
    p = event_payload(Rec(8, 4_000, "hand-end", 2, json.dumps(summary)), table="t1", session=4)
    assert set(p) == {"v", "table", "session", "seq", "time_us", "hand", "kind", "abandoned"}
    p = event_payload(Rec(9, 5_000, "decision", 2, json.dumps({"cards": ["2c"]})), table="t1", session=4)
    assert "2c" not in json.dumps(p)


def test_floor_state_drops_downcards_even_at_showdown() -> None:
    raw = {"hand": 3, "state": "hand_showdown", "street": "showdown", "community": None,
           "seats": [{"seat": 1, "status": "live", "up": ["Qh", "Qs", "4d", "2h"], "down": ["Ac", "Ad", "7s"]},
                     {"seat": 2, "status": "folded", "up": ["5c"], "down": ["9h", "9d"]}],
           "stub": {"count": 20, "required": 10, "forecast": None},
           "instruction": {"signal": "showdown", "text": "Seat 1 shows Ac Ad 7s"},
           "alerts": [{"id": 1, "code": "RP-10-F", "message": "pair Ac", "seat": 1, "latched": False}],
           "shoe": {"status": "connected", "detail": ""}}
    out = floor_state(raw)
    text = json.dumps(out)
    for card in ("Ac", "Ad", "7s", "9h", "9d"):
        assert card not in text
    assert out["seats"][0]["up"] == ["Qh", "Qs", "4d", "2h"] and "down" not in out["seats"][0]
    assert out["stub"] == {"count": 20, "required": 10, "forecast": None}
    assert out["alerts"] == [{"code": "RP-10-F", "seat": 1, "latched": False}]
    assert out["instruction"]["text"] == "Seat 1 shows ?? ?? ??"


def test_severity_and_topics() -> None:
    assert severity("anything", True) == "critical"
    assert severity("shoe-jam", False) == "critical"
    assert severity("input-wrong-time", False) == "info"
    assert severity("RP-10-H-C", False) == "info"  # routine: shown on the floor, not queued
    assert severity("house-16.2", False) == "warning"
    t = Topics("room-1", "t7")
    assert (t.state, t.events, t.replay) == ("room-1/tables/t7/state", "room-1/tables/t7/events",
                                             "room-1/tables/t7/replay")
    assert Topics.parse(t.alerts) == ("room-1", "t7", "alerts") and Topics.parse("room-1/x") is None
    for bad in ("a/b", "+", "#", "", "a b"):
        with pytest.raises(ValueError):
            Topics("room-1", bad)
    acl = acl_text("room-1")
    assert "pattern write room-1/tables/%u/events" in acl and "pattern read room-1/tables/%u/replay" in acl
    assert "topic write room-1/tables/+/replay" in acl and "pattern write room-1/tables/%u/replay" not in acl


def test_floor_config(tmp_path: Path) -> None:
    shipped = ROOT / "config" / "table.toml"
    assert load_table_config(shipped).table  # the table config accepts its [floor]
    cfg = load_floor_config(shipped)
    assert cfg.enabled is False and cfg.host_port_tls == ("127.0.0.1", 1883, False)
    tls = parse_floor("f", {"enabled": True, "broker": "mqtts://floor.example", "room": "r2"})
    assert tls.host_port_tls == ("floor.example", 8883, True)
    for bad, key in (({"broker": "http://x"}, "floor.broker"), ({"room": "a/b"}, "floor.room"),
                     ({"keepalive": 1}, "floor.keepalive"), ({"enabled": "yes"}, "floor.enabled"),
                     ({"colour": 1}, "floor.colour")):
        with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
            parse_floor("f", bad)


def test_credentials_file_mode_and_doctor(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    creds = write_credentials(tmp_path / "floor.credentials", Credentials("t1", "s3cret"))
    assert oct(creds.stat().st_mode & 0o777) == "0o600"
    assert check_credentials_file(creds) is None
    assert load_credentials(creds) == Credentials("t1", "s3cret")
    assert "s3cret" not in repr(load_credentials(creds))
    cfg = tmp_path / "table.toml"
    cfg.write_text(f'[floor]\nenabled = true\ncredentials = "{creds}"\n')
    assert doctor_floor(cfg)[0] == "ok"
    os.chmod(creds, 0o644)
    status, detail, fix = doctor_floor(cfg)
    assert status == "fail" and "0644" in detail and "chmod 600" in fix
    with pytest.raises(ConfigError, match="0644"):
        load_credentials(creds)
    assert main(["doctor", "--config", str(cfg), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    floor = {c["name"]: c for c in report["checks"]}["floor"]
    assert floor["status"] == "fail" and "0644" in floor["detail"]
    cfg.write_text("[floor]\nenabled = true\n")
    assert doctor_floor(cfg)[0] == "fail"
    cfg.write_text("")
    assert doctor_floor(cfg)[0] == "skip"


def test_a_published_recall_is_kept_within_bounds() -> None:
    from shoe_ctl.floor.consumer import _bounded_recall

    assert _bounded_recall("x") == [] and _bounded_recall([1, {"entries": 3}]) == []
    huge = [{"hand": i, "started": "x" * 500, "entries": [{"kind": "card", "card": "??", "nested": {"a": 1}}] * 5000}
            for i in range(50)]
    kept = _bounded_recall(huge)
    assert [h["hand"] for h in kept] == list(range(40, 50))
    assert all(len(h["entries"]) == 600 and len(h["started"]) == 40 for h in kept)
    assert kept[0]["entries"][0] == {"kind": "card", "card": "??"}  # nothing nested kept


def test_a_foreign_card_publishes_its_decks_never_its_tag_or_card() -> None:
    """docs/floor.md: a deck id is public; the tag and the card of a foreign card are not, in
    its own record or in its STOP's text."""
    ev = ForeignCard(41, ForeignWhat.OTHER_DECK, "04b20001c0ffee", parse_card("9c"), "D12", "D17")
    p = event_payload(Rec(5, 1_000, "ForeignCard", 2, codec.dumps(ev)), table="t1", session=4)
    assert {k: p[k] for k in ("what", "deck", "stub")} == {"what": "other-deck", "deck": "D12", "stub": "D17"}
    assert "04b20001" not in json.dumps(p) and "9c" not in json.dumps(p)
    alert = Alert("foreign-card-other-deck-floor", f"read 40: {ev.describe()}. STOP", "3rd", None, latched=True)
    p = event_payload(Rec(6, 2_000, "Alert", 2, codec.dumps(alert)), table="t1", session=4)
    assert "04b20001" not in p["message"] and "9c" not in p["message"] and "deck D12" in p["message"]
    assert p["severity"] == "critical"
    p = event_payload(Rec(7, 3_000, "StubDeck", 2, codec.dumps(StubDeck(3, "D17"))), table="t1", session=4)
    assert (p["kind"], p["epoch"], p["deck"]) == ("StubDeck", 3, "D17")

"""The floor's copy of the recall (the ``recall`` topic): each hand redacted by itself
(``shoe_ctl.floor.topics.recall_hand``: no downcard, burn or card set aside named, no card in a
text but that hand's face-up ones), and the publisher's message the same as the whole payload
made again while only the hands that changed are made again (docs/floor.md, "Topics")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from journal_growth import deal_examples

from shoe_ctl.embargo import CARD_TOKEN
from shoe_ctl.export import default_machine_factory
from shoe_ctl.floor import publisher as floor_publisher
from shoe_ctl.floor.publisher import FloorPublisher
from shoe_ctl.floor.topics import dumps, recall_hand
from shoe_ctl.recall import HIDDEN_ROLES, Recall
from shoe_ctl.service.journal import Journal


def _hand(number: int, entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {"hand": number, "game": "stud", "rules": "tda", "seats": [1, 2], "started": "10:00:00.000Z",
            "finished": False, "entries": entries, "more": 0}


def test_a_hand_is_redacted_by_its_own_face_up_cards() -> None:
    first = _hand(1, [{"t": "x", "kind": "card", "street": "third", "role": "up", "seat": 1, "card": "Kh"},
                      {"t": "x", "kind": "card", "street": "third", "role": "down", "seat": 2, "card": "As"},
                      {"t": "x", "kind": "alert", "code": "c", "message": "Kh and As, tag 04a1b2c3d4", "latched": False}])
    second = _hand(2, [{"t": "x", "kind": "card", "street": "third", "role": "down", "seat": 1, "card": "Kh"},
                       {"t": "x", "kind": "alert", "code": "c", "message": "seat 1 has Kh", "latched": True}])
    one, two = recall_hand(first), recall_hand(second)
    assert [e.get("card") for e in one["entries"]] == ["Kh", "??", None]
    assert one["entries"][2]["message"] == "Kh and ??, tag ??"  # its upcard stays, its downcard and the tag go
    # face up in the hand before, face down in this one: not public here
    assert [e.get("card") for e in two["entries"]] == ["??", None] and two["entries"][1]["message"] == "seat 1 has ??"
    assert first["entries"][1]["card"] == "As"  # the recall's own hands are not changed


def test_the_published_recall_is_made_again_only_for_the_hands_that_changed(tmp_path: Path, monkeypatch: Any) -> None:
    journal = Journal(tmp_path / "t.journal", table="t1", profile="tda")
    made: list[int] = []

    def counted(hand: dict[str, Any]) -> dict[str, Any]:
        made.append(hand["hand"])
        return recall_hand(hand)

    monkeypatch.setattr(floor_publisher, "recall_hand", counted)
    pub = FloorPublisher(journal, table="t1", room="room-1", host="127.0.0.1", port=1)
    try:
        _recorder, records = deal_examples(journal, 3)
        every = records.every
        recall = Recall(records, default_machine_factory, lambda: "tda")
        calls = 0
        for records.upto in range(every[0].seq, every[-1].seq + 1, 17):
            hands = recall()
            made.clear()
            data = pub._recall_payload(hands)
            got = json.loads(data)
            whole = {"v": 1, "table": "t1", "time_us": got["time_us"], "hands": [recall_hand(h) for h in hands]}
            assert data == dumps(whole)  # byte for byte the payload made whole
            assert len(made) <= 2, made  # the hand in progress and the one just ended, not every hand
            for h in got["hands"]:
                face_up = {e["card"] for e in h["entries"] if e["kind"] == "card" and e["role"] not in HIDDEN_ROLES}
                assert all(e["card"] == "??" for e in h["entries"] if e["kind"] == "card" and e["role"] in HIDDEN_ROLES)
                named = {m for e in h["entries"] for v in e.values() if isinstance(v, str)
                         for m in CARD_TOKEN.findall(v)}
                assert named <= face_up, (h["hand"], named - face_up)
            calls += 1
        assert calls > 20 and len(got["hands"]) >= 8
    finally:
        journal.close()

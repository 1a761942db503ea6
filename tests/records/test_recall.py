"""Recall from the journal (shoe_ctl/recall.py, docs/compliance.md "Recall"): of 15 dealt hands the
last 10, each card placed where the table placed it with the time, the inputs and the alerts; the
public view hides every downcard and burn and nothing else."""

from __future__ import annotations

from pathlib import Path

from paths import EXAMPLES
from rule_profiles import PROFILES

from hil.replay import run_full, script_from_record
from shoe_ctl.export import default_machine_factory, export_hands
from shoe_ctl.phh import read_phh
from shoe_ctl.recall import HIDDEN_ROLES, public, recall_hands
from shoe_ctl.service.journal import Journal


def test_the_last_ten_of_fifteen_hands(tmp_path: Path) -> None:
    files = sorted(EXAMPLES.glob("*.phh")) * 5
    journal = Journal(tmp_path / "t.journal", table="t1", profile="tda")
    try:
        recorder, _dealer = run_full([script_from_record(read_phh(f), seed=i) for i, f in enumerate(files)],
                                     PROFILES, journal=journal)
        hands = recall_hands(journal.records, default_machine_factory, "tda")
        assert len(hands) == 10 and all(h["finished"] for h in hands)
        numbers = [h["hand"] for h in hands]  # (this journal has no hand marks: counted from the replay's start)
        assert numbers == list(range(numbers[0], numbers[0] + 10))
        # the same cards, in the same places, as the full replay of the export (the journal's promise)
        exported = export_hands(journal, tmp_path / "out")[-10:]
        for h, path in zip(hands, exported, strict=True):
            text = path.read_text()
            cards = [e for e in h["entries"] if e["kind"] == "card"]
            assert len(cards) >= 3 * len(h["seats"])
            assert all(e["card"] in text for e in cards if e["role"] in ("up", "down"))
            assert [e["action"] for e in h["entries"] if e["kind"] == "input"][0] == "new-hand"
            assert all(e["t"].endswith("Z") for e in h["entries"])
        assert any(e["kind"] == "alert" for h in hands for e in h["entries"])
        shown = public(hands)
        for full, pub in zip(hands, shown, strict=True):
            for a, b in zip(full["entries"], pub["entries"], strict=True):
                hidden = a["kind"] == "card" and a["role"] in HIDDEN_ROLES
                assert b == ({**a, "card": "??"} if hidden else a)
        assert len(recorder.hands) == 15
    finally:
        journal.close()

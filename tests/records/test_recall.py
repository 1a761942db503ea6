"""Recall from the journal (shoe_ctl/recall.py, docs/compliance.md "Recall"): of 15 dealt hands the
last 10, each card placed where the table placed it with the time, the inputs and the alerts; the
public view hides every downcard and burn and nothing else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from journal_growth import deal_examples
from paths import EXAMPLES
from rule_profiles import PROFILES
from waiting import wait_for

from hil.replay import run_full, script_from_record
from shoe_ctl.export import default_machine_factory, export_hands
from shoe_ctl.phh import read_phh
from shoe_ctl.recall import HIDDEN_ROLES, RECALL_HANDS, Recall, public, recall_hands
from shoe_ctl.service import codec
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


def test_the_kept_recall_replays_each_record_once_and_gives_what_a_new_replay_gives(tmp_path: Path) -> None:
    """:class:`Recall` at every step of a growing journal: the same hands as :func:`recall_hands`
    of the journal so far, while each record is replayed once over all the calls."""
    journal = Journal(tmp_path / "t.journal", table="t1", profile="tda")
    try:
        _recorder, records = deal_examples(journal, 4)
        every = records.every

        made: list[Any] = []

        def machine(profile: str) -> Any:
            made.append(default_machine_factory(profile))
            return made[-1]

        kept = Recall(records, machine, lambda: "tda")
        compared = 0
        for records.upto in range(every[0].seq, every[-1].seq + 1, 23):
            got, fresh = kept(), recall_hands(records, default_machine_factory, "tda")
            started = sum(1 for r in records(None) if r.kind == "DealerInput" and '"new-hand"' in r.body)
            if started < RECALL_HANDS + 3:  # a new replay starts at the journal's start too: the same numbers
                assert got == fresh
            else:  # it starts a few hands back and numbers the hands from there (this journal has no marks)
                assert [{**h, "hand": 0} for h in got] == [{**h, "hand": 0} for h in fresh]
            compared += 1
        records.upto = every[-1].seq
        assert kept() == kept()  # nothing new: the same hands again, each call its own copy
        assert kept.replayed == len(every)  # each record replayed once, over every call
        assert compared > 20 and len(kept()) == RECALL_HANDS
        assert len(made) == 1 and made[0].display is False  # one machine, building no public view
    finally:
        journal.close()


def test_the_kept_recall_replays_the_committed_records_it_is_handed_without_reading_them(tmp_path: Path) -> None:
    """Given each commit's records (``Recall.committed``, a commit listener), the kept recall
    replays them instead of reading the journal, and gives what a new replay gives; records not
    handed over (a commit missed) are read from the journal once the next commit's records do not
    follow the last one replayed, and a call with nothing handed over since reads nothing."""
    journal = Journal(tmp_path / "t.journal", table="t1", profile="tda")
    try:
        _recorder, records = deal_examples(journal, 4)
        every = records.every
        kept = Recall(records, default_machine_factory, lambda: "tda")
        records.upto = every[0].seq + 40
        kept()  # the first call reads the journal: where the hands start, then the records
        first_reads = kept.reads
        compared = 0
        before: list[dict[str, Any]] = []
        for upto in range(records.upto + 19, every[-1].seq + 1, 19):
            if compared != 10:  # the 11th commit is not handed over: the call after the 12th reads
                kept.committed([r for r in every if records.upto < r.seq <= upto])
            records.upto = upto
            got, fresh = kept(), recall_hands(records, default_machine_factory, "tda")
            if compared == 10:  # nothing handed over since the call before: nothing read, nothing new
                assert got == before and kept.reads == first_reads
                assert kept() == before and kept.reads == first_reads
            else:
                assert [{**h, "hand": 0} for h in got] == [{**h, "hand": 0} for h in fresh]
                assert kept.reads == first_reads + (compared > 10)
            before = got
            compared += 1
        assert compared > 20 and kept.replayed == records.upto - every[0].seq + 1  # each record once
        assert kept() == before and kept.reads == first_reads + 1  # nothing new: nothing read
    finally:
        journal.close()


def test_the_kept_recall_on_a_dealing_table_replays_the_events_handed_over(tmp_path: Path) -> None:
    """On a table that deals (the controller journaling every event), the kept recall called now
    and then from a sink takes each commit's records with their events already decoded
    (``Record.given``) and, at the end, gives what a new replay of the journal gives. Only its
    first call reads the journal, and a call before any commit was handed over: whether the
    writer committed between two calls (it waits a few ms for company) changes nothing."""
    journal = Journal(tmp_path / "t.journal", table="t1", profile="tda")
    kept = Recall(journal.records, default_machine_factory, lambda: "tda")
    handed: list[Any] = []
    journal.add_commit_listener(kept.committed)
    journal.add_commit_listener(handed.extend)  # after the recall's: what it holds, the recall has
    calls = [0]
    looks: list[tuple[bool, int]] = []  # each call: anything handed over before it, the reads it made

    class Recalling:
        def handle(self, _cmd: Any) -> None:
            calls[0] += 1
            if calls[0] % 25 == 0:
                was_handed, reads = bool(handed), kept.reads
                kept()
                looks.append((was_handed, kept.reads - reads))

    try:
        files = sorted(EXAMPLES.glob("*.phh")) * 2
        run_full([script_from_record(read_phh(f), seed=i) for i, f in enumerate(files)], PROFILES,
                 journal=journal, sinks=[Recalling()])
        assert journal.flush(5)
        last = list(journal.records(None))[-1].seq
        assert wait_for(lambda: bool(handed) and handed[-1].seq == last, 10)  # the writer hands a commit over after it
        coded = [r for r in handed if r.kind in codec.TYPES]
        assert coded and all(r.given is not None and r.given == codec.loads(r.body) for r in coded)
        got, fresh = kept(), recall_hands(journal.records, default_machine_factory, "tda")
        assert [{**h, "hand": 0} for h in got] == [{**h, "hand": 0} for h in fresh]
        assert calls[0] > 100 and looks[0][1] == 2, looks  # the first call: where the hands start, the records
        later = [reads for was_handed, reads in looks[1:] if was_handed]
        assert len(later) > 3 and not any(later), looks  # the rest came handed over, or nothing was new
        assert kept.reads == sum(reads for _, reads in looks)  # the last call read nothing
    finally:
        journal.close()


def test_the_public_view_names_in_its_texts_only_the_hands_face_up_cards() -> None:
    """An alert's words are whatever made it (a shoe's fault detail is any text the shoe sends):
    the public recall writes ``??`` for every card they name that is not face up in that hand, as
    the display's filter does for the same alert on the screen; the full view keeps them."""
    hand = {"hand": 3, "entries": [
        {"t": "t", "kind": "card", "street": "3rd", "role": "down", "seat": 1, "card": "Kd"},
        {"t": "t", "kind": "card", "street": "3rd", "role": "up", "seat": 1, "card": "7s"},
        {"t": "t", "kind": "card", "street": "4th", "role": "burn", "seat": None, "card": "2c"},
        {"t": "t", "kind": "alert", "code": "shoe-misread", "message": "misread Kd at seat 1 (7s shown, 2c burned)",
         "latched": False},
        {"t": "t", "kind": "input", "action": "fold", "seat": 2, "by": "display:127.0.0.1"},
    ]}
    [shown] = public([hand])
    assert shown["entries"][3]["message"] == "misread ?? at seat 1 (7s shown, ?? burned)"
    assert shown["entries"][4] == hand["entries"][4]
    assert hand["entries"][3]["message"] == "misread Kd at seat 1 (7s shown, 2c burned)"  # the full view, unchanged

"""PHH export of journaled hands: parses with tomllib, the project's PHH reader and pokerkit."""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from journal_table import DECK, Table, play_hand

from shoe_ctl import events as E
from shoe_ctl.cli import main
from shoe_ctl.export import default_machine_factory, export_hands, replay_hands
from shoe_ctl.phh import parse_phh
from shoe_ctl.rules.cards import Card


def test_exported_hand_parses_everywhere(tmp_path: Path, journal_table: Callable[..., Table]) -> None:
    t = journal_table()
    play_hand(t)
    t.post(E.CardRead(99, Card.parse("Ah"), "rfid", 17))  # between hands: set aside, not exported
    t.inp(E.DealerAction.ACK_ALERT)  # its STOP is acknowledged before the next hand (it blocks one)
    play_hand(t, finish=False)  # unfinished: not exported
    files = export_hands(t.journal, tmp_path / "out")
    assert [f.name for f in files] == ["t9-hand-1.phh"]
    text = files[0].read_text()
    data = tomllib.loads(text)
    assert data["variant"] == "F7S"
    assert data["seats"] == [2, 5, 7] and data["players"] == ["P1", "P2", "P3"]
    assert data["antes"] == [1, 1, 1] and data["starting_stacks"] == [100, 80, 60]
    assert "_amounts" not in data
    # the cards went where the machine put them: 3rd round-robin, burn, 4th, fold, burn, 5th
    # with the betting's opening as the machine signalled it: P3's bring-in post, P1 first on 4th
    # (P1 first on 5th too: its own fold opens that round)
    assert data["actions"] == [
        "d dh p1 As7hQs", "d dh p2 Kd8hJd", "d dh p3 2c9s3c",
        "p3 pb",
        "d dh p1 4d", "d dh p2 5d", "d dh p3 6d",
        "p1 cc", "p2 f",
        "d dh p1 8c", "d dh p3 9c",
        "p1 f",
    ]
    assert data["_burns"] == ["4th Tc", "5th 7c"]
    assert data["_bring_in"] == 3 and data["_rules"] == "tda"
    assert "7th" not in " ".join(data["_procedures"]) and "3rd normal" in data["_procedures"]
    # the acknowledgement of the stray card's STOP after the hand is kept with the hand's inputs
    assert data["_inputs"] == ["4 betting-complete", "9 betting-complete", "12 hand-complete", "12 ack-alert"]
    assert data["_journal"][0] < data["_journal"][1]

    # the project's own PHH reader
    hand = parse_phh(text, "export")
    assert hand.variant == "F7S" and len(hand.players) == 3
    assert [list(map(str, c)) for c in hand.cards] == [["As", "7h", "Qs", "4d", "8c"], ["Kd", "8h", "Jd", "5d"],
                                                        ["2c", "9s", "3c", "6d", "9c"]]
    assert [a.player for a in hand.actions if a.kind == "f"] == [1, 0]
    assert [(a.kind, a.player) for a in hand.actions if a.kind in ("pb", "cc")] == [("pb", 2), ("cc", 0)]

    # pokerkit reads the file (user-defined fields kept) and deals its 3rd street
    pokerkit = pytest.importorskip("pokerkit")
    hh = pokerkit.HandHistory.loads(text)
    assert list(hh.seats) == [2, 5, 7]
    assert hh.user_defined_fields["_burns"] == ["4th Tc", "5th 7c"]
    states = 0
    with pytest.raises(ValueError):  # only the openings are recorded: pokerkit stops after the bring-in
        for _state in hh:
            states += 1
    assert states >= 1 + 3 + 1  # the initial state, every 3rd-street deal line, the bring-in post


def test_placeholders_and_alerts(tmp_path: Path, journal_table: Callable[..., Table]) -> None:
    t = journal_table()
    t.inp(E.DealerAction.NEW_HAND, seats=[1, 3], game="razz", rules="tda")
    t.cards(6)
    t.post(E.CardRead(50, DECK[10], "rfid", 7))  # a card while betting: not expected
    t.inp(E.DealerAction.FOLD, 3)
    t.inp(E.DealerAction.ACK_ALERT)  # the STOP holds the hand until acknowledged
    t.inp(E.DealerAction.HAND_COMPLETE)
    (f,) = export_hands(t.journal, tmp_path)
    data = tomllib.loads(f.read_text())
    assert data["variant"] == "FR" and data["_amounts"] == "placeholder"
    assert data["_set_aside"] == [f"3rd {DECK[10]}"]
    assert any(a.startswith("card-not-expected") for a in data["_alerts"])
    assert parse_phh(f.read_text(), "export").game.value == "razz"


def test_cli_export(tmp_path: Path, capsys: pytest.CaptureFixture[str], journal_table: Callable[..., Table]) -> None:
    t = journal_table()
    play_hand(t)
    play_hand(t)
    t.journal.close()
    assert main(["export", str(tmp_path / "t.journal"), "--hand", "2", "--out", str(tmp_path / "o")]) == 0
    assert capsys.readouterr().out.strip().endswith("t9-hand-2.phh")
    assert [p.name for p in (tmp_path / "o").iterdir()] == ["t9-hand-2.phh"]
    assert main(["export", str(tmp_path / "t.journal"), "--hand", "7", "--out", str(tmp_path / "o")]) == 1
    assert "no finished hand 7" in capsys.readouterr().err
    assert main(["export", str(tmp_path / "missing.journal")]) == 2


def test_replay_hands_reports_unfinished(journal_table: Callable[..., Table]) -> None:
    t = journal_table()
    play_hand(t, finish=False)
    hands = list(replay_hands(t.journal, default_machine_factory))
    assert [(h.number, h.finished) for h in hands] == [(1, False)]


def test_hand_numbers_come_from_the_journal(tmp_path: Path, journal_table: Callable[..., Table]) -> None:
    t = journal_table(marks=True)
    t.journal.begin_hand(hand=40)  # hands before this journal's window
    t.journal.end_hand()
    play_hand(t)
    play_hand(t)
    assert [h.hand for h in t.journal.hands(finished_only=True)] == [40, 41, 42]
    files = export_hands(t.journal, tmp_path / "out")
    assert [f.name for f in files] == ["t9-hand-41.phh", "t9-hand-42.phh"]
    assert tomllib.loads(files[1].read_text())["hand"] == 42


def test_the_deck_each_hand_is_dealt_from_is_exported(tmp_path: Path, journal_table: Callable[..., Table]) -> None:
    """The shoe's StubDeck (docs/protocol.md section 16), journaled inside the hand, is the
    exported hand's ``_decks``; a hand the shoe named no deck for has none."""
    t = journal_table()
    t.inp(E.DealerAction.NEW_HAND, seats=[2, 5, 7], game="stud", rules="tda")
    t.cards(1)
    t.post(E.StubDeck(1, "red-1"))
    t.cards(8)
    t.inp(E.DealerAction.FOLD, 5)
    t.inp(E.DealerAction.FOLD, 7)
    t.inp(E.DealerAction.HAND_COMPLETE)
    play_hand(t)
    first, second = export_hands(t.journal, tmp_path)
    assert tomllib.loads(first.read_text())["_decks"] == ["red-1"]
    assert "_decks" not in tomllib.loads(second.read_text())


def test_a_hand_number_met_again_is_written_beside_the_first_and_named(
        tmp_path: Path, journal_table: Callable[..., Table], capsys: pytest.CaptureFixture[str]) -> None:
    """A journal written before hand numbers ran on across restarts (each run numbered its hands
    from 1): no hand is written over another's file, and each repeat is named."""
    t = journal_table(marks=True)
    play_hand(t)
    play_hand(t)
    t.journal.store.top_hand = 0  # the older numbering: the next run starts again at hand 1
    play_hand(t)
    replayed = list(replay_hands(t.journal, default_machine_factory))
    assert [h.number for h in replayed] == [1, 2, 1]
    again = replayed[2]
    repeated: list[str] = []
    files = export_hands(t.journal, tmp_path / "out", repeated=repeated)
    assert [f.name for f in files] == ["t9-hand-1.phh", "t9-hand-2.phh", f"t9-hand-1-at-{again.first_seq}.phh"]
    assert len({f.read_text() for f in files}) == 3
    assert repeated == [f"hand 1 at record {again.first_seq} (also at record 1): written as {files[2].name}"]
    path = t.journal.path
    t.journal.close()
    capsys.readouterr()
    assert main(["export", str(path), "--out", str(tmp_path / "cli")]) == 1
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 3 and f"hand number repeated: hand 1 at record {again.first_seq}" in err
    assert main(["export", str(path), "--out", str(tmp_path / "one"), "--hand", "1"]) == 1
    assert sorted(p.name for p in (tmp_path / "one").iterdir()) == sorted([files[0].name, files[2].name])


def test_the_journal_refuses_a_hand_number_that_is_not_above_its_last(
        journal_table: Callable[..., Table]) -> None:
    from shoe_ctl.service.journal import JournalError

    t = journal_table(marks=True)
    play_hand(t)
    with pytest.raises(JournalError, match="hand 1 is not above the journal's last hand 1"):
        t.journal.begin_hand(hand=1)
    assert t.journal.begin_hand() == 2

"""``shoe-ctl deck enrol|list|retire``: a deck enrolled through the virtual PN532 on its pty and
Adafruit's real driver, sealed under the paired shoe's secret and journaled; bad input named."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from journal_owner import Owner

from drivers.shoe_fw import deckmap
from hil.virtual_pn532 import Tag, VirtualReader
from shoe_ctl.cli import deck as deck_cli
from shoe_ctl.cli import main
from shoe_ctl.config import load_table_config
from shoe_ctl.service.journal import Journal
from shoe_ctl.service.shoe_secrets import SecretStore

SECRET = bytes(range(100, 132))


def uid(n: int, deck: int = 0) -> bytes:
    return bytes([0x04, 0x20 + deck, n, 0x11, 0x22, 0x33, 0x44])


@pytest.fixture
def table(tmp_path: Path) -> Path:
    SecretStore(tmp_path / "state" / "shoes").save("SH-1", SECRET)
    cfg = tmp_path / "table.toml"
    cfg.write_text(f'table = "T1"\n[shoe]\nurl = "/dev/ttyNOSHOE"\nserial = "SH-1"\n'
                   f'secrets = "{tmp_path / "state" / "shoes"}"\n[journal]\npath = "{tmp_path / "journal.db"}"\n')
    return cfg


def uids_file(tmp_path: Path, uids: list[bytes], name: str = "uids.txt") -> Path:
    path = tmp_path / name
    path.write_text("# deck as shipped\n" + "\n".join(u.hex() for u in uids) + "\n")
    return path


def journal_records(tmp_path: Path) -> list:
    with Journal(tmp_path / "journal.db", table=None, profile=None, readonly=True) as j:
        return [r for r in j.records() if r.kind.startswith("deck-")]


def test_enrol_through_the_virtual_pn532_then_list_and_retire(table: Path, tmp_path: Path, capsys,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # the virtual PN532's thread shares a loaded machine: 5 s for each answer, not a real chip's 0.5 s
    monkeypatch.setattr(deck_cli, "ENROL_TIMEOUT_S", 5.0)
    uids = [uid(n) for n in range(52)]
    with VirtualReader() as vr:
        def dealer() -> None:
            vr.wait_listings(3)  # the reader is up and scanning
            for u in uids:
                assert vr.pass_card(Tag(u))

        feeder = threading.Thread(target=dealer, daemon=True)
        feeder.start()
        status = main(["deck", "enrol", "red-1", "--config", str(table), "--reader", f"pn532:{vr.url}",
                       "--by", "ann", "--idle", "20"])
        feeder.join(30)
    out = capsys.readouterr()
    assert status == 0, out.err
    assert "  1 As  " + uids[0].hex() in out.out and " 52 Ah  " + uids[51].hex() in out.out
    path = tmp_path / "state" / "decks" / "red-1.json"
    dm = deckmap.parse(path.read_bytes(), deckmap.seal_key(SECRET), str(path))
    assert dm.by == "ann" and dm.code(uids[13]) == deckmap.card_code("Ad")
    records = journal_records(tmp_path)
    assert [r.kind for r in records] == ["deck-enrol"]
    body = records[0].data
    assert body["deck"] == "red-1" and body["by"] == "ann" and body["cards"] == 52
    assert body["source"].startswith("reader pn532:")

    assert main(["deck", "list", "--config", str(table)]) == 0
    assert "red-1  enrolled" in capsys.readouterr().out
    assert main(["deck", "retire", "red-1", "--config", str(table), "--by", "bob"]) == 0
    assert not path.exists() and len(list((path.parent / "retired").iterdir())) == 1
    assert [r.kind for r in journal_records(tmp_path)] == ["deck-enrol", "deck-retire"]


def test_a_reader_that_never_answers_is_named(table: Path, capsys) -> None:
    with VirtualReader() as vr:
        vr.fault("hang")
        status = main(["deck", "enrol", "red-1", "--config", str(table), "--reader", f"pn532:{vr.url}"])
    err = capsys.readouterr().err
    assert status == 1
    assert f"reader pn532:{vr.url}: pn532: wake-up: RuntimeError: Failed to detect the PN532" in err
    assert "not enrolled" in err


def test_enrol_from_a_uid_list_and_a_uid_of_a_live_deck_is_refused(table: Path, tmp_path: Path, capsys) -> None:
    first = [uid(n) for n in range(52)]
    assert main(["deck", "enrol", "A", "--config", str(table), "--uids", str(uids_file(tmp_path, first))]) == 0
    second = [uid(n, deck=1) for n in range(52)]
    second[7] = first[40]
    path = uids_file(tmp_path, second, "b.txt")
    assert main(["deck", "enrol", "B", "--config", str(table), "--uids", str(path)]) == 1
    err = capsys.readouterr().err
    assert "card 8 (8s): tag " + first[40].hex() + " is enrolled in live deck A" in err
    assert not (tmp_path / "state" / "decks" / "B.json").exists()


def test_a_journal_of_another_table_is_refused_before_any_card_and_named_once(table: Path, tmp_path: Path,
                                                                              capsys) -> None:
    """At the start, as a journal the service holds (was: after the 52 cards, 'deck A not
    enrolled: the journal did not keep the enrolment (...)')."""
    journal = tmp_path / "journal.db"
    Journal(journal, table="T9", profile=load_table_config(table).rules).close()
    before = journal.read_bytes()
    uids = uids_file(tmp_path, [uid(n) for n in range(52)])
    for argv in (["enrol", "A", "--uids", str(uids)], ["retire", "A"], ["check", "A", "--uids", str(uids)]):
        assert main(["deck", *argv, "--config", str(table)]) == 2, argv
        err = capsys.readouterr().err
        assert f"{journal} is the journal of table 'T9'" in err and err.rstrip().endswith("nothing was done"), err
        assert err.count(str(journal)) == 1, err
    assert not (tmp_path / "state" / "decks" / "A.json").exists()
    assert journal.read_bytes() == before
    journal.unlink()
    with Journal(journal, table="T1", profile=load_table_config(table).rules) as j:  # this table's
        for n in range(300):
            j.append_record("note", {"n": n, "pad": "x" * 200})
    with journal.open("r+b") as fh:  # damaged past its header: left to the writable open, which repairs it
        fh.seek(3 * 4096)
        fh.write(b"\xa5" * (4 * 4096))
    assert main(["deck", "enrol", "A", "--config", str(table), "--uids", str(uids)]) == 0
    assert [r.kind for r in journal_records(tmp_path)] == ["deck-enrol"]


def test_with_the_journal_held_by_a_running_service_nothing_is_done(table: Path, tmp_path: Path, capsys) -> None:
    first = [uid(n) for n in range(52)]
    assert main(["deck", "enrol", "A", "--config", str(table), "--uids", str(uids_file(tmp_path, first))]) == 0
    capsys.readouterr()
    journal = tmp_path / "journal.db"
    cfg = load_table_config(table)
    service = Owner(journal, cfg.table, cfg.rules)
    try:
        second = uids_file(tmp_path, [uid(n, deck=1) for n in range(52)], "b.txt")
        for argv in (["enrol", "B", "--uids", str(second)], ["retire", "A"], ["check", "A", "--uids", str(second)]):
            assert main(["deck", *argv, "--config", str(table)]) == 2, argv
            err = capsys.readouterr().err
            assert f"journal {journal} is open for writing by another process (pid {service.proc.pid}" in err
            assert "stop it first" in err and "nothing was done" in err
        enrolled = journal_records(tmp_path)[0].seq
        assert int(service.append("the service's next record")) == enrolled + 1  # nothing took its sequence
    finally:
        service.stop()
    decks = tmp_path / "state" / "decks"
    assert (decks / "A.json").exists() and not (decks / "B.json").exists() and not (decks / "retired").exists()
    assert [r.kind for r in journal_records(tmp_path)] == ["deck-enrol"]


@pytest.mark.parametrize("content, message", [
    ("\n".join(uid(n).hex() for n in range(51)), "uids.txt: 51 tags, a deck is 52"),
    ("\n".join(uid(n).hex() for n in range(53)), "uids.txt: 53 tags, a deck is 52"),
    ("\n".join(uid(n % 51).hex() for n in range(52)), "card 52 (Ah): tag 04200011223344 is also card 1 (As): a duplicate UID"),
    ("04a1b2c3\nnot-hex\n", "uids.txt: line 2: 'not-hex' is not a tag UID in hex"),
    (b"\xff\xfe\x00junk", "uids.txt: not UTF-8 text"),
])
def test_a_bad_uid_list_is_named(table: Path, tmp_path: Path, capsys, content, message: str) -> None:
    path = tmp_path / "uids.txt"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    assert main(["deck", "enrol", "X", "--config", str(table), "--uids", str(path)]) == 1
    assert message in capsys.readouterr().err
    if (tmp_path / "journal.db").exists():
        assert journal_records(tmp_path) == []
    assert not (tmp_path / "state" / "decks" / "X.json").exists()


def test_a_corrupt_or_unknown_live_deck_file_stops_enrolment_and_list_names_it(table: Path, tmp_path: Path,
                                                                               capsys) -> None:
    decks = tmp_path / "state" / "decks"
    decks.mkdir(parents=True)
    (decks / "old.json").write_text('{"format": "some other map 9"}')
    (decks / "bad.json").write_bytes(b"\x00\x01not json")
    path = uids_file(tmp_path, [uid(n) for n in range(52)])
    assert main(["deck", "enrol", "N", "--config", str(table), "--uids", str(path)]) == 1
    err = capsys.readouterr().err
    assert "bad.json: not" in err and "old.json: format" in err
    assert main(["deck", "list", "--config", str(table)]) == 1
    err = capsys.readouterr().err
    assert "old.json: format" in err


def test_an_unpaired_shoe_or_no_journal_is_a_configuration_error(tmp_path: Path, capsys) -> None:
    cfg = tmp_path / "table.toml"
    cfg.write_text(f'[shoe]\nserial = "SH-9"\nsecrets = "{tmp_path / "shoes"}"\n')
    path = uids_file(tmp_path, [uid(n) for n in range(52)])
    assert main(["deck", "enrol", "N", "--config", str(cfg), "--uids", str(path)]) == 2
    err = capsys.readouterr().err
    assert "not paired here" in err and f"[shoe] secrets of {cfg}" in err  # which configuration was read
    SecretStore(tmp_path / "shoes").save("SH-9", SECRET)
    assert main(["deck", "enrol", "N", "--config", str(cfg), "--uids", str(path)]) == 2
    assert f"{cfg}: no journal: set [journal] path there" in capsys.readouterr().err
    bare = tmp_path / "bare.toml"
    bare.write_text('table = "t"\n')
    assert main(["deck", "list", "--config", str(bare)]) == 2
    assert f"{bare}: no serial number: set [shoe] serial there" in capsys.readouterr().err
    assert main(["deck", "enrol", "bad id!", "--config", str(cfg), "--uids", str(path)]) == 2
    assert main(["deck", "enrol", "N", "--config", str(cfg), "--reader", "nfc:/dev/x"]) == 2
    assert "FAMILY:PORT" in capsys.readouterr().err


def test_scan_prints_each_scan_and_how_often_each_tag_was_seen(capsys) -> None:
    """The bench measurements (docs/build-a-shoe.md): one tag, two tags, an empty field and a
    reader fault, through the virtual PN532 and Adafruit's driver; no configuration needed."""
    a, b = uid(1), uid(2)
    with VirtualReader() as vr:
        vr.place(Tag(a))
        assert main(["deck", "scan", "--reader", f"pn532:{vr.url}", "--scans", "3", "--interval", "0"]) == 0
        out = capsys.readouterr().out
        assert out.count(f"  {a.hex()}\n") == 3
        assert "3 scans: no tag 0, one tag 3, two tags 0, errors 0" in out and f"  {a.hex()}: in 3 of 3 scans" in out
        vr.place(Tag(a), Tag(b))
        assert main(["deck", "scan", "--reader", f"pn532:{vr.url}", "--scans", "2", "--interval", "0"]) == 0
        out = capsys.readouterr().out
        assert f"    1  {a.hex()} {b.hex()}\n" in out and "two tags 2" in out
        vr.clear()

        def fault_once_scanning() -> None:
            vr.wait_listings(1)
            vr.fault("bad-checksum")  # the next answer's DCS is wrong: one failed scan, then a reset

        faulter = threading.Thread(target=fault_once_scanning, daemon=True)
        faulter.start()
        assert main(["deck", "scan", "--reader", f"pn532:{vr.url}", "--scans", "100", "--interval", "0.02"]) == 1
        faulter.join(10)
        out = capsys.readouterr().out
        assert "error: pn532:" in out and "errors 1" in out and "  100  -\n" in out  # scanning went on
        assert "100 scans: no tag 99, one tag 0, two tags 0, errors 1" in out


def test_scan_refuses_bad_options(capsys) -> None:
    assert main(["deck", "scan", "--reader", "nfc:/dev/x"]) == 2
    assert "FAMILY:PORT" in capsys.readouterr().err
    assert main(["deck", "scan", "--reader", "pn532:/dev/x", "--scans", "0"]) == 2
    assert "--scans 0: need 1..100000" in capsys.readouterr().err

"""``shoe-ctl deck check``: a live deck passed over the virtual PN532 (Adafruit's driver on its
pty) before its first hand; every card missing, read twice, of another live or a retired deck,
or of no deck named by card and tag, and the check journaled (docs/build-a-shoe.md, "Deck
check")."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from drivers.shoe_fw import deckmap
from hil.virtual_pn532 import Tag, VirtualReader
from shoe_ctl.cli import deck as deck_cli
from shoe_ctl.cli import main
from shoe_ctl.service.deck_check import MAX_PASSES, check_deck, latest_check, read_passes
from shoe_ctl.service.decks import NEW_DECK_ORDER, DeckFolder, EnrolError
from shoe_ctl.service.journal import Journal
from shoe_ctl.service.shoe_secrets import SecretStore

SECRET = bytes(range(100, 132))


def uid(n: int, deck: int = 0) -> bytes:
    return bytes([0x04, 0x30 + deck, n, 0x11, 0x22, 0x33, 0x44])


@pytest.fixture
def table(tmp_path: Path) -> Path:
    SecretStore(tmp_path / "state" / "shoes").save("SH-1", SECRET)
    folder = DeckFolder(tmp_path / "state" / "decks", SECRET)
    for deck, k in (("A", 0), ("B", 1), ("C", 2)):
        folder.write(deck, "ann", NEW_DECK_ORDER, [uid(n, k) for n in range(52)])
    folder.retire("C")
    cfg = tmp_path / "table.toml"
    cfg.write_text(f'table = "T1"\n[shoe]\nurl = "/dev/ttyNOSHOE"\nserial = "SH-1"\n'
                   f'secrets = "{tmp_path / "state" / "shoes"}"\n[journal]\npath = "{tmp_path / "journal.db"}"\n')
    return cfg


def test_a_deck_passed_over_the_reader_names_what_is_missing_twice_or_foreign(
        table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # the virtual PN532's thread shares a loaded machine: 5 s for each answer, not a real chip's 0.5 s
    monkeypatch.setattr(deck_cli, "ENROL_TIMEOUT_S", 5.0)
    stranger = bytes.fromhex("05f0e1d2c3b4a5")
    passes = [uid(n) for n in range(52) if n not in (7, 40)] + [uid(3), uid(9, 1), uid(12, 2), stranger]
    with VirtualReader() as vr:
        def dealer() -> None:
            vr.wait_listings(3)  # the reader is up and scanning
            for u in passes:
                assert vr.pass_card(Tag(u))

        feeder = threading.Thread(target=dealer, daemon=True)
        feeder.start()
        status = main(["deck", "check", "A", "--config", str(table), "--reader", f"pn532:{vr.url}", "--by", "bob",
                       "--idle", "3"])
        feeder.join(30)
    out = capsys.readouterr().out
    assert status == 1, out
    order = NEW_DECK_ORDER
    assert "deck A: 50 of 52 cards read\n" in out
    assert f"missing: {order[7]} (tag {uid(7).hex()})" in out and f"missing: {order[40]} (tag {uid(40).hex()})" in out
    assert f"twice: {order[3]} read 2 times (tag {uid(3).hex()})" in out
    assert f"of deck B: {order[9]} (tag {uid(9, 1).hex()})" in out
    assert f"of deck C (retired): {order[12]} (tag {uid(12, 2).hex()})" in out
    assert f"foreign: tag {stranger.hex()} (in no deck)" in out
    with Journal(tmp_path / "journal.db", table=None, profile=None, readonly=True) as j:
        [rec] = [r for r in j.records() if r.kind == "deck-check"]
        shown = latest_check(j)  # what the dealer display shows until a hand starts
    body = rec.data
    assert body["deck"] == "A" and body["by"] == "bob" and body["read"] == 54 and body["whole"] is False
    assert body["missing"] == [uid(7).hex(), uid(40).hex()] and body["foreign"] == [stranger.hex()]
    assert shown is not None and shown["deck"] == "A" and shown["whole"] is False and shown["by"] == "bob"
    assert body["lines"] == shown["lines"] and "\n".join(shown["lines"]) in out
    assert f"missing: {order[7]} (tag {uid(7).hex()})" in shown["lines"]


def test_a_whole_deck_passes_and_a_deck_that_is_not_live_is_a_configuration_error(
        table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    listed = tmp_path / "read.txt"
    listed.write_text("\n".join(uid(n).hex() for n in reversed(range(52))) + "\n")  # any order
    assert main(["deck", "check", "A", "--config", str(table), "--uids", str(listed)]) == 0
    assert "deck A: 52 of 52 cards read, none missing, none twice, no card of another deck" in capsys.readouterr().out
    assert main(["deck", "check", "C", "--config", str(table), "--uids", str(listed)]) == 2  # retired
    assert "deck C is not live" in capsys.readouterr().err


class Scripted:
    """A reader whose scans return the script's fields in turn, then an empty field."""

    def __init__(self, fields: list[list[bytes]]) -> None:
        self.fields = list(fields)

    def scan(self) -> list[bytes]:
        return self.fields.pop(0) if self.fields else []

    def reset(self) -> None:
        pass


def test_passes_are_counted_once_per_time_in_the_field_two_at_once_both() -> None:
    a, b = uid(1), uid(2)
    clock = iter(x * 0.1 for x in range(10_000))
    got = read_passes(Scripted([[a], [a], [], [a, b], [b], [], [b]]), idle_s=1.0, clock=lambda: next(clock),
                      sleep=lambda _s: None)
    assert got == [a, a, b, b]
    dm = deckmap.DeckMap("A", {uid(n).hex(): n for n in range(52)})
    result = check_deck(dm, got, deckmap.DeckBook())
    assert [t for _c, t, n in result.twice] == [a.hex(), b.hex()] and len(result.missing) == 50


def test_more_than_two_decks_worth_is_refused() -> None:
    fields: list[list[bytes]] = []
    for n in range(MAX_PASSES + 1):
        fields += [[bytes([4, n // 256, n % 256, 1])], []]
    clock = iter(x * 0.01 for x in range(100_000))
    with pytest.raises(EnrolError, match="not one deck"):
        read_passes(Scripted(fields), clock=lambda: next(clock), sleep=lambda _s: None)

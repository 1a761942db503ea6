"""A table whose broker ACL denies its publications (real Mosquitto 2.0: the broker acknowledges
a denied publication and drops it): the table reads its own retained state back, finds it
missing, and says so on the dealer display; ``doctor`` names the cause. With the ACL right the
state comes back and nothing is said."""

from __future__ import annotations

from pathlib import Path

from floor_help import ROOM
from waiting import wait_for

from shoe_ctl.cli import doctor as doc
from shoe_ctl.events import DisplayUpdate
from shoe_ctl.floor.broker import Mosquitto
from shoe_ctl.floor.publisher import FloorPublisher
from shoe_ctl.service.journal import Journal


def _publisher(mosquitto: Mosquitto, tmp_path: Path, table: str, user: str) -> tuple[FloorPublisher, Journal]:
    journal = Journal(tmp_path / f"{table}.journal", table=table, profile="tda", retention_days=0)
    pub = FloorPublisher(journal, table=table, room=ROOM, host=mosquitto.host, port=mosquitto.port,
                         credentials=mosquitto.users[user], readback_s=1.0).start()
    return pub, journal


def test_a_table_whose_publications_the_acl_drops_says_so(mosquitto: Mosquitto, tmp_path: Path) -> None:
    # table "t9" publishing with user t2's password: the ACL lets t2 write only .../t2/...
    bad, bad_journal = _publisher(mosquitto, tmp_path, "t9", "t2")
    good, good_journal = _publisher(mosquitto, tmp_path, "t3", "t3")
    try:
        for pub in (bad, good):  # the bad one's connection is closed after each denied publication
            pub.handle(DisplayUpdate({"hand": 1, "state": "idle"}))
        assert wait_for(lambda: bad.problem is not None, 15), "the dropped publications went unnoticed"
        assert "drops them" in bad.problem and "t9" in bad.problem
        # the well-configured table gets its state back: nothing to say
        assert wait_for(lambda: good._state_sent is not None and good._state_token is None, 10)
        assert good.problem is None
    finally:
        for pub, journal in ((bad, bad_journal), (good, good_journal)):
            pub.close()
            journal.close()


def test_the_display_shows_the_floor_problem() -> None:
    import queue

    from shoe_ctl.display.server import DisplaySink

    posted: queue.Queue[object] = queue.Queue()
    sink = DisplaySink(posted.put, port=0)
    assert sink.snapshot()["floor_problem"] is None
    sink.floor_problem = lambda: "the floor broker acknowledges table t9's publications but drops them"
    assert "drops them" in sink.snapshot()["floor_problem"]


def _config(tmp_path: Path, mosquitto: Mosquitto, table: str, user: str) -> Path:
    cfg = tmp_path / f"{table}.toml"
    cfg.write_text(f'table = "{table}"\n[shoe]\nurl = "sim"\n[floor]\nenabled = true\nbroker = "{mosquitto.url}"\n'
                   f'room = "{ROOM}"\ncredentials = "{mosquitto.credentials_file(user)}"\n')
    cfg.chmod(0o640)
    return cfg


def test_doctor_names_a_wrong_acl(mosquitto: Mosquitto, tmp_path: Path) -> None:
    # no state kept for the table yet: said, not failed (a table that never published looks the same)
    assert doc.check_floor(_config(tmp_path, mosquitto, "t1", "t1"), 3.0).status == "warn"
    pub, journal = _publisher(mosquitto, tmp_path, "t1", "t1")
    try:
        pub.handle(DisplayUpdate({"hand": 1, "state": "idle"}))
        assert wait_for(lambda: pub.connected and pub._state_token is None and pub._state_sent is not None, 10)
    finally:
        pub.close()
        journal.close()
    assert doc.check_floor(_config(tmp_path, mosquitto, "t1", "t1"), 3.0).status == "ok"
    wrong_user = doc.check_floor(_config(tmp_path, mosquitto, "t9", "t2"), 3.0)
    assert wrong_user.status == "fail" and "acknowledges and drops" in wrong_user.detail
    # a broker whose ACL lacks the state read-back line (an ACL older than docs/floor.md's)
    acl = mosquitto.root / "acl"
    acl.write_text("\n".join(line for line in acl.read_text().splitlines() if not line.endswith("%u/state")
                             or line.startswith("pattern write")) + "\n")
    mosquitto.restart()
    old_acl = doc.check_floor(_config(tmp_path, mosquitto, "t1", "t1"), 3.0)
    assert old_acl.status == "warn" and "hides its state" in old_acl.detail

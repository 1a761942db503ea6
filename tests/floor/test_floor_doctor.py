"""``shoe-ctl doctor``'s ``floor`` check asks the broker itself, on a real Mosquitto: the table's
user accepted is ``ok``; a wrong password, or a broker that is not running, is a failure naming
it (never "all well" with the floor unreachable)."""

from __future__ import annotations

from pathlib import Path

from floor_help import ROOM
from journal_owner import Owner

from shoe_ctl.cli import doctor as doc
from shoe_ctl.cli import main
from shoe_ctl.floor.broker import Mosquitto


def write(tmp_path: Path, broker: str, credentials: Path) -> Path:
    cfg = tmp_path / "table.toml"
    cfg.write_text(f'table = "t1"\n[shoe]\nurl = "sim"\n[floor]\nenabled = true\nbroker = "{broker}"\n'
                   f'room = "{ROOM}"\ncredentials = "{credentials}"\n')
    cfg.chmod(0o640)
    return cfg


def test_the_floor_check_asks_the_broker(mosquitto: Mosquitto, tmp_path: Path, capsys) -> None:
    creds = Path(mosquitto.credentials_file("t1"))
    good = doc.check_floor(write(tmp_path, mosquitto.url, creds), 3.0)
    # accepted; the table has published nothing yet, so there is no state of it to read back
    assert good.status == "warn" and "keeps no state of table t1" in good.detail
    wrong = tmp_path / "wrong.credentials"
    wrong.write_text(creds.read_text().replace(mosquitto.users["t1"].password, "not-the-password"))
    wrong.chmod(0o600)
    refused = doc.check_floor(write(tmp_path, mosquitto.url, wrong), 3.0)
    assert refused.status == "fail" and "refused t1" in refused.detail
    cfg = write(tmp_path, mosquitto.url, creds)
    mosquitto.stop()
    down = doc.check_floor(cfg, 3.0)
    assert down.status == "fail" and "cannot be reached" in down.detail and "start the broker" in down.fix
    assert main(["doctor", "--config", str(cfg)]) == 1
    out = capsys.readouterr().out
    assert "FAIL  floor" in out and "all well" not in out


def test_the_broker_is_not_asked_while_the_service_writes_the_journal(mosquitto: Mosquitto, tmp_path: Path,
                                                                      capsys) -> None:
    # a connection as the table's user would close the running table's own (a client id is its
    # user's name): the floor would raise table-lost, so the check stops short of the broker
    cfg = write(tmp_path, mosquitto.url, Path(mosquitto.credentials_file("t1")))
    journal = tmp_path / "journal.sqlite3"
    cfg.write_text(cfg.read_text().replace("[floor]", f'[journal]\npath = "{journal}"\n[floor]'))

    def never(*args: object, **kwargs: object) -> str | None:
        raise AssertionError("the broker was asked while the service holds the journal")

    service = Owner(journal, table="t1")
    try:
        held = doc.check_floor(cfg, 3.0, probe=never, journal=journal)
        assert held.status == "skip" and f"process {service.proc.pid}" in held.detail
        assert "table-lost" in held.detail and "service stopped" in held.fix
        main(["doctor", "--config", str(cfg)])
        assert "skip  floor" in capsys.readouterr().out
    finally:
        service.stop()
    # the service stopped: the broker is asked again
    assert doc.check_floor(cfg, 3.0, journal=journal).status in ("ok", "warn")

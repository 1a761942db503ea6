"""The real service (``shoe-ctl run`` in a child process, on the virtual shoe) owns its journal:
``shoe-ctl deck`` is refused while it runs and nothing is done, read-only readers read, and a
service killed with SIGKILL is restarted on the same journal at once (docs/journal.md, "One
writing process")."""

from __future__ import annotations

from pathlib import Path

from waiting import wait_for

from hil.crash import ServiceProcess
from hil.virtual_shoe import VirtualShoe
from shoe_ctl.cli import main
from shoe_ctl.service.journal import Journal, owner_lock
from shoe_ctl.service.shoe_secrets import SecretStore, new_secret

START_BOUND_S = 120.0
"""A generous bound for the service to open its journal on a loaded machine (not a timing)."""


def kinds(journal: Path) -> list[str]:
    with Journal(journal, table=None, profile=None, readonly=True) as j:
        return [r.kind for r in j.records()]


def owned_by(journal: Path, proc: ServiceProcess) -> bool:
    lock = owner_lock(journal)
    return proc.proc is not None and lock.exists() and lock.read_text().strip() == str(proc.proc.pid)


def test_deck_commands_wait_for_the_running_service(tmp_path: Path, capsys) -> None:
    secret = new_secret()
    SecretStore(tmp_path / "shoes").save("VS-0001", secret)
    journal = tmp_path / "table.journal"
    cfg = tmp_path / "table.toml"
    cfg.write_text(f'[shoe]\nserial = "VS-0001"\nsecrets = "{tmp_path / "shoes"}"\n'
                   f'[journal]\npath = "{journal}"\n[release]\nverify = "off"\n')
    uids = tmp_path / "uids.txt"
    uids.write_text("\n".join(bytes([0x04, 0x20, n, 0x11, 0x22, 0x33, 0x44]).hex() for n in range(52)) + "\n")
    assert main(["deck", "enrol", "A", "--config", str(cfg), "--uids", str(uids)]) == 0
    capsys.readouterr()

    shoe = VirtualShoe(transport="tcp", seed=3, serial="VS-0001", secret=secret).start()
    service = ServiceProcess(shoe.url, journal, tmp_path / "dealer.sock", tmp_path / "service.log",
                             rules="tda", game="stud", config=str(cfg))
    try:
        service.start()
        assert wait_for(lambda: owned_by(journal, service), START_BOUND_S), (tmp_path / "service.log").read_text()
        assert service.proc is not None
        assert main(["deck", "retire", "A", "--config", str(cfg)]) == 2
        err = capsys.readouterr().err
        assert f"journal {journal} is open for writing by another process (pid {service.proc.pid}" in err
        assert "stop it first" in err
        assert (tmp_path / "decks" / "A.json").exists()  # the deck is still live
        seen = kinds(journal)  # a reader reads while the service writes
        assert "deck-enrol" in seen and "deck-retire" not in seen

        service.kill()  # SIGKILL: the kernel lets go of the lock with the process
        service.start()
        assert wait_for(lambda: owned_by(journal, service), START_BOUND_S), (tmp_path / "service.log").read_text()
        assert service.alive()
    finally:
        service.stop()
        shoe.close()
    assert main(["deck", "retire", "A", "--config", str(cfg), "--by", "ann"]) == 0
    assert kinds(journal).count("deck-retire") == 1

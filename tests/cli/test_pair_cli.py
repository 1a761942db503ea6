"""``shoe-ctl pair``: a first pairing (the shoe in pairing mode), then a rotation; the secret is
stored 0600 only once the shoe answers under it (docs/security.md, "The shoe link")."""

from __future__ import annotations

import stat
from pathlib import Path

from hil.urlhandler import protocol_vshoe
from shoe_ctl.cli import main
from shoe_ctl.service.shoe_secrets import SecretStore


def _config(tmp_path: Path, url: str) -> Path:
    cfg = tmp_path / "table.toml"
    cfg.write_text(f'[shoe]\nurl = "{url}"\nserial = "VS-PAIR"\nsecrets = "{tmp_path / "shoes"}"\n')
    return cfg


def test_pair_then_rotate_a_shoe_in_pairing_mode(tmp_path: Path) -> None:
    url = "vshoe://pair-cli?serial=VS-PAIR&pairing=1"
    cfg = _config(tmp_path, url)
    store = SecretStore(tmp_path / "shoes")
    try:
        assert main(["pair", "--config", str(cfg), "--timeout", "3"]) == 0
        first = store.load("VS-PAIR")
        shoe = protocol_vshoe.device_for_url(url)
        assert first is not None and shoe.secret == first
        assert stat.S_IMODE(store.path("VS-PAIR").stat().st_mode) == 0o600
        assert stat.S_IMODE(store.folder.stat().st_mode) == 0o700
        assert main(["pair", "--config", str(cfg), "--timeout", "3"]) == 0  # a rotation
        second = store.load("VS-PAIR")
        assert second is not None and second != first and shoe.secret == second
    finally:
        protocol_vshoe.release(url)


def test_pair_fails_and_stores_nothing_when_the_shoe_is_not_in_pairing_mode(tmp_path: Path, capsys) -> None:
    url = "vshoe://pair-cli-closed?serial=VS-PAIR"
    cfg = _config(tmp_path, url)
    try:
        assert main(["pair", "--config", str(cfg), "--timeout", "1"]) == 1
        assert SecretStore(tmp_path / "shoes").load("VS-PAIR") is None
        assert "pairing mode" in capsys.readouterr().err
    finally:
        protocol_vshoe.release(url)


def test_a_real_shoe_without_a_secret_is_refused_with_a_clear_message(tmp_path: Path, capsys) -> None:
    cfg = tmp_path / "table.toml"
    cfg.write_text(f'[shoe]\nurl = "/dev/ttyNOSHOE"\nserial = "SH-1"\nsecrets = "{tmp_path}"\n[display]\nenabled = false\n')
    assert main(["run", "--config", str(cfg)]) != 0
    err = capsys.readouterr().err
    assert "not paired" in err and "shoe-ctl pair" in err
    assert f"restore {tmp_path / 'SH-1.key'}" in err and "shoe-ctl doctor" in err  # a shoe paired before


def test_with_named_users_only_a_technician_pairs(tmp_path: Path, capsys, monkeypatch) -> None:
    import io

    from argon2 import PasswordHasher

    from shoe_ctl.users import Role, User, UserStore

    url = "vshoe://pair-cli-roles?serial=VS-PAIR&pairing=1"
    users = UserStore(tmp_path / "users.toml", hasher=PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
    users.save([User("tess", Role.TECHNICIAN, users.hash_pin("333333")),
                User("dana", Role.DEALER, users.hash_pin("111111"))])
    cfg = _config(tmp_path, url)
    cfg.write_text(cfg.read_text() + f'[users]\nfile = "{tmp_path / "users.toml"}"\n')
    store = SecretStore(tmp_path / "shoes")
    try:
        assert main(["pair", "--config", str(cfg), "--timeout", "3"]) == 2
        assert "technician's: give --user" in capsys.readouterr().err
        for user, pin, why in (("dana", "111111", "dana is a dealer"), ("tess", "999999", "wrong user or PIN")):
            monkeypatch.setattr("sys.stdin", io.StringIO(pin + "\n"))
            assert main(["pair", "--config", str(cfg), "--user", user, "--pin-stdin", "--timeout", "3"]) == 2
            assert why in capsys.readouterr().err
        assert store.load("VS-PAIR") is None  # nothing stored by a refusal
        monkeypatch.setattr("sys.stdin", io.StringIO("333333\n"))
        assert main(["pair", "--config", str(cfg), "--user", "tess", "--pin-stdin", "--timeout", "3"]) == 0
        assert store.load("VS-PAIR") is not None and "technician tess" in capsys.readouterr().err
    finally:
        protocol_vshoe.release(url)


def test_pair_sends_nothing_when_the_secret_could_not_be_stored(tmp_path: Path, capsys) -> None:
    """The secret's folder is tried first: a shoe must never hold a secret the table lacks."""
    url = "vshoe://pair-cli-nowhere?serial=VS-PAIR&pairing=1"
    cfg = _config(tmp_path, url)
    folder = tmp_path / "shoes"
    folder.mkdir(mode=0o700)
    (folder / "VS-PAIR.key.trial").mkdir()  # a write there fails, as in a folder of another user's
    try:
        assert main(["pair", "--config", str(cfg), "--timeout", "3"]) == 2
        err = capsys.readouterr().err
        assert f"{folder}: a shoe secret cannot be stored there" in err
        shoe = protocol_vshoe.device_for_url(url)
        assert shoe.secret is None  # the shoe was never sent a secret
        (folder / "VS-PAIR.key.trial").rmdir()
        assert main(["pair", "--config", str(cfg), "--timeout", "3"]) == 0
        assert shoe.secret is not None and SecretStore(tmp_path / "shoes").load("VS-PAIR") == shoe.secret
    finally:
        protocol_vshoe.release(url)


def test_no_serial_names_the_configuration_read_and_how_to_learn_the_serial(tmp_path: Path, capsys) -> None:
    cfg = tmp_path / "table.toml"
    cfg.write_text(f'[shoe]\nurl = "{tmp_path / "ttyACM9"}"\nsecrets = "{tmp_path / "shoes"}"\n')
    assert main(["pair", "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert f"{cfg}: no serial number: set [shoe] serial there" in err and "shoe-ctl doctor" in err
    assert not (tmp_path / "shoes").exists()  # nothing written


def test_pair_names_a_shoe_paired_with_a_secret_this_host_does_not_have(tmp_path: Path, capsys) -> None:
    from hil.virtual_shoe import VirtualShoe
    from shoe_ctl.service.shoe_secrets import new_secret

    secret = new_secret()  # kept by the shoe; this host's key file is gone
    with VirtualShoe(transport="pty", serial="VS-PAIR", secret=secret) as shoe:
        assert main(["pair", "--config", str(_config(tmp_path, str(shoe.url))), "--timeout", "2"]) == 1
        assert shoe.secret == secret  # nothing crossed that the shoe acted on
    err = capsys.readouterr().err
    assert "answers sealed frames" in err and "a secret this host does not have" in err
    assert f"Restore the key file {SecretStore(tmp_path / 'shoes').path('VS-PAIR')}" in err
    assert SecretStore(tmp_path / "shoes").load("VS-PAIR") is None

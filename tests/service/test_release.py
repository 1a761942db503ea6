"""The signed release manifest (shoe_ctl/release.py, docs/compliance.md "Software identity and the tilt"): an installed copy
matches its signed manifest; one changed byte, a missing or extra file, a tampered manifest, a
signature by another key, a missing signature or no pinned key each fail with the reason; and the
``shoe-ctl release`` commands sign and verify as the service does."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from release_help import Installed, install_copy

from shoe_ctl.release import (
    ReleaseConfig,
    check,
    key_id,
    load_release_config,
    manifest_bytes,
    new_private_key,
    sign_manifest,
)
from shoe_ctl.rules.profiles import ProfileError


@pytest.fixture
def inst(tmp_path: Path) -> Installed:
    return install_copy(tmp_path)


def verdict(inst: Installed, **change: object):  # noqa: ANN201
    return check(replace(load_release_config(inst.config), **change), inst.site)


def test_an_untouched_install_verifies(inst: Installed) -> None:
    v = verdict(inst)
    assert v.ok and not v.off and v.key == key_id(inst.key.public_key())  # type: ignore[attr-defined]
    assert len(v.digest) == 64


def test_one_changed_byte_names_the_file(inst: Installed) -> None:
    inst.flip_byte("shoe_ctl/rules/stub.py")
    v = verdict(inst)
    assert not v.ok and v.first_file == "shoe_ctl/rules/stub.py" and "differs from the release" in v.problem


def test_a_missing_and_an_extra_file(inst: Installed) -> None:
    (inst.site / "drivers" / "leds.py").unlink()
    v = verdict(inst)
    assert not v.ok and v.first_file == "drivers/leds.py" and "missing" in v.problem
    (inst.site / "drivers" / "leds.py").write_text("")
    (inst.site / "drivers" / "aaa_extra.py").write_text("x = 1\n")
    v = verdict(inst)
    assert v.first_file == "drivers/aaa_extra.py" and "not in the release" in v.problem


def test_a_tampered_manifest_does_not_verify(inst: Installed) -> None:
    inst.flip_byte("shoe_ctl/table.py")
    m = json.loads(inst.manifest.read_text())
    m["files"]["shoe_ctl/table.py"] = __import__("hashlib").sha256((inst.site / "shoe_ctl/table.py").read_bytes()).hexdigest()
    inst.manifest.write_bytes(manifest_bytes(m))  # the changed file's new hash, the old signature
    v = verdict(inst)
    assert not v.ok and "does not verify with the pinned key" in v.problem and v.first_file is None


def test_a_signature_by_another_key_is_an_unknown_key(inst: Installed) -> None:
    other = new_private_key()
    sig = Path(f"{inst.manifest}.sig")
    sig.write_bytes(sign_manifest(inst.manifest.read_bytes(), other))
    v = verdict(inst)
    assert not v.ok and "unknown key" in v.problem and key_id(other.public_key())[:16] in v.problem
    # another key's signature that claims the pinned key's id: forged
    body = json.loads(sig.read_text())
    body["key"] = key_id(inst.key.public_key())  # type: ignore[attr-defined]
    sig.write_text(json.dumps(body))
    assert "does not verify" in verdict(inst).problem


def test_no_signature_no_manifest_no_key(inst: Installed) -> None:
    Path(f"{inst.manifest}.sig").unlink()
    assert "no release signature at" in verdict(inst).problem
    assert "no release key is pinned" in verdict(inst, public_key=None).problem
    assert "no release manifest at" in verdict(inst, manifest=str(inst.manifest) + ".gone").problem
    inst.manifest.write_text("{not json")
    assert "not JSON" in verdict(inst).problem


def test_verification_off_is_said(inst: Installed) -> None:
    v = verdict(inst, verify="off")
    assert v.ok and v.off and "off" in v.problem


def test_release_config_errors(tmp_path: Path) -> None:
    cfg = tmp_path / "t.toml"
    cfg.write_text('[release]\nverify = "maybe"\n')
    with pytest.raises(ProfileError, match="release.verify"):
        load_release_config(cfg)
    cfg.write_text('[release]\npublic_key = "AAAA"\n')
    with pytest.raises(ProfileError, match="3 bytes"):
        load_release_config(cfg)
    cfg.write_text('[release]\nkey = "x"\n')
    with pytest.raises(ProfileError, match="unknown key"):
        load_release_config(cfg)
    cfg.write_text('table = "x"\n')
    env = os.environ.pop("SHOE_CTL_RELEASE_VERIFY", None)
    try:
        assert load_release_config(cfg) == ReleaseConfig(verify="on", config_file=str(cfg))  # safe: on, no key
    finally:
        if env is not None:
            os.environ["SHOE_CTL_RELEASE_VERIFY"] = env


def test_cli_keygen_sign_verify(inst: Installed, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(inst.site)}
    run = lambda *a: subprocess.run([sys.executable, "-m", "shoe_ctl.cli", "release", *a],  # noqa: E731
                                    capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    made = run("keygen", "--out", "k.pem")
    assert made.returncode == 0 and (tmp_path / "k.pem").stat().st_mode & 0o777 == 0o600
    pub = made.stdout.split('"')[1]
    assert len(base64.b64decode(pub)) == 32
    assert run("keygen", "--out", "k.pem").returncode == 2  # never overwritten
    signed = run("sign", "--key", "k.pem", "--out", "out")
    assert signed.returncode == 0, signed.stderr
    cfg = tmp_path / "pinned.toml"
    cfg.write_text(f'[release]\nverify = "on"\npublic_key = "{pub}"\nmanifest = "{tmp_path}/out/release.json"\n')
    ok = run("verify", "--config", str(cfg))
    assert ok.returncode == 0 and "matches the release signed by key" in ok.stdout
    inst.flip_byte("hil/faults.py")
    bad = run("verify", "--config", str(cfg))
    assert bad.returncode == 1 and "software mismatch: hil/faults.py differs" in bad.stderr


def test_seeds_and_the_seeded_answer() -> None:
    import hmac as hmac_mod

    from shoe_ctl.release import ReleaseError, parse_seed, seeded_answer

    seed = parse_seed("0f" * 16)
    assert seed == bytes([15]) * 16
    for bad, why in (("0f" * 15, "at least 32"), ("0f" * 65, "at most 128"), ("zz" * 16, "hex digits"),
                     ("0" * 33, "hex digits"), (12, "not a text")):
        with pytest.raises(ReleaseError, match=why):
            parse_seed(bad)
    answer = seeded_answer(seed, b"m", b"c", "SH-1", "fw")
    parts = b"".join(len(p).to_bytes(8, "big") + p for p in (b"m", b"c", b"SH-1", b"fw"))
    assert answer == hmac_mod.new(seed, parts, "sha256").hexdigest()
    assert seeded_answer(seed, b"mc", b"", "SH-1", "fw") != answer  # the parts cannot be re-split
    assert seeded_answer(parse_seed("1f" * 16), b"m", b"c", "SH-1", "fw") != answer

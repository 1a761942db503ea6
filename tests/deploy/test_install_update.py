"""The install and update paths of docs/install-pi.md, in a scratch prefix, checked as the service
user sees them: a Quick-start clone copied whole (with its .venv) to the program folder gets a
.venv of its own; the service user runs that folder's code from ``/`` with the clone unreadable;
an update with the same version number installs the new code and says which; ``doctor`` runs from
a folder the service user cannot write.

Needs root (a system user is made for the run and removed after) and the network or pip's cache
for the dependencies; slow (about a minute)."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from paths import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
from installed_code import fingerprint, packaged  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # builds two environments: long under load


def sh(cmd: list[str], cwd: Path | str, user: str | None = None, check: bool = True,
       env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    if user is not None:
        cmd = ["runuser", "-u", user, "--", *cmd]
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    full_env.update(env or {})
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600, env=full_env)
    if check:
        assert r.returncode == 0, f"{cmd}: {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r


def copy_sources(dest: Path) -> None:
    """The project's files as a clone or an unpacked release holds them (no .venv, no caches)."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                           capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


@pytest.fixture(scope="module")
def service_user() -> Iterator[str]:
    if os.geteuid() != 0 or shutil.which("useradd") is None or shutil.which("runuser") is None:
        pytest.skip("needs root, useradd and runuser (a service user is made for the run)")
    if not os.access("/usr/bin/python3", os.X_OK):
        pytest.skip("no system Python at /usr/bin/python3 (scripts/setup.sh pi uses it)")
    name = "shoectl-" + uuid.uuid4().hex[:6]
    sh(["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent", "--shell",
        "/usr/sbin/nologin", name], "/")
    try:
        yield name
    finally:
        subprocess.run(["userdel", name], capture_output=True)


@pytest.fixture()
def prefix() -> Iterator[Path]:
    """A scratch root the service user can traverse (pytest's own tmp folder is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="shoe-ctl-prefix-", dir="/var/tmp"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_clone_copied_to_the_program_folder_then_updated(prefix: Path, service_user: str) -> None:
    tmp_path = prefix
    home = tmp_path / "home" / "dealer"
    clone = home / "shoe-ctl"
    clone.mkdir(parents=True)
    copy_sources(clone)
    # Quick start in the clone (the README's first command)
    quick = sh(["bash", "scripts/setup.sh"], clone)
    assert "ready: shoe-ctl" in quick.stdout
    home.chmod(0o700)  # the clone is out of the service's reach (ProtectHome=yes)

    # the old guide's copy: everything, the clone's .venv included
    opt = tmp_path / "opt" / "shoe-ctl"
    opt.parent.mkdir()
    sh(["cp", "-r", f"{clone}/.", str(opt)], "/")
    # the publisher signs the release (its key stays with the publisher); the table pins the public half
    key = tmp_path / "release-key.pem"
    pinned = sh([str(clone / ".venv/bin/shoe-ctl"), "release", "keygen", "--out", str(key)], "/").stdout.strip()
    sh([str(clone / ".venv/bin/shoe-ctl"), "release", "sign", "--key", str(key), "--out", str(opt / "release")], "/")
    etc, state = tmp_path / "etc", tmp_path / "var" / "lib" / "shoe-ctl"
    etc.mkdir()
    (etc / "table.toml").write_text(f'[shoe]\nurl = "sim"\n[journal]\npath = "{state}/journal.sqlite3"\n'
                                    f'[release]\nverify = "on"\n{pinned}\n')
    (etc / "table.toml").chmod(0o644)
    env = {"SHOE_CTL_USER": service_user, "SHOE_CTL_TABLE": str(etc / "table.toml")}
    first = sh(["bash", "scripts/setup.sh", "pi"], opt, env=env)
    assert "release: shoe-ctl 0.1.0: the installed code matches the release signed by key" in first.stdout, \
        first.stdout
    assert (opt / ".venv/share/shoe-ctl/release.json.sig").is_file()
    assert f"it was made for {clone}" in first.stdout and "making a new one" in first.stdout
    want = fingerprint(packaged(opt))
    assert f"installed: shoe-ctl 0.1.0, code {want}" in first.stdout
    assert f"the service user {service_user} runs: shoe-ctl 0.1.0" in first.stdout

    # as the service user, from /: runs the program folder's own copy, never the clone
    where = sh([str(opt / ".venv/bin/python"), "-c", "import shoe_ctl; print(shoe_ctl.__file__)"], "/",
               user=service_user)
    assert where.stdout.startswith(str(opt / ".venv/lib/")), where.stdout
    for script in (opt / ".venv/bin").iterdir():
        if script.is_file() and not script.is_symlink():
            head = script.read_bytes()[:200]
            assert str(clone).encode() not in head, script  # no script points at the clone
    assert sh([str(opt / ".venv/bin/shoe-ctl"), "--version"], "/", user=service_user).stdout.strip() \
        == "shoe-ctl 0.1.0"

    # doctor from the program folder (not writable by the service user), a sim shoe, a journal folder
    state.mkdir(parents=True)
    shutil.chown(state, service_user, service_user)
    state.chmod(0o700)
    hand = sorted((opt / "examples").glob("*.phh"))[0]
    dealt = sh([str(opt / ".venv/bin/shoe-ctl"), "run", "--config", str(etc / "table.toml"), "--journal",
                str(state / "journal.sqlite3"), "--display", "off", "--hands", str(hand), "--pace", "0",
                "--exit-when-done"], state, user=service_user, check=False)
    assert dealt.returncode == 0, dealt.stdout + dealt.stderr  # the rule profiles are found, the hand dealt
    assert not (opt / "config" / "config").exists()
    assert (state / "journal.sqlite3").stat().st_uid == pwd.getpwnam(service_user).pw_uid
    doctor = sh([str(opt / ".venv/bin/shoe-ctl"), "doctor", "--config", str(etc / "table.toml")], opt,
                user=service_user, check=False)
    assert doctor.returncode == 0 and "all well" in doctor.stdout, doctor.stdout + doctor.stderr

    # the documented update: a new release, same version number, different code
    release = tmp_path / "release"
    release.mkdir()
    copy_sources(release)
    init = release / "shoe_ctl" / "__init__.py"
    init.write_text(init.read_text().replace('__version__ = "0.1.0"', '__version__ = "0.1.0"\nUPDATED = True'))
    sh([str(clone / ".venv/bin/python"), "-m", "shoe_ctl.cli", "release", "sign", "--key", str(key), "--out",
        str(release / "release")], "/", env={"PYTHONPATH": str(release)})  # the new code's manifest
    sh(["rsync", "-a", "--delete", "--exclude", "/.venv/", f"{release}/", f"{opt}/"], "/")
    update = sh(["bash", "scripts/setup.sh", "pi"], opt, env=env)
    assert "release: shoe-ctl 0.1.0: the installed code matches" in update.stdout, update.stdout
    new = fingerprint(packaged(release))
    assert new != want and f"installed: shoe-ctl 0.1.0, code {new}" in update.stdout
    assert "making a new one" not in update.stdout  # the venv is kept, the code replaced
    got = sh([str(opt / ".venv/bin/python"), "-c", "import shoe_ctl; print(shoe_ctl.UPDATED)"], "/",
             user=service_user)
    assert got.stdout.strip() == "True"
    assert not (opt / "build").exists()  # no build/lib left to leak old files into the next update
    # and the check notices code that does not match the folder
    init.write_text(init.read_text() + "\n# edited after install\n")
    shutil.copy2(init, opt / "shoe_ctl" / "__init__.py")
    stale = sh([str(opt / ".venv/bin/python"), "scripts/installed_code.py", str(opt)], opt, check=False)
    assert stale.returncode == 1 and "does not run the code" in stale.stderr
    assert pwd.getpwnam(service_user).pw_uid != 0

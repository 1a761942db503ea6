"""docs/install-pi.md followed in its own order: the guide's commands from the service user to
``doctor`` (steps 1.3 to 5) are taken from the document's ``sh`` blocks and run as written, one
after another, as root in a scratch prefix (paths under it, a throw-away user and group), against
a virtual shoe on a pty in its pairing mode. Each step needs only what the steps before it made:
``pair`` finds the state folder to write the shoe's secret into, and ``doctor`` then finds the
shoe paired. Commands a container cannot run (apt, udev, systemctl) are named and left out. Needs root and
pip's cache or the network (step 2 builds the program's environment); slow (about a minute)."""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
import tempfile
import termios
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from paths import ROOT

from shoe_ctl.service.shoe_secrets import SecretStore

sys.path.insert(0, str(Path(__file__).parent))
from test_install_update import copy_sources  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # builds the environment: long under load

GUIDE = ROOT / "docs" / "install-pi.md"
SERIAL = "SH-000123"
# commands the guide gives that are not run here, by their first word (with the reason)
NOT_RUN = {
    "apt": "the packages are installed on this machine already",
    "echo": "the optional display token",
    "chown": "the optional display token's file",
    "ls": "udev: no shoe on USB here",
    "udevadm": "udev: no udevd in a container",
    "cp": "udev and systemd files (tests/deploy/test_unit_verify.py)",
}
RUN = {"groupadd", "useradd", "install", "cd", "runuser", "mkdir", "rsync", "bash"}


def guide_commands(text: str) -> list[tuple[str, str]]:
    """``(section, command)`` for every command of the guide's ``sh`` blocks, in the document's
    order (continued lines joined, comments dropped)."""
    out: list[tuple[str, str]] = []
    section = ""
    block: list[str] | None = None
    for line in text.splitlines():
        bare = line.strip()
        if line.startswith("## "):
            section = line[3:].split(" ", 1)[0].rstrip(".")
        elif bare == "```sh":
            block = []
        elif bare == "```" and block is not None:
            joined = "\n".join(block).replace("\\\n", " ")
            for cmd in joined.splitlines():
                cmd = re.sub(r"\s+#.*$", "", cmd).strip()
                if cmd:
                    out.append((section, re.sub(r"\s+", " ", cmd)))
            block = None
        elif block is not None:
            block.append(bare)
    return out


def test_the_guide_runs_as_root_without_sudo_and_pairs_after_the_state_folder_exists() -> None:
    commands = guide_commands(GUIDE.read_text())
    assert not [c for _, c in commands if c.startswith("sudo ") or " sudo " in c]
    made = next(i for i, (_, c) in enumerate(commands) if c.startswith("install -d") and "/var/lib/shoe-ctl" in c)
    pair = next(i for i, (_, c) in enumerate(commands) if " pair " in c)
    doctor = next(i for i, (_, c) in enumerate(commands) if " doctor " in c)
    unit = next(i for i, (_, c) in enumerate(commands) if "enable --now shoe-ctl" in c)
    assert made < pair < doctor < unit
    group = next(i for i, (_, c) in enumerate(commands) if c.startswith("groupadd"))
    user = next(i for i, (_, c) in enumerate(commands) if c.startswith("useradd"))
    assert group < user < made


@pytest.fixture()
def scratch() -> Iterator[tuple[Path, str, str]]:
    if os.geteuid() != 0 or not all(shutil.which(t) for t in ("useradd", "groupadd", "runuser", "install")):
        pytest.skip("needs root, useradd, groupadd and runuser (the guide's own commands are run)")
    prefix = Path(tempfile.mkdtemp(prefix="shoe-ctl-guide-", dir="/var/tmp"))
    prefix.chmod(0o755)
    tag = uuid.uuid4().hex[:6]
    user, group = f"shoectl-{tag}", f"gpio-{tag}"
    try:
        yield prefix, user, group
    finally:
        subprocess.run(["userdel", user], capture_output=True)
        subprocess.run(["groupdel", user], capture_output=True)
        subprocess.run(["groupdel", group], capture_output=True)
        shutil.rmtree(prefix, ignore_errors=True)


def release(port: str) -> None:
    """Clear ``TIOCEXCL`` on the virtual shoe's pty once a command closed it: the rig keeps the pty
    open, where a real port is released when its last holder closes it."""
    fd = os.open(port, os.O_RDWR | os.O_NOCTTY)  # root may open a claimed tty
    try:
        fcntl.ioctl(fd, termios.TIOCNXCL)
    finally:
        os.close(fd)


def localise(cmd: str, prefix: Path, user: str, group: str) -> str:
    """The command with the guide's paths under ``prefix``, its user and gpio group replaced."""
    for path in ("/home/dealer/shoe-ctl", "/opt/shoe-ctl", "/etc/shoe-ctl", "/var/lib/shoe-ctl"):
        cmd = cmd.replace(path, f"{prefix}{path}")
    cmd = re.sub(r"(?<![\w/.-])shoe-ctl(?![\w/.-])", user, cmd)
    return re.sub(r"\bgpio\b", group, cmd)


def test_steps_from_the_service_user_to_doctor_run_in_the_guide_order(
        scratch: tuple[Path, str, str], virtual_shoe) -> None:
    prefix, user, group = scratch
    copy_sources(prefix / "home" / "dealer" / "shoe-ctl")  # the clone of step 2
    shoe = virtual_shoe(transport="pty", serial=SERIAL, pairing=True)
    port = os.path.realpath(shoe.url)  # the pty itself (the link goes through this process's /proc)
    os.chmod(port, 0o666)  # what the udev rule's GROUP gives the service user
    state = prefix / "var" / "lib" / "shoe-ctl"
    settings = (f'table = "table-1"\n[shoe]\nurl = "{port}"\nserial = "{SERIAL}"\n'
                f'secrets = "{state}/shoes"\n[journal]\npath = "{state}/journal.sqlite3"\n')
    script, left_out = ["set -e"], []
    for section, cmd in guide_commands(GUIDE.read_text()):
        if section not in ("1", "2", "3", "4", "4b", "5"):
            continue
        words = {part.split(" ", 1)[0] for part in cmd.split(" && ")}
        if cmd.startswith("nano "):  # the technician's edit: the settings of step 3
            target = localise(cmd.split(" ", 1)[1], prefix, user, group)
            script.append(f"cat > {target} <<'EOF'\n{settings}EOF")
        elif words <= RUN:
            script.append(localise(cmd, prefix, user, group))
        else:
            left_out.append(cmd)
    assert [c for c in script if " pair " in c] and [c for c in script if " doctor " in c]
    assert not [c for c in left_out if c.split(" ", 1)[0] not in NOT_RUN and not c.startswith("cd ")], left_out
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    cwd, out = Path("/"), ""
    for cmd in script[1:]:
        if cmd.startswith("cd ") and "&&" not in cmd:
            cwd = Path(cmd[3:])
            continue
        done = subprocess.run(["bash", "-c", cmd], cwd=cwd, capture_output=True, text=True, timeout=900,
                              env={**env, "SHOE_CTL_USER": user})
        out += done.stdout
        assert done.returncode == 0, f"{cmd}\n{done.stdout}{done.stderr}"
        release(port)
    assert f"shoe {SERIAL} paired" in out
    # no signed release in a test's checkout (docs/compliance.md): its warning is the only one allowed
    assert "all well" in out or "no failure, but 1 warning(s): release" in out, out
    secret = SecretStore(state / "shoes").load(SERIAL)
    assert secret is not None and shoe.device.secret == secret
    assert (state / "shoes").stat().st_uid == (state / "shoes" / f"{SERIAL}.key").stat().st_uid != 0

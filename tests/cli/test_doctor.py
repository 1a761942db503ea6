"""``shoe-ctl doctor``: every check with fakes, and once against the virtual shoe over a pty."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import pytest
import serial
from gpiozero.pins.mock import MockFactory

from shoe_ctl.cli import doctor as doc
from shoe_ctl.cli import main
from shoe_ctl.config import load_table_config
from shoe_ctl.events import ShoeInfo


def write_cfg(tmp_path: Path, text: str = "", mode: int = 0o640) -> Path:
    f = tmp_path / "table.toml"
    f.write_text(text)
    f.chmod(mode)
    return f


class FakePort:
    closed = False

    def close(self) -> None:
        self.closed = True


class FakeLink:
    def __init__(self, info: ShoeInfo | None) -> None:
        self.info = info
        self.closed = False
        self.kwargs: dict[str, Any] = {}

    def __call__(self, url: str, events: Any, **kwargs: Any) -> FakeLink:
        self.kwargs = kwargs
        return self

    def start(self) -> FakeLink:
        return self

    def wait_connected(self, timeout: float) -> ShoeInfo:
        if self.info is None:
            raise TimeoutError(f"no hello within {timeout} s")
        return self.info

    def close(self) -> None:
        self.closed = True


INFO = ShoeInfo(1, "fw-2.3", "SN42", ("rfid", "optical"))


def test_config_check(tmp_path: Path) -> None:
    c, cfg = doc.check_config(write_cfg(tmp_path))
    assert c.status == "ok" and cfg is not None and "mode 0640" in c.detail
    c, _ = doc.check_config(write_cfg(tmp_path, mode=0o666))
    assert c.status == "fail" and "writable by everyone" in c.detail and "chmod o-w" in c.fix
    c, _ = doc.check_config(write_cfg(tmp_path, '[display]\ntoken = "x"\n', mode=0o644))
    assert c.status == "fail" and "token" in c.detail and "0640" in c.fix
    c, cfg = doc.check_config(write_cfg(tmp_path, "seats = 12\n"))
    assert c.status == "fail" and "seats" in c.detail and cfg is None


@pytest.mark.parametrize(("exc", "detail", "fix"), [
    (serial.SerialException(errno.EACCES, "could not open port /dev/shoe: [Errno 13] Permission denied"),
     "permission denied", "dialout"),
    (serial.SerialException(errno.ENOENT, "could not open port /dev/shoe: [Errno 2] No such file"),
     "no such device", "99-shoe-ctl.rules"),
    (serial.SerialException(errno.EAGAIN, "Could not exclusively lock port /dev/shoe"),
     "in use", "systemctl stop shoe-ctl"),
])
def test_port_check_failures_say_what_to_fix(tmp_path: Path, exc: Exception, detail: str, fix: str) -> None:
    cfg = load_table_config(write_cfg(tmp_path, '[shoe]\nurl = "/dev/shoe"\n'))

    def opener(url: str, **kw: Any) -> Any:
        raise exc

    c = doc.check_port(cfg, opener)
    assert c.status == "fail" and detail in c.detail and fix in c.fix


def test_port_ok_and_sim_skipped(tmp_path: Path) -> None:
    cfg = load_table_config(write_cfg(tmp_path, '[shoe]\nurl = "/dev/shoe"\nbaudrate = 57600\n'))
    port = FakePort()
    seen: dict[str, Any] = {}

    def opener(url: str, **kw: Any) -> FakePort:
        seen.update(kw, url=url)
        return port

    c = doc.check_port(cfg, opener)
    assert c.status == "ok" and port.closed and seen["exclusive"] is True and seen["baudrate"] == 57600
    assert doc.check_port(load_table_config(write_cfg(tmp_path)), opener).status == "skip"


def test_handshake_check(tmp_path: Path) -> None:
    cfg = load_table_config(write_cfg(tmp_path, '[shoe]\nurl = "/dev/shoe"\nauth = "off"\n'))
    link = FakeLink(INFO)
    c = doc.check_handshake(cfg, True, 0.1, link)
    # an unauthenticated link answers, but is a bench's: a warning, never "all well"
    assert c.status == "warn" and "firmware fw-2.3" in c.detail and "SN42" in c.detail
    assert 'auth = "off"' in c.detail and "shoe-ctl pair" in c.fix
    assert link.closed and link.kwargs["auto_ack"] is False  # the shoe keeps its events
    silent = FakeLink(None)
    c = doc.check_handshake(cfg, True, 0.1, silent)
    assert c.status == "fail" and "no hello" in c.detail and "protocol v1" in c.fix and silent.closed
    assert doc.check_handshake(cfg, False, 0.1, link).status == "skip"


def test_gpio_check(tmp_path: Path) -> None:
    cfg = load_table_config(write_cfg(tmp_path, '[leds]\nbackend = "gpio"\n[leds.pins]\ngreen = 17\n'
                                                '[buttons.pins]\nundo = 5\n'))
    factory = MockFactory()
    c = doc.check_gpio(cfg, factory)
    assert c.status == "ok" and "17" in c.detail and "5" in c.detail
    assert not any(factory._reservations.values())  # everything released
    from gpiozero import LED

    holder = LED(17, pin_factory=factory)
    try:
        c = doc.check_gpio(cfg, factory)
        assert c.status == "fail" and "InUse" in c.detail and "in use" in c.fix
    finally:
        holder.close()
    assert doc.check_gpio(load_table_config(write_cfg(tmp_path)), factory).status == "skip"


def test_journal_check(tmp_path: Path) -> None:
    cfg = load_table_config(write_cfg(tmp_path))
    j = tmp_path / "j" / "journal.sqlite3"
    c = doc.check_journal(cfg, j)
    assert c.status == "fail" and "does not exist" in c.detail and "install -d -m 0700" in c.fix
    j.parent.mkdir()
    assert doc.check_journal(cfg, j).status == "ok"
    j.write_bytes(b"")
    j.chmod(0o644)
    c = doc.check_journal(cfg, j)
    assert c.status == "fail" and "0644" in c.detail and "chmod 0600" in c.fix
    j.chmod(0o600)
    assert doc.check_journal(cfg, j).status == "ok"
    c = doc.check_journal(cfg, j, uid=os.getuid() + 1)
    assert c.status == "fail" and "owned by" in c.detail


def test_cli_exit_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "var").mkdir()
    cfg = write_cfg(tmp_path, f'[journal]\npath = "{tmp_path}/var/journal.sqlite3"\n')
    assert main(["doctor", "--config", str(cfg)]) == 0
    out = capsys.readouterr().out
    assert "ok    config" in out and "skip  port" in out
    # a scratch configuration verifies no release (SHOE_CTL_RELEASE_VERIFY=off): said, never "all well"
    assert "WARN  release" in out and out.strip().endswith("no failure, but 1 warning(s): release")
    missing = tmp_path / "nowhere" / "shoe"
    assert main(["doctor", "--config", str(cfg), "--port", str(missing), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert not report["ok"]
    by_name = {c["name"]: c for c in report["checks"]}
    assert by_name["port"]["status"] == "fail" and by_name["handshake"]["status"] == "skip"


def test_against_the_virtual_shoe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vs_mod = pytest.importorskip("hil.virtual_shoe", reason="no virtual shoe in this tree")
    from shoe_ctl.service.shoe_secrets import SecretStore, new_secret

    secret = new_secret()
    SecretStore(tmp_path / "shoes").save("VS-0001", secret)
    shoe = vs_mod.VirtualShoe(transport="pty", secret=secret).start()
    try:
        (tmp_path / "var").mkdir()
        cfg = write_cfg(tmp_path, f'[shoe]\nurl = "{shoe.url}"\nserial = "VS-0001"\nsecrets = "{tmp_path}/shoes"\n'
                        f'[journal]\npath = "{tmp_path}/var/j.sqlite3"\n')
        assert main(["doctor", "--config", str(cfg), "--timeout", "5"]) == 0
    finally:
        shoe.close()
    out = capsys.readouterr().out
    assert "ok    handshake  protocol 2" in out and "firmware virtual-1.0" in out


def test_doctor_fails_the_port_when_another_program_holds_the_device(tmp_path: Path) -> None:
    """a program that opened the shoe's port without a lock read every card and
    doctor said the port was healthy; it is now named from /proc/*/fd."""
    import os
    import pty
    import subprocess
    import sys

    from shoe_ctl.cli.doctor import check_port
    from shoe_ctl.config import ShoeConfig, TableConfig

    master, slave = pty.openpty()
    path = os.ttyname(slave)
    os.close(slave)
    reader = subprocess.Popen([sys.executable, "-c", "import sys,time; f=open(sys.argv[1],'rb',0); "
                               "print('open', flush=True); time.sleep(30)", path], stdout=subprocess.PIPE)
    try:
        assert reader.stdout is not None and reader.stdout.readline().strip() == b"open"
        check = check_port(TableConfig(shoe=ShoeConfig(url=path)))
        assert check.status == "fail" and str(reader.pid) in check.detail and "systemctl stop" in check.fix
    finally:
        reader.kill()
        reader.wait()
        os.close(master)
    assert check_port(TableConfig(shoe=ShoeConfig(url=path)), opener=lambda *a, **k: type("P", (), {
        "close": lambda self: None})()).status == "ok"


def test_handshake_of_a_paired_table_uses_the_stored_secret_and_the_pinned_serial(tmp_path: Path) -> None:
    from shoe_ctl.service.shoe_secrets import SecretStore

    text = f'[shoe]\nurl = "/dev/shoe"\nserial = "SN42"\nsecrets = "{tmp_path / "shoes"}"\n'
    cfg = load_table_config(write_cfg(tmp_path, text))
    c = doc.check_handshake(cfg, True, 0.1, FakeLink(INFO))
    assert c.status == "fail" and "not paired" in c.detail and "shoe-ctl pair" in c.fix
    secret = SecretStore(tmp_path / "shoes").save("SN42", bytes(32)).read_text()
    link = FakeLink(INFO)
    assert doc.check_handshake(cfg, True, 0.1, link).status == "ok"
    assert link.kwargs["secret"].hex() + "\n" == secret and link.kwargs["serial"] == "SN42"
    nameless = load_table_config(write_cfg(tmp_path, '[shoe]\nurl = "/dev/shoe"\n'))
    probe = FakeLink(INFO)
    c = doc.check_handshake(nameless, True, 0.1, probe)
    # a new user does not know the serial: the unpaired shoe's hello says it, unauthenticated
    assert c.status == "fail" and "[shoe] serial" in c.detail and "/dev/shoe says it is SN42" in c.detail
    assert 'set [shoe] serial = "SN42"' in c.fix and "shoe-ctl pair" in c.fix
    assert probe.kwargs["secret"] is None and probe.kwargs["auto_ack"] is False and probe.closed
    c = doc.check_handshake(nameless, True, 0.1, FakeLink(None))  # a paired shoe: no version-1 hello
    assert c.status == "fail" and "says it is" not in c.detail and "the shoe's serial number" in c.fix
    odd = FakeLink(ShoeInfo(1, "fw", "SN\x1b]0;x\x07", ("rfid",)))
    assert "SN\\x1b]0;x\\x07" in doc.check_handshake(nameless, True, 0.1, odd).detail  # printed escaped


def test_unit_check_names_a_group_the_unit_needs_and_this_system_lacks(tmp_path: Path) -> None:
    import grp
    import pwd

    shipped = (Path(__file__).parents[2] / "deploy" / "shoe-ctl.service").read_text()
    me, my_group = pwd.getpwuid(os.getuid()).pw_name, grp.getgrgid(os.getgid()).gr_name
    unit = tmp_path / "shoe-ctl.service"
    unit.write_text(shipped.replace("User=shoe-ctl", f"User={me}").replace("Group=shoe-ctl", f"Group={my_group}")
                    .replace("SupplementaryGroups=dialout gpio", f"SupplementaryGroups={my_group} no-such-gpio-grp"))
    bad = doc.check_unit(unit)
    assert bad.status == "fail" and "group no-such-gpio-grp does not exist" in bad.detail
    assert "216/GROUP" in bad.detail and bad.fix == "groupadd --system -f no-such-gpio-grp"
    unit.write_text(unit.read_text().replace(" no-such-gpio-grp", ""))
    assert doc.check_unit(unit).status == "ok"
    assert doc.check_unit(tmp_path / "absent.service").status == "skip"
    # run_checks reports it, between the journal and the floor
    cfg = write_cfg(tmp_path, 'table = "t"\n[shoe]\nurl = "sim"\n')
    names = [c.name for c in doc.run_checks(cfg, unit=unit)]
    assert names[-5:] == ["journal", "unit", "floor", "release", "users"]


def test_a_warning_is_no_failure_but_no_all_well(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = write_cfg(tmp_path, '[shoe]\nurl = "sim"\n')
    monkeypatch.setattr(doc, "check_handshake", lambda *_a, **_k: doc.Check("handshake", "warn", "bench", "pair"))
    assert main(["doctor", "--config", str(cfg)]) == 0
    out = capsys.readouterr().out
    # (the scratch configuration verifies no release: its warning too)
    assert "WARN  handshake" in out and "no failure, but 2 warning(s): handshake, release" in out
    assert "all well" not in out


def test_no_gpio_here_is_one_failure_naming_the_libraries_tried_not_eight_warnings(tmp_path: Path) -> None:
    import subprocess
    import sys

    if list(Path("/dev").glob("gpiochip*")):
        pytest.skip("this machine has a GPIO chip")
    cfg = write_cfg(tmp_path, '[shoe]\nurl = "sim"\n[leds]\nbackend = "gpio"\n[leds.pins]\ngreen = 17\nred = 24\n'
                    '[buttons.pins]\nack-alert = 6\n')
    env = {k: v for k, v in os.environ.items() if k != "GPIOZERO_PIN_FACTORY"}
    done = subprocess.run([sys.executable, "-m", "shoe_ctl.cli", "doctor", "--config", str(cfg)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 1
    assert "PinFactoryFallback" not in done.stderr and "Falling back" not in done.stderr, done.stderr
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("FAIL  gpio")]
    assert "pin libraries tried: lgpio" in line


def test_each_check_is_said_once_in_order(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Every check of CHECKS comes once, in order, with a usable configuration and without one;
    a check whose outcome comes twice (the release check run again) is printed and counted once,
    in the lines and in --json."""
    cfg = write_cfg(tmp_path, '[shoe]\nurl = "sim"\n[release]\nverify = "off"\n')
    assert [c.name for c in doc.run_checks(cfg)] == list(doc.CHECKS)
    bad = tmp_path / "bad"
    bad.mkdir()
    assert [c.name for c in doc.run_checks(write_cfg(bad, "[shoe\n"))] == list(doc.CHECKS)

    real = doc._checks

    def twice(*args: Any, **kwargs: Any) -> Any:
        for c in real(*args, **kwargs):
            yield c
            if c.name == "release":
                yield doc.check_release(cfg)  # the same finding again

    monkeypatch.setattr(doc, "_checks", twice)
    assert main(["doctor", "--config", str(cfg)]) == 0
    out = capsys.readouterr().out
    assert out.count("software verification is off") == 1
    assert out.strip().endswith("no failure, but 1 warning(s): release")
    assert main(["doctor", "--config", str(cfg), "--json"]) == 0
    checks = json.loads(capsys.readouterr().out)["checks"]
    assert [c["name"] for c in checks] == list(doc.CHECKS)

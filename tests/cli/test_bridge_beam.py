"""``shoe-ctl bridge``'s card-out beam: broken exactly while the receiver says so, for both
wirings (gpiozero's MockFactory pins)."""

from __future__ import annotations

import sys

import pytest
from gpiozero import DigitalInputDevice
from gpiozero.pins.mock import MockFactory

from shoe_ctl.cli.bridge import beam_input


@pytest.mark.parametrize("broken", ["low", "high"])
def test_the_beam_is_broken_while_the_receiver_is_at_its_broken_level(broken: str) -> None:
    factory = MockFactory()
    pin = factory.pin(17)
    whole, cut = (pin.drive_high, pin.drive_low) if broken == "low" else (pin.drive_low, pin.drive_high)
    whole()
    beam = beam_input(DigitalInputDevice, 17, broken, pin_factory=factory)
    assert beam.broken() is False
    cut()
    assert beam.broken() is True
    whole()
    assert beam.broken() is False
    beam.device.close()


def test_the_bridge_without_gpiozero_names_it(tmp_path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Without gpiozero the beam cannot be read: exit 2, the package named, no traceback."""
    from shoe_ctl.cli import main

    monkeypatch.setitem(sys.modules, "gpiozero", None)
    code = main(["bridge", "--serial", "BR-1", "--reader", f"pn532:{tmp_path / 'ttyUSB9'}",
                 "--state", str(tmp_path / "state"), "--link", str(tmp_path / "shoe"),
                 "--decks", str(tmp_path / "decks")])
    assert code == 2
    err = capsys.readouterr().err
    assert "card-out beam on GPIO 17: the Python package gpiozero is not installed" in err


def test_a_link_whose_folder_cannot_be_made_is_named_not_a_traceback(tmp_path, monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """The service user running the bridge by hand before the unit ever made /run/shoe-ctl: the
    link, the folder and the way out are said, exit 2, and the pty is not left open."""
    import os

    from gpiozero import Device

    from drivers.shoe_bridge import BridgeError, PtyPort
    from hil.virtual_pn532 import VirtualReader
    from shoe_ctl.cli import main

    blocked = tmp_path / "a-file"
    blocked.write_text("")
    link = blocked / "shoe"  # its folder is a file: it can never be made
    open_fds = len(os.listdir("/proc/self/fd"))
    with pytest.raises(BridgeError, match=rf"--link {link}: cannot put the shoe's symlink there"):
        PtyPort(link)
    assert len(os.listdir("/proc/self/fd")) == open_fds

    monkeypatch.setattr(Device, "pin_factory", MockFactory())
    with VirtualReader() as vr:
        code = main(["bridge", "--serial", "BR-1", "--reader", f"pn532:{vr.url}", "--state", str(tmp_path / "st"),
                     "--link", str(link), "--decks", str(tmp_path / "decks")])
    assert code == 2
    err = capsys.readouterr().err
    assert f"--link {link}: cannot put the shoe's symlink there" in err
    assert f"must be able to write {blocked}" in err and "Traceback" not in err


NO_FACTORY = {"GPIOZERO_PIN_FACTORY": "no-such-factory"}
"""gpiozero asked for a pin library that does not exist: what a machine without a working one
(no lgpio, no GPIO chip, lgpio failing in the working folder) gets, on any test host."""


def _run_without_gpio(tmp_path, *args: str) -> tuple[int, str]:
    import os
    import subprocess

    from hil.virtual_pn532 import Tag, VirtualReader

    with VirtualReader() as vr:
        vr.place(Tag(bytes.fromhex("04a1b2c3d4e5f6")))
        done = subprocess.run([sys.executable, "-m", "shoe_ctl.cli", *(a.replace("PN532", vr.url) for a in args)],
                              cwd=tmp_path, env={**os.environ, **NO_FACTORY}, capture_output=True, text=True,
                              timeout=60)
        # the reader's port was let go: the chip's pty opens again, exclusively
        import serial

        serial.Serial(vr.url, 115200, exclusive=True, timeout=0.1).close()
    return done.returncode, done.stderr


def test_a_reset_line_without_a_pin_library_is_named_not_a_traceback(tmp_path) -> None:
    """The build guide's reader spec with its reset line (``?reset=25``) on a machine whose GPIO
    does not load: the reader, its reset line, the cause and the fix, exit 1; no traceback, no
    warning per pin library."""
    code, err = _run_without_gpio(tmp_path, "deck", "scan", "--reader", "pn532:PN532?reset=25", "--scans", "1")
    assert code == 1
    assert "reader pn532:" in err and "?reset=25: reset line GPIO 25: BadPinFactory" in err
    assert "fix:" in err and "Traceback" not in err and "PinFactoryFallback" not in err


def test_a_beam_without_a_pin_library_is_named_not_a_traceback(tmp_path) -> None:
    code, err = _run_without_gpio(tmp_path, "bridge", "--serial", "BR-1", "--reader", "pn532:PN532",
                                  "--state", str(tmp_path / "st"), "--link", str(tmp_path / "shoe"),
                                  "--decks", str(tmp_path / "decks"))
    assert code == 2
    assert "beam on GPIO 17: BadPinFactory" in err and "fix:" in err
    assert "Traceback" not in err and "PinFactoryFallback" not in err

"""Reader specs (``pn532:PORT?reset=GPIO``, ``pepper:PORT``) and opening a reader from one."""

from __future__ import annotations

import sys

import pytest

from drivers.reader_port import (
    ReaderLibraryError,
    ReaderSpec,
    ReaderSpecError,
    open_reader,
    parse_spec,
    require_libraries,
)
from hil.virtual_pepper import VirtualPepperReader
from hil.virtual_pn532 import Tag, VirtualReader

ANSWER_S = 10.0
"""How long these tests let a virtual reader take to answer: its thread shares a loaded machine
with the test (the modules' defaults, 0.1 s and 0.3 s, are a real module's answer times)."""


def test_parse_specs() -> None:
    assert parse_spec("pn532:/dev/serial0?reset=25") == ReaderSpec("pn532", "/dev/serial0", 25)
    assert parse_spec("pepper:/dev/ttyACM0") == ReaderSpec("pepper", "/dev/ttyACM0", None)
    assert str(parse_spec("pn532:/dev/ttyUSB0")) == "pn532:/dev/ttyUSB0"


@pytest.mark.parametrize("text, words", [
    ("nfc:/dev/x", "FAMILY:PORT"), ("/dev/ttyUSB0", "FAMILY:PORT"), ("pn532:", "no serial port"),
    ("pn532:/dev/x?rst=3", "unknown option 'rst'"), ("pn532:/dev/x?reset=40", "not a BCM GPIO"),
    ("pepper:/dev/x?reset=4", "no reset line"),
])
def test_bad_specs_are_named(text: str, words: str) -> None:
    with pytest.raises(ReaderSpecError, match=words):
        parse_spec(text)


def test_open_a_pn532_with_its_reset_on_a_mock_gpio() -> None:
    from gpiozero.pins.mock import MockFactory

    factory = MockFactory()
    with VirtualReader() as vr, open_reader(f"pn532:{vr.url}?reset=25", pin_factory=factory, timeout=ANSWER_S) as opened:
        opened.reader.start()
        levels = [s.state for s in factory.pin(25).states]
        assert levels[-2:] == [False, True] and factory.pin(25).state is True  # pulsed low, released
        vr.place(Tag(bytes.fromhex("04a1b2c3d4e5f6")))
        assert opened.reader.scan() == [bytes.fromhex("04a1b2c3d4e5f6")]


def test_open_a_pepper_and_a_port_that_is_missing(tmp_path) -> None:
    with VirtualPepperReader() as vp, open_reader(f"pepper:{vp.url}", timeout=ANSWER_S) as opened:
        opened.reader.start()
        assert opened.reader.name == "pepper-c1"
        opened.reader._close()
    with pytest.raises(OSError, match=r"reader pn532:.*ttyUSB9: cannot open"):
        open_reader(f"pn532:{tmp_path / 'ttyUSB9'}")


@pytest.mark.parametrize("spec, masked, package", [
    ("pn532:{port}", "adafruit_pn532.uart", "adafruit-circuitpython-pn532"),
    ("pn532:{port}?reset=25", "gpiozero", "gpiozero"),
    ("pepper:{port}", "pepper_c1", "pepper-c1"),
])
def test_a_missing_reader_library_is_named_with_its_install_before_the_port_is_opened(
        tmp_path, monkeypatch: pytest.MonkeyPatch, spec: str, masked: str, package: str) -> None:
    """A machine set up without the ``pi`` extra: the package and its install command are named,
    and the port (which does not exist here) is never tried."""
    monkeypatch.setitem(sys.modules, masked, None)  # None in sys.modules: the import fails
    with pytest.raises(ReaderLibraryError) as caught:
        open_reader(spec.format(port=tmp_path / "ttyUSB9"))
    text = str(caught.value)
    assert f"the Python package {package} is not installed" in text
    assert "bash scripts/setup.sh pi" in text and "cannot open" not in text


def test_every_missing_library_is_named_once() -> None:
    with pytest.raises(ReaderLibraryError, match=r"packages no-such-a, no-such-b are not installed"):
        require_libraries("beam", [("shoe_ctl_no_such_a", "no-such-a"), ("gpiozero", "gpiozero"),
                                   ("shoe_ctl_no_such_b", "no-such-b")])
    require_libraries("beam", [("gpiozero", "gpiozero")])  # installed: nothing raised

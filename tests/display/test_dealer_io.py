"""Wiring the dealer's LEDs, display and buttons from the table configuration."""

from __future__ import annotations

import io
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory

from drivers.buttons import DealerButtons
from drivers.leds import ConsoleLedSink, GpioLedSink, ShoeLedSink
from shoe_ctl.config import load_table_config
from shoe_ctl.dealer_io import start_dealer_io
from shoe_ctl.display import DisplayError
from shoe_ctl.events import DealerAction, DealerInput, Instruction, Signal


def cfg(tmp_path: Path, text: str) -> Any:
    f = tmp_path / "table.toml"
    f.write_text(text)
    return load_table_config(f)


def test_gpio_board_shoe_leds_display_and_buttons(tmp_path: Path) -> None:
    c = cfg(tmp_path, '[leds]\nbackend = "gpio"\n[leds.pins]\ngreen = 17\nred = 24\n'
                      '[buttons.pins]\nundo = 5\n[display]\nport = 0\n')
    posted: list[Any] = []
    sent: list[dict[str, Any]] = []
    factory = MockFactory()
    dio = start_dealer_io(c, posted.append, send_leds=sent.append, pin_factory=factory, env={})
    try:
        kinds = [type(s) for s in dio.sinks]
        assert kinds[:2] == [GpioLedSink, ShoeLedSink] and isinstance(dio.buttons, DealerButtons)
        assert dio.sinks[-1] is dio.display  # the display after the LEDs
        for sink in dio.sinks:
            sink.handle(Instruction(Signal.DEAL, "Deal seat 2 up", seat=2, face="up"))
        dio.sinks[1].flush()
        dio.display.sync()
        assert [s.state for s in factory.pin(17).states] == [False, True]
        assert sent[0]["name"] == "deal"
        assert dio.display_url is not None
        with urllib.request.urlopen(dio.display_url + "state", timeout=5) as r:
            assert json.loads(r.read())["instruction"]["text"] == "Deal seat 2 up"
        factory.pin(5).drive_low()
        assert posted == [DealerInput(DealerAction.UNDO)]
    finally:
        dio.close()
    dio.close()


def test_console_default_display_off_and_errors(tmp_path: Path) -> None:
    out = io.StringIO()
    dio = start_dealer_io(cfg(tmp_path, ""), print, display=None, stream=out)
    assert [type(s) for s in dio.sinks] == [ConsoleLedSink] and dio.display_url is None
    dio.sinks[0].handle(Instruction(Signal.BURN, "Burn"))
    assert dio.sinks[0].flush()
    assert out.getvalue().startswith("signal=burn")
    dio.close()
    with pytest.raises(ValueError, match="send_leds"):
        start_dealer_io(cfg(tmp_path, '[leds]\nbackend = "shoe"\n'), print, display=None)
    with pytest.raises(DisplayError, match="token"):
        start_dealer_io(cfg(tmp_path, ""), print, display=("0.0.0.0", 0), env={})
    token_cfg = cfg(tmp_path, '[display]\nport = 0\ntoken = "from-file-0123456789"\n')
    dio = start_dealer_io(token_cfg, print, env={"SHOE_CTL_DISPLAY_TOKEN": "from-env-0123456789"})
    try:
        for token, status in (("from-file-0123456789", 401), ("from-env-0123456789", 202)):
            req = urllib.request.Request(f"{dio.display_url}input", data=b'{"action": "undo"}', method="POST",
                                         headers={"Content-Type": "application/json", "X-Shoe-Token": token})
            try:
                with urllib.request.urlopen(req, timeout=5) as r:
                    assert r.status == status
            except urllib.error.HTTPError as e:
                assert e.code == status
    finally:
        dio.close()


def test_led_backends_come_from_one_map_that_the_configuration_names(tmp_path: Path) -> None:
    from drivers.leds import MockLedSink
    from shoe_ctl import config
    from shoe_ctl.dealer_io import LED_BACKENDS

    assert set(LED_BACKENDS) == set(config._LED_BACKENDS)
    c = cfg(tmp_path, '[leds]\nbackend = "mock"\n[display]\nenabled = false\n')
    dio = start_dealer_io(c, lambda _ev: None, console=True, stream=io.StringIO(), env={})
    try:
        assert [type(s) for s in dio.sinks] == [ConsoleLedSink, MockLedSink]  # the map's order
        mock = dio.sinks[1]
        mock.handle(Instruction(Signal.BURN, "burn"))
        mock.handle(DealerInput(DealerAction.UNDO))  # not a command it shows
        assert mock.signals() == [Signal.BURN]
    finally:
        dio.close()

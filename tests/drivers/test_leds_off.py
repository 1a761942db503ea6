"""``shoe-ctl leds off``: what the unit runs after the service's process ended (ExecStopPost=):
LEDs a killed service left lit are switched off (docs/service.md, *When the service stops or
hangs*)."""

from __future__ import annotations

from pathlib import Path

from gpiozero.pins.mock import MockFactory

from drivers.leds import GpioLedSink
from shoe_ctl.cli import main
from shoe_ctl.cli.leds import switch_off
from shoe_ctl.signals import PATTERNS, Signal

PINS = {"green": 17, "amber": 27, "blue": 22, "white": 23, "red": 24}


def test_leds_a_dead_service_left_lit_are_switched_off(tmp_path: Path) -> None:
    cfg = tmp_path / "table.toml"
    cfg.write_text('[leds]\nbackend = "gpio"\n[leds.pins]\n' + "".join(f"{k} = {v}\n" for k, v in PINS.items()))
    factory = MockFactory()
    sink = GpioLedSink(PINS, pin_factory=factory)
    sink.show(PATTERNS[Signal.DEAL])  # the service said deal, then died: nobody switches it off
    green = factory.pin(PINS["green"])
    assert green.state
    sink.board.close()  # the process is gone: its pins released as they were
    said = switch_off(cfg, pin_factory=factory)
    assert said.startswith("LEDs off: green (pin 17)")
    assert [factory.pin(p).state for p in PINS.values()] == [False] * len(PINS)


def test_without_gpio_leds_there_is_nothing_to_do(tmp_path: Path, capsys) -> None:
    cfg = tmp_path / "table.toml"
    cfg.write_text('[leds]\nbackend = "console"\n')
    assert main(["leds", "off", "--config", str(cfg)]) == 0
    assert "nothing to switch off" in capsys.readouterr().out
    bad = tmp_path / "bad.toml"
    bad.write_text("[leds]\nbackend = 3\n")
    assert main(["leds", "off", "--config", str(bad)]) == 2

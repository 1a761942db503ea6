"""Hardware keys of config/table.toml: LED pins by name, PWM, buttons, display token."""

from __future__ import annotations

from pathlib import Path

import pytest

from shoe_ctl.config import load_table_config
from shoe_ctl.rules.profiles import ProfileError


def test_hardware_keys_read(tmp_path: Path) -> None:
    f = tmp_path / "t.toml"
    f.write_text('[leds]\nbackend = "gpio"\npwm = true\nactive_high = false\n[leds.pins]\ngreen = 17\nred = 24\n'
                 '[buttons]\nbounce_ms = 20\n[buttons.pins]\nbetting-complete = 5\nack-alert = 6\n'
                 '[display]\nhost = "0.0.0.0"\ntoken = "s3cret"\n')
    cfg = load_table_config(f)
    assert cfg.leds.pins == {"green": 17, "red": 24} and cfg.leds.pwm and not cfg.leds.active_high
    assert cfg.buttons.pins == {"betting-complete": 5, "ack-alert": 6} and cfg.buttons.bounce_ms == 20
    assert cfg.display.token == "s3cret" and cfg.display.host == "0.0.0.0"


@pytest.mark.parametrize(("text", "key", "allowed"), [
    ("[leds.pins]\npurple = 4", "leds.pins.purple", "green, amber, blue, white, red"),
    ("[leds]\npwm = 'yes'", "leds.pwm", "true, false"),
    ("[buttons.pins]\nfold = 5", "buttons.pins.fold", "betting-complete"),
    ("[buttons.pins]\nundo = 99", "buttons.pins.undo", "0..27"),
    ("[leds.pins]\ngreen = 5\n[buttons.pins]\nundo = 5", "buttons.pins.undo", "a free BCM pin"),
    ("[buttons]\nbounce_ms = 5000", "buttons.bounce_ms", "0..1000"),
    ("[display]\ntoken = 5", "display.token", "a text"),
])
def test_hardware_key_errors(tmp_path: Path, text: str, key: str, allowed: str) -> None:
    f = tmp_path / "t.toml"
    f.write_text(text + "\n")
    with pytest.raises(ProfileError) as exc:
        load_table_config(f)
    assert str(exc.value).startswith(f"{f}: {key}: ") and allowed in str(exc.value)

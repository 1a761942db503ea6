"""The two rule profiles every layer's tests deal under, loaded once from config/ (tda.toml,
house.toml): ``PROFILES`` maps the profile name to its :class:`~shoe_ctl.rules.profiles.RuleProfile`."""

from __future__ import annotations

from shoe_ctl.config import load_profile

TDA = load_profile("tda")
HOUSE = load_profile("house")
PROFILES = {"tda": TDA, "house": HOUSE}

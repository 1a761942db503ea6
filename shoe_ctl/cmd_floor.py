"""``shoe-ctl floor``: registered from :mod:`shoe_ctl.floor.cli` (see there and ``docs/floor.md``)."""

from shoe_ctl.floor.cli import register

__all__ = ["register"]

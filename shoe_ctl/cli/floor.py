"""``shoe-ctl floor``: the floor page and consumer (:mod:`shoe_ctl.floor.cli`; docs/floor.md)."""

from shoe_ctl.floor.cli import register

__all__ = ["register"]

"""The dealing machine: :class:`Dealing` and its collaborators, one role per module
(``docs/state-machine.md``, section *Structure*)."""

from shoe_ctl.machine import hsm  # noqa: F401  first: it loads the library's nesting module alone (its docstring)
from shoe_ctl.machine.dealing import Dealing, MachineFault, PlanMismatch, Read

__all__ = ["Dealing", "MachineFault", "PlanMismatch", "Read"]

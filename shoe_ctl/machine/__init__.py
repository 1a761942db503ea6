"""The dealing machine: :class:`Dealing` and its collaborators, one role per module
(``docs/state-machine.md``, section *Structure*)."""

from shoe_ctl.machine.dealing import Dealing, MachineFault, PlanMismatch, Read

__all__ = ["Dealing", "MachineFault", "PlanMismatch", "Read"]

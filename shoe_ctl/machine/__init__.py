"""The dealing state machine (``transitions`` HierarchicalMachine): :class:`Dealing`."""

from shoe_ctl.machine.dealing import Dealing, MachineFault, PlanMismatch, Read

__all__ = ["Dealing", "MachineFault", "PlanMismatch", "Read"]

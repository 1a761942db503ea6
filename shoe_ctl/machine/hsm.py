"""The ``transitions`` ``HierarchicalMachine`` the dealing machine runs on, with its state lookups
memoised.

A trigger of a ``HierarchicalMachine`` looks states up by name several times (the source, the
destination, every state on the path, the model's new state), each lookup walking the nesting
levels through the machine's scope context; on the dealing machine's three levels that was about
a fifth of a trigger's cost (``docs/performance.md``). :class:`LeanHierarchicalMachine` keeps
each lookup's answer, keyed by the scope it was asked in and the name: the states are all added
when the machine is built, and adding states later clears the memo. Everything else, triggers,
conditions, callbacks, queueing and ``on_exception``, is the library's own.
"""

from __future__ import annotations

from typing import Any

from transitions.extensions import HierarchicalMachine

__all__ = ["LeanHierarchicalMachine"]


class LeanHierarchicalMachine(HierarchicalMachine):
    """``HierarchicalMachine`` whose ``get_state`` by name (or name path) is memoised per scope."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._state_memo: dict[tuple[tuple[str, ...], Any], Any] = {}
        super().__init__(*args, **kwargs)

    def add_states(self, *args: Any, **kwargs: Any) -> None:
        self._state_memo = {}
        super().add_states(*args, **kwargs)

    def get_state(self, state: Any, hint: Any = None) -> Any:
        if hint is None:
            if isinstance(state, str):
                key: Any = state
            elif isinstance(state, list):
                key = tuple(state)
            else:
                return super().get_state(state, hint)
            memo_key = (tuple(self.prefix_path), key)
            found = self._state_memo.get(memo_key)
            if found is None:
                found = super().get_state(state, hint)  # raises ValueError for an unknown state
                self._state_memo[memo_key] = found
            return found
        return super().get_state(state, hint)

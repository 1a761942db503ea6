"""The ``transitions`` ``HierarchicalMachine`` the dealing machine runs on, with its lookups and
its trigger resolution memoised.

A trigger of a ``HierarchicalMachine`` looks states up by name several times (the source, the
destination, every state on the path, the model's new state), each lookup walking the nesting
levels through the machine's scope context, then finds which scopes hold the event and which of
the current state's ancestors have transitions for it, and for the transition taken works out the
states to exit and enter. On the dealing machine's three levels that walk was most of a trigger's
cost (``docs/performance.md``, "Replay at 2x"). The states and transitions are all added when the
machine is built, so every one of those answers depends only on the model's state (and the
scope): :class:`LeanHierarchicalMachine` works each out once, with the library's own code, and
keeps it; adding states or transitions clears what was kept. The transitions then run as the
library runs them: conditions, ``prepare``/``before``/``after`` callbacks, the states' exit and
enter callbacks in the library's order, the model's state set by the library's ``set_state``,
queueing and ``on_exception``. A model whose state is not a plain name (parallel states, enums)
and a machine with final states take the library's own path. ``tests/machine/test_hsm.py``
compares it with the plain class on random trigger sequences.
"""

from __future__ import annotations

from functools import reduce
from typing import Any

from transitions.extensions import HierarchicalMachine
from transitions.extensions.nesting import NestedTransition, _build_state_list, resolve_order

__all__ = ["LeanHierarchicalMachine"]

_UNSET = object()


class LeanNestedTransition(NestedTransition):
    """``NestedTransition`` whose exit/enter resolution is kept per model state and scope."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._resolved: dict[tuple[str, tuple[str, ...]], Any] = {}

    def _change_state(self, event_data: Any) -> None:
        machine = event_data.machine
        current = getattr(event_data.model, machine.model_attribute)
        if type(current) is not str or machine._has_final:
            super()._change_state(event_data)
            return
        key = (current, tuple(machine.prefix_path))
        recipe = self._resolved.get(key)
        if recipe is None:
            had_scope = getattr(event_data, "scope", _UNSET)
            state_tree, exit_partials, enter_partials = self._resolve_transition(event_data)
            scope = getattr(event_data, "scope", _UNSET)
            if scope is had_scope:
                scope = _UNSET
            recipe = ([(p.func, p.args[1:]) for p in exit_partials],  # type: ignore[attr-defined]
                      _build_state_list(state_tree, machine.state_cls.separator),
                      [(p.func, p.args[1:]) for p in enter_partials],  # type: ignore[attr-defined]
                      scope)
            self._resolved[key] = recipe
        exits, model_states, enters, scope = recipe
        if scope is not _UNSET:
            event_data.scope = list(scope)  # type: ignore[arg-type]
        for func, rest in exits:
            func(event_data, *rest)
        with machine():
            machine.set_state(model_states, event_data.model)
            event_data.state = machine.get_state(model_states)
        for func, rest in enters:
            func(event_data, *rest)


class LeanHierarchicalMachine(HierarchicalMachine):
    """``HierarchicalMachine`` whose ``get_state`` by name (or name path) is memoised per scope and
    whose trigger resolution (the scopes and source states that handle a trigger from a given
    state, the states a transition exits and enters) is worked out once per state."""

    transition_cls = LeanNestedTransition

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._state_memo: dict[tuple[tuple[str, ...], Any], Any] = {}
        self._plans: dict[tuple[str, str], list[Any]] = {}
        self._has_final = False
        super().__init__(*args, **kwargs)

    def add_states(self, *args: Any, **kwargs: Any) -> None:
        self._state_memo = {}
        self._plans = {}
        super().add_states(*args, **kwargs)
        self._has_final = self._any_final()

    def add_transition(self, *args: Any, **kwargs: Any) -> None:
        self._plans = {}
        super().add_transition(*args, **kwargs)

    def remove_transition(self, *args: Any, **kwargs: Any) -> None:
        self._plans = {}
        super().remove_transition(*args, **kwargs)

    def _any_final(self) -> bool:
        if self.on_final:
            return True
        stack = list(self.states.values())
        while stack:
            state = stack.pop()
            if state.final or getattr(state, "on_final", None):
                return True
            stack.extend(state.states.values())
        return False

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

    # ------------------------------------------------------------------ trigger resolution

    def _plan(self, current: str, trigger: str) -> list[Any]:
        """The library's walk for ``trigger`` from ``current``, without running anything: the
        scopes holding the event, innermost first, each with its scope context and the states
        (innermost first) whose transitions for the event are tried, as in ``trigger_nested``."""
        path = current.split(self.state_cls.separator)
        levels = []
        for depth in range(len(path) - 1, -1, -1):
            with self():
                for name in path[:depth]:
                    self._next_scope = self(name)._next_scope
                    self.__enter__()
                try:
                    event = self.events.get(trigger)
                    if event is None:
                        continue
                    context = (self.scoped, self.states, self.events, list(self.prefix_path))
                    tree = self.build_state_tree(current, self.state_cls.separator)
                    tree = reduce(dict.get, self.get_global_name(join=False), tree)  # type: ignore[arg-type]
                    sources = []
                    for state_path in resolve_order(tree):
                        name = self.state_cls.separator.join(state_path)
                        if name in event.transitions:
                            sources.append((name, tuple(state_path), self.get_state(name)))
                    levels.append((context, event, sources))
                finally:
                    for _ in path[:depth]:
                        self.__exit__(None, None, None)
        return levels

    def _trigger_event_nested(self, event_data: Any, trigger: str, _state_tree: Any) -> Any:
        current = getattr(event_data.model, self.model_attribute)
        if _state_tree is not None or type(current) is not str:
            return super()._trigger_event_nested(event_data, trigger, _state_tree)  # type: ignore[misc]
        levels = self._plans.get((current, trigger))
        if levels is None:
            levels = self._plans[(current, trigger)] = self._plan(current, trigger)
        res = None
        for context, event, sources in levels:
            if res is not None and res is not False:
                break
            scoped, states, events, prefix = context
            self._next_scope = (scoped, states, events, list(prefix))
            with self:
                event_data.event = event
                for name, state_path, state in sources:
                    event_data.state = state
                    event_data.source_name = name
                    event_data.source_path = list(state_path)
                    event._process(event_data)
                    if event_data.result:
                        break
                tmp = event_data.result
            if tmp is not None:
                res = tmp
        return None if res is None else bool(res)

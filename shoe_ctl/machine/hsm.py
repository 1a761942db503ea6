"""The ``transitions`` ``HierarchicalMachine`` the dealing machine runs on
(:class:`LeanHierarchicalMachine`): its state lookups and each trigger's resolution worked out
once per state and kept, the transitions run as the library runs them, without its log calls
while its loggers would drop every record. Why, and what takes the library's own path:
docs/performance.md, "Replay at 2x: the trigger path". The library's ``nesting`` module is
loaded without ``transitions.extensions``' ``__init__`` (:func:`package_on_demand`)."""

from __future__ import annotations

import importlib.util
import logging
import sys
import threading
from collections.abc import Callable
from functools import partial, reduce
from typing import Any

__all__ = ["LeanHierarchicalMachine", "package_on_demand"]


def package_on_demand(name: str) -> bool:
    """Let the submodules of the package ``name`` load without running the package's
    ``__init__`` until one of its own names is first read.

    ``transitions.extensions`` imports every extension of the library in its ``__init__`` (the
    asyncio machines bring ``asyncio``, ``ssl`` and ``socket``; the diagrams, the locking
    machines): about a fifth of what a short command such as ``shoe-ctl replay`` spends on imports,
    for a machine that needs ``nesting`` and ``states`` alone. This puts in ``sys.modules`` a
    module for the package with the package's own spec and path, so its submodules import as
    usual, and a module ``__getattr__`` that runs the package's ``__init__`` in it the first time
    a name the package defines is read (``from transitions.extensions import GraphMachine``):
    the package is then whole, as if imported at once. Nothing is done when the package is
    loaded already or cannot be found (the usual import then raises). True when the module was
    put in place. docs/performance.md, "The replay a user runs"."""
    if name in sys.modules:
        return False
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return False
    module = importlib.util.module_from_spec(spec)
    loader = spec.loader
    # threads that read a name first wait while one runs the package's __init__; the package's
    # own code reading a name it has not set yet gets the AttributeError of a module half made
    once = threading.RLock()
    running: list[bool] = []

    def complete(attr: str) -> Any:
        with once:
            if running:
                raise AttributeError(f"partially initialized module {name!r} has no attribute {attr!r}")
            if module.__dict__.get("__getattr__") is complete:
                running.append(True)
                try:
                    loader.exec_module(module)  # raises as the import would (and is tried again)
                    if module.__dict__.get("__getattr__") is complete:  # (unless it has its own)
                        del module.__dict__["__getattr__"]  # the package's own names from now on
                finally:
                    running.clear()
        return getattr(module, attr)

    module.__dict__["__getattr__"] = complete
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent and parent in sys.modules:
        setattr(sys.modules[parent], child, module)
    return True


package_on_demand("transitions.extensions")

from transitions.core import Condition, Machine, State  # noqa: E402  (the package's stand-in first)
from transitions.extensions.nesting import (  # noqa: E402
    HierarchicalMachine,
    NestedEvent,
    NestedEventData,
    NestedState,
    NestedTransition,
    _build_state_list,
    resolve_order,
)

_UNSET = object()


def _running() -> None:
    """What heads the machine's queue while a trigger runs directly (never called)."""


_CORE_LOG = logging.getLogger("transitions.core")
_NESTING_LOG = logging.getLogger("transitions.extensions.nesting")


def _library_silent() -> bool:
    """Whether the library's loggers would drop every record of a transition's path: ``State``,
    ``Transition`` and ``Machine.callbacks`` log at DEBUG and INFO on ``transitions.core``,
    ``NestedEvent._process`` at DEBUG on ``transitions.extensions.nesting``."""
    return not (_CORE_LOG.isEnabledFor(logging.INFO) or _NESTING_LOG.isEnabledFor(logging.DEBUG))


def _plain_state_cls(cls: type) -> bool:
    """Whether ``cls`` enters and exits as ``NestedState`` does (its callbacks, no more)."""
    return (cls.enter is State.enter and cls.exit is State.exit  # type: ignore[attr-defined]
            and cls.scoped_enter is NestedState.scoped_enter  # type: ignore[attr-defined]
            and cls.scoped_exit is NestedState.scoped_exit)  # type: ignore[attr-defined]


class LeanNestedTransition(NestedTransition):
    """``NestedTransition`` whose exit/enter resolution is kept per model state and scope."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._resolved: dict[tuple[str, tuple[str, ...]], Any] = {}

    def _recipe(self, event_data: NestedEventData, current: str) -> Any:
        """What a change of state from ``current`` (in the machine's present scope) does: the
        library's exit and enter calls (bound method, its arguments after the event data), the
        model's new state (value and ``State``), the event data's ``scope`` if the library sets
        one, and the same exits and enters as (state, scope) pairs when every one of them is a
        plain ``scoped_exit`` / ``scoped_enter`` (else ``None``)."""
        machine = event_data.machine
        key = (current, tuple(machine.prefix_path))
        recipe = self._resolved.get(key)
        if recipe is None:
            had_scope = getattr(event_data, "scope", _UNSET)
            state_tree, exit_partials, enter_partials = self._resolve_transition(event_data)
            scope = getattr(event_data, "scope", _UNSET)
            if scope is had_scope:
                scope = _UNSET
            exits = [(p.func, p.args[1:]) for p in exit_partials]  # type: ignore[attr-defined]
            enters = [(p.func, p.args[1:]) for p in enter_partials]  # type: ignore[attr-defined]
            model_states = _build_state_list(state_tree, machine.state_cls.separator)
            with machine():
                value = machine._set_state(model_states)
                new_state = machine.get_state(model_states)
            plain = None
            if (type(model_states) is str and type(value) is str
                    and all(getattr(f, "__func__", None) is NestedState.scoped_exit and len(r) == 1 for f, r in exits)
                    and all(getattr(f, "__func__", None) is NestedState.scoped_enter and len(r) == 1
                            for f, r in enters)
                    and all(_plain_state_cls(type(f.__self__)) for f, _ in exits + enters)):
                plain = ([(f.__self__, r[0] or []) for f, r in exits],
                         [(f.__self__, r[0] or []) for f, r in enters])
            recipe = (exits, model_states, enters, scope, value, new_state, plain)
            self._resolved[key] = recipe
        return recipe

    def _change_state(self, event_data: NestedEventData) -> None:  # type: ignore[override]  # as the library's own stub
        machine = event_data.machine
        current = getattr(event_data.model, machine.model_attribute)
        if type(current) is not str or machine._has_final:
            super()._change_state(event_data)
            return
        exits, model_states, enters, scope, _value, _state, _plain = self._recipe(event_data, current)
        if scope is not _UNSET:
            event_data.scope = list(scope)  # type: ignore[attr-defined]
        for func, rest in exits:
            func(event_data, *rest)
        with machine():
            machine.set_state(model_states, event_data.model)
            event_data.state = machine.get_state(model_states)
        for func, rest in enters:
            func(event_data, *rest)

    def execute_silent(self, event_data: NestedEventData) -> bool:
        """``Transition.execute`` for a machine whose library loggers drop every record (the
        caller checked): the same callbacks in the same order (``prepare``, the conditions,
        the machine's ``before_state_change`` then ``before``, the exits, the model's new state,
        the enters, ``after`` then the machine's ``after_state_change``), the same event data,
        with no log call and the change of state from the kept recipe. A callback named on the
        model is resolved and called here as ``Machine.callback`` does (:func:`_resolved`) when
        the machine resolves and calls callbacks the library's way (``_inline_callbacks``)."""
        machine = event_data.machine
        model = event_data.model
        if not machine._inline_callbacks or not machine.send_event:
            return self._execute_silent_library(event_data)
        if self.prepare:
            _call_each(self.prepare, model, event_data)
        for cond in self.conditions:
            if type(cond) is not Condition:
                if not cond.check(event_data):
                    return False
                continue
            func = cond.func
            if isinstance(func, str):
                found = getattr(model, func, _UNSET)
                if found is _UNSET:  # a dotted path, or the library's error
                    func = _resolved(func, model, event_data)
                elif not callable(found):  # a property's value, as the library's wrapper gives it
                    if not found == cond.target:
                        return False
                    continue
                else:
                    func = found
            if not func(event_data) == cond.target:
                return False
        if machine._before_state_change:  # (the lists behind the library's properties)
            _call_each(machine._before_state_change, model, event_data)
        if self.before:
            _call_each(self.before, model, event_data)
        if self.dest:
            self._enter_dest(event_data, machine, model, None)
        if self.after:
            _call_each(self.after, model, event_data)
        if machine._after_state_change:
            _call_each(machine._after_state_change, model, event_data)
        return True

    def _execute_silent_library(self, event_data: NestedEventData) -> bool:
        """:meth:`execute_silent` with every callback through the machine's ``callback`` (a
        machine that resolves or calls them its own way, or sends no event data)."""
        machine = event_data.machine
        callback = machine.callback
        for func in self.prepare:
            callback(func, event_data)
        for cond in self.conditions:
            if not cond.check(event_data):
                return False
        for func in machine.before_state_change:
            callback(func, event_data)
        for func in self.before:
            callback(func, event_data)
        if self.dest:
            self._enter_dest(event_data, machine, event_data.model, callback)
        for func in self.after:
            callback(func, event_data)
        for func in machine.after_state_change:
            callback(func, event_data)
        return True

    def _enter_dest(self, event_data: NestedEventData, machine: Any, model: Any, callback: Any) -> None:
        """The change of state of :meth:`execute_silent`: the exits, the model's new state, the
        enters, from the kept recipe when every one is a plain state's; a state's callbacks run
        through ``callback`` (``None``: the machine's ``callback``, looked up only for them)."""
        current = getattr(model, machine.model_attribute)
        plain = None
        if type(current) is str and not machine._has_final:
            recipe = self._resolved.get((current, tuple(machine.prefix_path))) or self._recipe(event_data, current)
            _exits, _names, _enters, scope, value, new_state, plain = recipe
        if plain is None:
            self._change_state(event_data)
        else:
            if scope is not _UNSET:
                event_data.scope = list(scope)  # type: ignore[attr-defined]
            for step in plain[0]:  # (a state without on_exit callbacks is passed over at once)
                if step[0].on_exit:
                    _scoped_callbacks((step,), "on_exit", callback or machine.callback, event_data)
            setattr(model, machine.model_attribute, value)
            event_data.state = new_state
            for step in plain[1]:
                if step[0].on_enter:
                    _scoped_callbacks((step,), "on_enter", callback or machine.callback, event_data)


def _call_each(funcs: list[Any], model: Any, event_data: NestedEventData) -> None:
    """Call each callback of ``funcs`` with the event data, in order, resolved as
    ``Machine.resolve_callable`` resolves it (:func:`_resolved`; a name the model has as a
    callable attribute looked up here)."""
    for func in funcs:
        if isinstance(func, str):
            found = getattr(model, func, _UNSET)
            if found is not _UNSET:
                if callable(found):
                    found(event_data)
                continue  # (a property's value: the library's wrapper returns it, unused)
        _resolved(func, model, event_data)(event_data)


def _resolved(func: Any, model: Any, event_data: NestedEventData) -> Callable[..., Any]:
    """``func`` as ``Machine.resolve_callable`` gives it: a name the model has as a callable
    attribute, that attribute; any other name through the library's own resolution (a
    property's value, a dotted path imported, its error); a callable as it is."""
    if isinstance(func, str):
        found = getattr(model, func, _UNSET)
        if found is _UNSET:  # a dotted path, or the library's error
            return Machine.resolve_callable(func, event_data)
        if callable(found):
            return found
        return lambda *_args, **_kwargs: found  # a property's value, as the library's wrapper
    return func  # type: ignore[no-any-return]


def _direct_level(levels: list[Any]) -> Any:
    """A trigger's kept resolution (:meth:`LeanHierarchicalMachine._plan`) as one level with one
    source state: (scope context, event, source name, source path, source state); ``None`` for
    any other (no level: an invalid trigger; more levels or sources: the library's loop)."""
    if len(levels) != 1:
        return None
    context, event, sources = levels[0]
    if len(sources) != 1:
        return None
    name, state_path, state = sources[0]
    return context, event, name, state_path, state


def _scoped_callbacks(steps: Any, which: str, callback: Any, event_data: NestedEventData) -> None:
    """Run each state's ``which`` callbacks (``on_exit`` or ``on_enter``) with the state's scope
    set while they run, as the library's ``NestedState.exit``/``enter`` do; a state without any
    is skipped (nothing could see the scope set for it)."""
    for state, state_scope in steps:
        funcs = getattr(state, which)
        if funcs:
            state._scope = state_scope
            try:
                for func in funcs:
                    callback(func, event_data)
            finally:
                state._scope = []


class LeanHierarchicalMachine(HierarchicalMachine):
    """``HierarchicalMachine`` whose ``get_state`` by name (or name path) is memoised per scope and
    whose trigger resolution (the scopes and source states that handle a trigger from a given
    state, the states a transition exits and enters) is worked out once per state."""

    transition_cls = LeanNestedTransition

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._state_memo: dict[tuple[tuple[str, ...], Any], Any] = {}
        self._plans: dict[tuple[str, str], list[Any]] = {}
        self._direct: dict[tuple[str, str], Any] = {}
        self._has_final = False
        # the events run without the library's log calls when nothing would be logged, unless a
        # subclass changed how an event or a transition runs, how scopes are entered, callbacks
        # run or the model's state is set
        cls = type(self)
        self._silent_events = (self.event_cls._process is NestedEvent._process
                               and self.transition_cls.execute is NestedTransition.execute
                               and cls.__enter__ is HierarchicalMachine.__enter__
                               and cls.__exit__ is HierarchicalMachine.__exit__
                               and cls.__call__ is HierarchicalMachine.__call__
                               and cls.callbacks is HierarchicalMachine.callbacks
                               and cls.set_state is HierarchicalMachine.set_state)
        # the transitions resolve and call a callback named on the model themselves unless a
        # subclass changed how callbacks are resolved or called
        # (and reads the machine's callback lists behind the library's properties unless a
        # subclass changed those)
        self._inline_callbacks = (cls.callback is Machine.callback and cls.resolve_callable is Machine.resolve_callable
                                  and cls.before_state_change is Machine.before_state_change
                                  and cls.after_state_change is Machine.after_state_change)
        # ... and a trigger of one level and one source runs directly unless a subclass changed
        # how a trigger is queued or its result checked, or the library's scoped trigger
        self._direct_events = (self._silent_events and cls._process is HierarchicalMachine._process
                               and cls._trigger_event is LeanHierarchicalMachine._trigger_event
                               and cls._check_event_result is HierarchicalMachine._check_event_result
                               and cls._trigger_event_nested is LeanHierarchicalMachine._trigger_event_nested
                               and cls._process_silent is LeanHierarchicalMachine._process_silent)
        super().__init__(*args, **kwargs)

    def add_states(self, *args: Any, **kwargs: Any) -> None:
        self._state_memo = {}
        self._plans, self._direct = {}, {}
        super().add_states(*args, **kwargs)
        self._has_final = self._any_final()

    def add_transition(self, *args: Any, **kwargs: Any) -> None:
        self._plans, self._direct = {}, {}
        super().add_transition(*args, **kwargs)

    def remove_transition(self, *args: Any, **kwargs: Any) -> None:
        self._plans, self._direct = {}, {}
        super().remove_transition(*args, **kwargs)

    def _checked_assignment(self, model: Any, name: str, func: Any) -> None:
        """The library's assignment of a convenience method to a model; the model's ``trigger``
        calls :meth:`trigger_event` itself, as the library's ``_get_trigger`` does (one Python
        call less at every trigger), unless a subclass changed ``_get_trigger``."""
        if (name == "trigger" and isinstance(func, partial) and func.func == self._get_trigger
                and type(self)._get_trigger is HierarchicalMachine._get_trigger):
            func = partial(self.trigger_event, *func.args)
        super()._checked_assignment(model, name, func)

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

    def trigger_event(self, model: Any, trigger: str, *args: Any, **kwargs: Any) -> Any:
        """The library's ``trigger_event`` (the event data made, the trigger run through the
        machine's queue); a trigger that runs at once (the queue empty, no scope entered) from a
        state whose resolution is kept as one level of the root scope with one source state,
        while the library's loggers would drop every record, is run by :meth:`_trigger_direct`:
        the same scope, event data, callbacks, result and errors, without the queue's job call
        and the scopes' stack. docs/performance.md, "The replay's machine path"."""
        queue = self._transition_queue
        current = getattr(model, self.model_attribute)
        level = (None if queue or self._stack or not self._direct_events or type(current) is not str
                 else self._direct.get((current, trigger), _UNSET))
        if level is _UNSET:  # not decided yet: from the kept resolution, once there is one
            levels = self._plans.get((current, trigger))
            if levels is not None:
                level = self._direct[(current, trigger)] = _direct_level(levels)
        if (level is None or level is _UNSET  # (then _library_silent(), written out)
                or _CORE_LOG.isEnabledFor(logging.INFO) or _NESTING_LOG.isEnabledFor(logging.DEBUG)):
            return super().trigger_event(model, trigger, *args, **kwargs)
        event_data = NestedEventData(None, None, self, model, args, kwargs)
        event_data.result = None
        # as ``Machine._process``: the running trigger heads the queue, so a trigger fired by one
        # of its callbacks is queued behind it and run after it (its stand-in is never called:
        # it is taken off when the trigger has run, and the queue cleared on an error)
        queue.append(_running)
        try:
            self._trigger_direct(event_data, trigger, level)
            queue.popleft()
            while queue:
                queue[0]()
                queue.popleft()
        except BaseException:
            queue.clear()
            raise
        return True

    def _trigger_direct(self, event_data: NestedEventData, trigger: str, level: Any) -> Any:
        """:meth:`_trigger_event` for a trigger of one level in the root scope with one source
        state (:func:`_direct_level`), entered from the root scope with nothing on the scopes'
        stack: the library enters the root scope and then the event's (the same root scope
        again) and leaves both; here the root scope's values are set and put back once. The
        source state's transitions (:meth:`_process_silent`), then the result check,
        ``on_exception`` and ``finalize_event`` as in :meth:`_checked`, without its closure."""
        context, event, name, state_path, state = level
        try:
            saved = self.scoped, self.states, self.events, self.prefix_path
            self.scoped, self.states, self.events, self.prefix_path = context[0], context[1], context[2], list(context[3])
            self._next_scope = None
            try:
                event_data.event = event
                event_data.state = state
                event_data.source_name = name
                event_data.source_path = list(state_path)
                self._process_silent(event, event_data)
                res: Any = event_data.result
            finally:
                self.scoped, self.states, self.events, self.prefix_path = saved
            # (None: no transition for it: the check raises; any other result it returns as it is)
            if res is None:  # (the library's own check takes None, though its stub says bool)
                event_data.result = self._check_event_result(res, event_data.model, trigger)  # type: ignore[arg-type]
            else:
                event_data.result = bool(res)
        except BaseException as err:  # handed to on_exception, as the library does
            event_data.error = err  # type: ignore[assignment]
            if self.on_exception:
                for func in self.on_exception:
                    self.callback(func, event_data)
            else:
                raise
        finally:
            self._finalize(event_data)
        return event_data.result

    def _trigger_event(self, event_data: NestedEventData, trigger: str) -> Any:
        """The library's ``_trigger_event`` (the trigger run from the machine's queue: the event
        in the machine's root scope, the result checked, ``on_exception`` and
        ``finalize_event``); while the library's loggers would drop every record, without its
        log calls and with the root scope entered directly."""
        if not (self._silent_events and _library_silent()):
            return super()._trigger_event(event_data, trigger)

        def run() -> Any:
            stack = self._stack
            # what ``with self():`` enters: the outermost scope on the stack, else the root
            stack.append((self.scoped, self.states, self.events, self.prefix_path))
            self.scoped, self.states, self.events, self.prefix_path = (
                stack[0] if len(stack) > 1 else (self, self.states, self.events, []))
            self._next_scope = None
            try:
                return self._trigger_event_nested(event_data, trigger, None, silent=True)
            finally:
                self.scoped, self.states, self.events, self.prefix_path = stack.pop()

        return self._checked(event_data, trigger, run)

    def _checked(self, event_data: NestedEventData, trigger: str, run: Callable[[], Any]) -> Any:
        """What the library's ``_trigger_event`` does around the walk ``run``: its result checked
        (an invalid trigger raises), an error handed to ``on_exception`` (raised when there is
        none), then the ``finalize_event`` callbacks (their error logged); the event's result."""
        callback = self.callback
        try:
            event_data.result = self._check_event_result(run(), event_data.model, trigger)
        except BaseException as err:  # handed to on_exception, as the library does
            event_data.error = err  # type: ignore[assignment]
            if self.on_exception:
                for func in self.on_exception:
                    callback(func, event_data)
            else:
                raise
        finally:
            self._finalize(event_data)
        return event_data.result

    def _finalize(self, event_data: NestedEventData) -> None:
        """The ``finalize_event`` callbacks after a trigger, an error of theirs logged as the
        library logs it."""
        if not self.finalize_event:
            return
        try:
            for func in self.finalize_event:
                self.callback(func, event_data)
        except BaseException as err:  # the library logs it and goes on
            _NESTING_LOG.error("%sWhile executing finalize callbacks a %s occurred: %s.",
                               self.name, type(err).__name__, str(err))

    def _trigger_event_nested(self, event_data: NestedEventData, trigger: str, _state_tree: Any, *, silent: bool = False) -> Any:
        current = getattr(event_data.model, self.model_attribute)
        if _state_tree is not None or type(current) is not str:
            return super()._trigger_event_nested(event_data, trigger, _state_tree)  # type: ignore[misc]
        levels = self._plans.get((current, trigger))
        if levels is None:
            levels = self._plans[(current, trigger)] = self._plan(current, trigger)
        res = None
        stack = self._stack
        for context, event, sources in levels:
            if res is not None and res is not False:
                break
            scoped, states, events, prefix = context
            # ``with self:`` into the scope that holds the event
            stack.append((self.scoped, self.states, self.events, self.prefix_path))
            self.scoped, self.states, self.events, self.prefix_path = scoped, states, events, list(prefix)
            self._next_scope = None
            try:
                event_data.event = event
                for name, state_path, state in sources:
                    event_data.state = state
                    event_data.source_name = name
                    event_data.source_path = list(state_path)
                    if silent:
                        self._process_silent(event, event_data)
                    else:
                        event._process(event_data)
                    if event_data.result:
                        break
                tmp = event_data.result
            finally:
                self.scoped, self.states, self.events, self.prefix_path = stack.pop()
            if tmp is not None:
                res = tmp
        return None if res is None else bool(res)

    def _process_silent(self, event: NestedEvent, event_data: NestedEventData) -> None:
        """``NestedEvent._process`` with no log call (the library's loggers drop every record):
        the machine's ``prepare_event`` callbacks, then the source state's transitions for the
        event in order until one is taken."""
        prepare = self.prepare_event
        if prepare:
            callback = self.callback
            for func in prepare:
                callback(func, event_data)
        for trans in event.transitions[event_data.source_name]:  # type: ignore[index]
            event_data.transition = trans  # type: ignore[assignment]
            if isinstance(trans, LeanNestedTransition):
                event_data.result = trans.execute_silent(event_data)
            else:
                event_data.result = trans.execute(event_data)
            if event_data.result:
                break

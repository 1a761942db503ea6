"""The memoised HierarchicalMachine answers every state lookup and every trigger as the library's
own does (shoe_ctl/machine/hsm.py)."""

from __future__ import annotations

import contextlib
import logging
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import ROOT
from transitions.extensions import HierarchicalMachine

from shoe_ctl.machine import layout
from shoe_ctl.machine.hsm import LeanHierarchicalMachine, package_on_demand


class _Model:
    """The dealing layout's callbacks as no-ops; ``can`` decides ``two_can_act``."""

    def __init__(self) -> None:
        self.can = True
        self.calls: list[str] = []

    def two_can_act(self, _event: Any) -> bool:
        return self.can

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") and not name.startswith("__"):
            return lambda _event: self.calls.append(name)
        raise AttributeError(name)


def _machine(cls: type[HierarchicalMachine]) -> tuple[_Model, HierarchicalMachine]:
    model = _Model()
    machine = layout.tagged(cls)(model=model, states=layout.states(), transitions=layout.transitions(), initial=layout.IDLE,
                  send_event=True, queued=True, auto_transitions=False, on_exception="_on_exception",
                  model_override=False)
    return model, machine


def test_every_state_lookup_matches_the_library() -> None:
    _, plain = _machine(HierarchicalMachine)
    _, lean = _machine(LeanHierarchicalMachine)
    names = plain.get_nested_state_names()
    assert len(names) > 30
    for name in names:
        for _ in range(2):  # the second lookup comes from the memo
            assert lean.get_state(name).name == plain.get_state(name).name
            assert lean.get_state(name.split("_")).name == plain.get_state(name.split("_")).name
    with pytest.raises(ValueError):
        lean.get_state("hand_eighth_deal")
    with pytest.raises(ValueError):
        lean.get_state("hand_eighth_deal")  # an unknown name is never memoised


def test_a_hand_of_triggers_walks_the_same_states_and_callbacks() -> None:
    plain_model, _ = _machine(HierarchicalMachine)
    lean_model, _ = _machine(LeanHierarchicalMachine)
    script = ["new_hand", "street_dealt", "betting_complete", "street_dealt", "betting_complete", "scramble", "scramble_done", "cut_done",
              "stub_reloaded", "street_dealt", "betting_complete", "street_dealt", "betting_complete", "street_dealt", "betting_complete", "hand_complete", "new_hand",
              "street_dealt", "all_folded", "hand_complete"]
    for k, trigger in enumerate(script):
        for model in (plain_model, lean_model):
            model.can = k != 13  # 7th: fewer than two players able to act: the street is confirmed, not bet
            model.trigger(trigger)
        assert lean_model.state == plain_model.state, trigger
    assert lean_model.calls == plain_model.calls and "_on_exception" not in lean_model.calls
    assert lean_model.state == layout.IDLE and "_begin_showdown" in lean_model.calls
    assert "_begin_confirm" in lean_model.calls


# ------------------------------------------------------------------ random trigger sequences

_TRIGGERS = sorted({t["trigger"] for t in layout.transitions()} | {"nosuchtrigger"})


def _with_enter_exit(defs: list[Any], prefix: str = "") -> list[Any]:
    """The layout's states with an enter and an exit callback on every state, so that the order
    in which a transition leaves and enters the nesting levels shows in the calls."""
    out: list[Any] = []
    for d in defs:
        spec = {"name": d} if isinstance(d, str) else dict(d)
        full = prefix + spec["name"]
        spec["on_enter"] = f"_enter_{full}"
        spec["on_exit"] = f"_exit_{full}"
        if "children" in spec:
            spec["children"] = _with_enter_exit(spec["children"], full + "_")
        out.append(spec)
    return out


class _Recorder:
    """Every callback records its name and what the event data says at that moment; ``boom``
    names the callbacks that raise (``on_exception`` records the error)."""

    def __init__(self, boom: frozenset[str]) -> None:
        self.can = True
        self.boom = boom
        self.calls: list[tuple[Any, ...]] = []

    def two_can_act(self, event: Any) -> bool:
        self.calls.append(("two_can_act", event.state.name, event.event.name))
        return self.can

    def _on_exception(self, event: Any) -> None:
        self.calls.append(("_on_exception", type(event.error).__name__, str(event.error), self.state))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") and not name.startswith("__"):
            def callback(event: Any) -> None:
                # the machine's prepare_event runs before a transition is picked (none, or the
                # one of an earlier trigger); finalize_event after an unknown trigger has no state
                self.calls.append((name, getattr(event.state, "name", None), event.event.name,
                                   getattr(event.transition, "source", None), getattr(event.transition, "dest", None),
                                   self.state, event.result, getattr(event, "scope", None)))
                if name in self.boom:
                    raise RuntimeError(name)
            return callback
        raise AttributeError(name)


def _with_transition_callbacks(transitions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The layout's transitions with a ``prepare`` and a ``before`` callback each (``after`` kept
    where the layout has one, added elsewhere)."""
    out = []
    for t in transitions:
        t = dict(t)
        t["prepare"] = f"_prepare_{t['trigger']}"
        t["before"] = f"_before_{t['trigger']}"
        t.setdefault("after", f"_after_{t['trigger']}")
        out.append(t)
    return out


def _recording(cls: type[HierarchicalMachine], boom: frozenset[str]) -> _Recorder:
    model = _Recorder(boom)
    layout.tagged(cls)(model=model, states=_with_enter_exit(layout.states()), transitions=_with_transition_callbacks(layout.transitions()),
        initial=layout.IDLE, send_event=True, queued=True, auto_transitions=False, on_exception="_on_exception",
        model_override=False, prepare_event="_m_prepare_event", before_state_change="_m_before_state_change",
        after_state_change="_m_after_state_change", finalize_event="_m_finalize_event")
    return model


class _Records(logging.Handler):
    """Every record of the library's loggers: logger, level, message."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.seen: list[tuple[str, int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.seen.append((record.name, record.levelno, record.getMessage()))


_LIBRARY_LOGGERS = ("transitions.core", "transitions.extensions.nesting")


@contextlib.contextmanager
def _library_logging(level: int | None) -> Iterator[_Records]:
    """The library's loggers at ``level`` (``None``: as they are, logging nothing below WARNING),
    every record they pass kept; restored afterwards."""
    records = _Records()
    loggers = [logging.getLogger(name) for name in _LIBRARY_LOGGERS]
    before = [lg.level for lg in loggers]
    for lg in loggers:
        lg.addHandler(records)
        if level is not None:
            lg.setLevel(level)
    try:
        yield records
    finally:
        for lg, lvl in zip(loggers, before, strict=True):
            lg.removeHandler(records)
            lg.setLevel(lvl)


@settings(max_examples=300, deadline=None)
@given(steps=st.lists(st.tuples(st.sampled_from(_TRIGGERS), st.booleans()), max_size=40),
       boom=st.frozensets(st.sampled_from(["_begin_street", "_begin_betting", "_end_hand", "_exit_hand_third",
                                           "_enter_hand_fourth_deal", "_enter_attention", "_plan_now",
                                           "_prepare_dealt", "_before_bettingdone", "_after_allfolded",
                                           "_m_before_state_change", "_m_after_state_change",
                                           "_m_prepare_event", "_m_finalize_event"]),
                          max_size=2),
       level=st.sampled_from([None, None, logging.INFO, logging.DEBUG]))
def test_random_trigger_sequences_match_the_library(steps: list[tuple[str, bool]], boom: frozenset[str],
                                                    level: int | None) -> None:
    """Any sequence of the layout's triggers (and an unknown one), ``two_can_act`` either way and
    some callbacks raising, with the library's loggers silent (the machine's path without log
    calls) or at INFO or DEBUG (the library's own path): the same state after every trigger, the
    same return value, the same callbacks (the machine's ``prepare_event``,
    ``before_state_change``, ``after_state_change`` and ``finalize_event``, each transition's
    ``prepare``, ``before`` and ``after``, enter/exit of every nesting level) with the same event
    data, in the same order, the same errors handed to ``on_exception``, and the same log records."""
    plain = _recording(HierarchicalMachine, boom)
    lean = _recording(LeanHierarchicalMachine, boom)
    for trigger, can in steps:
        results = []
        logged = []
        for model in (plain, lean):
            model.can = can
            with _library_logging(level) as records:
                try:
                    results.append(("returned", model.trigger(trigger)))
                except Exception as exc:  # noqa: BLE001 - compared between the two
                    results.append(("raised", type(exc).__name__, str(exc)))
            logged.append(records.seen)
        assert results[0] == results[1], trigger
        assert lean.state == plain.state, trigger
        assert lean.calls == plain.calls, trigger
        assert logged[0] == logged[1], trigger
        if level is not None and results[0] == ("returned", True):
            assert logged[0], "the library logged nothing at DEBUG/INFO: the comparison would show nothing"


def test_the_silent_path_is_taken_only_while_the_library_logs_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the library's loggers silent a trigger asks ``transitions.core``'s logger once
    whether it logs; the plain class asks at every state entered or left and every callback. At
    INFO it logs as the library does."""
    core = logging.getLogger("transitions.core")
    asked: list[int] = []
    is_enabled = core.isEnabledFor

    def counting(level: int) -> bool:
        asked.append(level)
        return is_enabled(level)

    monkeypatch.setattr(core, "isEnabledFor", counting)
    plain = _recording(HierarchicalMachine, frozenset())
    lean = _recording(LeanHierarchicalMachine, frozenset())
    counts = []
    for model in (plain, lean):
        asked.clear()
        with _library_logging(None) as records:
            assert model.trigger("new_hand") is True
        assert records.seen == []
        counts.append(len(asked))
    assert counts[0] > 10 and counts[1] == 1, counts
    with _library_logging(logging.INFO) as records:
        assert lean.trigger("street_dealt") is True
    assert any("Finished processing state" in message for _, _, message in records.seen)


def test_a_state_added_later_is_found_and_reached() -> None:
    """Adding states or transitions after triggers have run drops what was kept."""
    plain_model, plain = _machine(HierarchicalMachine)
    lean_model, lean = _machine(LeanHierarchicalMachine)
    for machine, model in ((plain, plain_model), (lean, lean_model)):
        model.trigger("new_hand")
        machine.add_states("break")
        machine.add_transition("pause", "hand", "break")
        machine.add_transition("street_dealt", "hand_third_deal", "break", conditions="two_can_act", before="_early")
        model.trigger("pause")
    assert lean_model.state == plain_model.state == "break"
    assert lean_model.calls == plain_model.calls


def test_a_subclass_that_sets_the_state_its_own_way_keeps_it() -> None:
    """The path without log calls sets the model's state itself; a subclass with its own
    ``set_state`` (or scope handling, or callbacks runner) takes the library's path instead."""
    calls: list[Any] = []

    class Noting(LeanHierarchicalMachine):
        def set_state(self, state: Any, model: Any = None) -> None:
            calls.append(state)
            super().set_state(state, model)

    model = _Model()
    layout.tagged(Noting)(model=model, states=layout.states(), transitions=layout.transitions(), initial=layout.IDLE,
           send_event=True, queued=True, auto_transitions=False, on_exception="_on_exception", model_override=False)
    calls.clear()
    assert model.trigger("new_hand") is True
    assert model.state == "hand_third_deal" and calls == ["hand_third_deal"]


def _fresh(code: str) -> list[str]:
    """The lines ``code`` prints in a fresh interpreter (the project's root as its directory)."""
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.split()


def test_the_machine_loads_the_library_without_its_asyncio_extensions() -> None:
    """Importing the machine (and dealing a hand) loads the library's nesting module without the
    package ``__init__`` that imports every extension (asyncio and its ssl and sockets)."""
    lines = _fresh("import sys\nfrom shoe_ctl.config import load_profile\nfrom shoe_ctl.machine import Dealing\n"
                   "m = Dealing({'tda': load_profile('tda')})\nm.start()\n"
                   "print(*(x in sys.modules for x in ('asyncio', 'ssl', 'socket', 'transitions.extensions.asyncio',"
                   " 'transitions.extensions.diagrams', 'transitions.extensions.nesting')))")
    assert lines == ["False"] * 5 + ["True"]


def test_the_library_package_is_whole_once_one_of_its_names_is_read() -> None:
    """After the machine loaded its part of ``transitions.extensions``, the package's own names
    import as before: the same classes, its submodules as attributes, the diagram's machine."""
    lines = _fresh("import sys\nimport shoe_ctl.machine\n"
                   "import transitions.extensions.nesting as nesting\n"
                   "from transitions.extensions import HierarchicalMachine, LockedMachine, HierarchicalGraphMachine\n"
                   "import transitions.extensions as ext\n"
                   "print(HierarchicalMachine is nesting.HierarchicalMachine, ext.nesting is nesting,"
                   " ext.HierarchicalAsyncMachine.__name__, 'asyncio' in sys.modules,"
                   " sys.modules['transitions.extensions'] is ext, '__getattr__' in vars(ext))\n"
                   "from shoe_ctl.machine.diagram import mermaid\nprint(bool(mermaid()))")
    assert lines == ["True", "True", "HierarchicalAsyncMachine", "True", "True", "False", "True"]


def test_package_on_demand_leaves_a_loaded_or_unknown_package_alone() -> None:
    assert package_on_demand("transitions.extensions") is False  # loaded by this process already
    assert package_on_demand("no_such_package_here") is False
    assert "no_such_package_here" not in sys.modules


def test_package_on_demand_runs_the_init_once_for_threads_and_again_after_a_failure(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a package of its own (``demo_pkg``): a submodule imports without the ``__init__``;
    the first reads of a name from eight threads at once run it once; an ``__init__`` that
    raised is run again at the next read, as a failed import is tried again."""
    (tmp_path / "demo_count.py").write_text("runs = 0\nfail = True\n")
    pkg = tmp_path / "demo_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("import time\nimport demo_count\ndemo_count.runs += 1\ntime.sleep(0.05)\n"
                                     "if demo_count.fail:\n    raise RuntimeError('init failed')\nNAME = 'whole'\n")
    (pkg / "sub.py").write_text("VALUE = 7\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("demo_pkg", "demo_pkg.sub", "demo_count"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    assert package_on_demand("demo_pkg") is True
    import demo_count  # type: ignore[import-not-found]
    import demo_pkg.sub  # type: ignore[import-not-found]

    assert demo_pkg.sub.VALUE == 7 and demo_count.runs == 0
    with pytest.raises(RuntimeError, match="init failed"):
        _ = sys.modules["demo_pkg"].NAME
    assert demo_count.runs == 1
    demo_count.fail = False
    seen: list[str] = []
    threads = [threading.Thread(target=lambda: seen.append(sys.modules["demo_pkg"].NAME)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == ["whole"] * 8 and demo_count.runs == 2
    with pytest.raises(AttributeError):
        _ = sys.modules["demo_pkg"].NO_SUCH_NAME
    for name in ("demo_pkg", "demo_pkg.sub", "demo_count"):
        sys.modules.pop(name, None)


# ------------------------------------------------------------------ the direct path of a trigger


class _Chaining(_Recorder):
    """A recorder whose ``_begin_betting`` fires ``betting_complete`` from inside the transition
    (the machine queues it behind the running one) and whose ``_begin_street`` fires an unknown
    trigger (its error reaches ``on_exception`` when the queued job runs)."""

    def __getattr__(self, name: str) -> Any:
        record = super().__getattr__(name)
        if name == "_begin_betting":
            def chained(event: Any) -> None:
                record(event)
                self.calls.append(("queued", self.trigger("betting_complete"), self.state))
            return chained
        if name == "_begin_showdown":
            def unknown(event: Any) -> None:
                record(event)
                self.calls.append(("queued", self.trigger("nosuchtrigger"), self.state))
            return unknown
        return record


def _chaining(cls: type[HierarchicalMachine], on_exception: str | None) -> tuple[_Chaining, HierarchicalMachine]:
    model = _Chaining(frozenset())
    machine = layout.tagged(cls)(model=model, states=_with_enter_exit(layout.states()),
                       transitions=_with_transition_callbacks(layout.transitions()), initial=layout.IDLE,
                       send_event=True, queued=True, auto_transitions=False, on_exception=on_exception,
                       model_override=False, after_state_change="_m_after_state_change",
                       finalize_event="_m_finalize_event")
    return model, machine


@pytest.mark.parametrize("on_exception", ["_on_exception", None])
def test_a_trigger_fired_inside_a_transition_is_queued_as_the_library_does(
        on_exception: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Triggers fired from a callback of a trigger on the direct path wait in the machine's queue
    and run after it, as the library runs them; an error of a queued trigger reaches
    ``on_exception``, or (none set) is raised to the first trigger's caller with the queue
    emptied. The direct path is taken (counted) for every trigger but the first of each state."""
    taken: list[str] = []
    direct = LeanHierarchicalMachine._trigger_direct

    def counting(self: Any, event_data: Any, trigger: str, level: Any) -> Any:
        taken.append(trigger)
        return direct(self, event_data, trigger, level)

    monkeypatch.setattr(LeanHierarchicalMachine, "_trigger_direct", counting)
    (plain, _), (lean, machine) = _chaining(HierarchicalMachine, on_exception), _chaining(LeanHierarchicalMachine, on_exception)
    script = ["new_hand", "street_dealt", "street_dealt", "street_dealt", "street_dealt", "street_dealt",
              "hand_complete"] * 2
    raised = []
    for trigger in script:
        results = []
        for model in (plain, lean):
            try:
                results.append(("returned", model.trigger(trigger)))
            except Exception as exc:  # noqa: BLE001 - compared between the two
                results.append(("raised", type(exc).__name__, str(exc)))
        assert results[0] == results[1], trigger
        assert lean.state == plain.state, trigger
        assert lean.calls == plain.calls, trigger
        raised.append(results[0][0] == "raised")
    assert any(raised) is (on_exception is None)  # the queued unknown trigger's error
    assert not machine._transition_queue and not machine._stack
    assert any(c[0] == "queued" for c in lean.calls)
    assert taken.count("street_dealt") >= 5 and "new_hand" in taken


def test_the_direct_path_is_taken_once_a_state_s_trigger_is_resolved(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first trigger from a state takes the library's walk (and keeps its resolution); later
    ones from that state the direct path, unless a scope is entered or the library logs."""
    taken: list[str] = []
    direct = LeanHierarchicalMachine._trigger_direct
    monkeypatch.setattr(LeanHierarchicalMachine, "_trigger_direct",
                        lambda self, ed, trigger, level: taken.append(trigger) or direct(self, ed, trigger, level))
    model, machine = _machine(LeanHierarchicalMachine)
    for _ in range(2):
        model.trigger("new_hand")
        model.trigger("all_folded")
        model.trigger("hand_complete")
    assert taken == ["new_hand", "all_folded", "hand_complete"]
    with machine("hand"):
        assert model.trigger("new_hand") is True  # from a scope: the library's path
    with _library_logging(logging.INFO):
        model.trigger("all_folded")
    assert taken == ["new_hand", "all_folded", "hand_complete"]
    assert model.state == layout.UNCONTESTED


_DOTTED: list[str] = []


def dotted_callback(event: Any) -> None:
    """A callback named by its dotted path (``tests.machine.test_hsm.dotted_callback``)."""
    _DOTTED.append(event.event.name)


class _Kinds:
    """Callbacks of every kind the library resolves: a method, a property (its value is the
    condition's answer), a plain callable, a dotted path, and a name the model lacks."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.open = True

    @property
    def is_open(self) -> bool:
        self.calls.append("is_open read")
        return self.open

    def _after(self, event: Any) -> None:
        self.calls.append(f"after {event.event.name} {self.state}")


def _kinds(cls: type[HierarchicalMachine], missing: bool) -> _Kinds:
    model = _Kinds()
    plain_callable = lambda event: model.calls.append(f"callable {event.transition.dest}")  # noqa: E731
    after: list[Any] = ["_after", plain_callable, f"{__name__}.dotted_callback", "is_open"]
    if missing:
        after.append("_no_such_callback")
    cls(model=model, states=["a", {"name": "b", "children": ["x", "y"], "initial": "x"}],
        transitions=[{"trigger": "go", "source": "a", "dest": "b", "conditions": "is_open", "after": after},
                     {"trigger": "back", "source": "b_x", "dest": "a", "unless": ["is_open"], "after": after},
                     {"trigger": "back", "source": "b_x", "dest": "b_y"},
                     {"trigger": "back", "source": "b_y", "dest": "a", "after": after}],
        initial="a", send_event=True, queued=True, auto_transitions=False, model_override=False)
    return model


@pytest.mark.parametrize("missing", [False, True])
def test_callbacks_of_every_kind_resolve_as_the_library_resolves_them(missing: bool) -> None:
    """A property as a condition (read once per check, its value compared), a plain callable, a
    dotted path, a method and a property (read once, its value unused) as ``after`` callbacks,
    and a name the model lacks (the library's error), on the direct path (from the second
    trigger of a state on) as on the library's."""
    runs = []
    for cls in (HierarchicalMachine, LeanHierarchicalMachine):
        _DOTTED.clear()
        model = _kinds(cls, missing)
        seen: list[Any] = []
        for trigger, is_open in [("go", False), ("go", True), ("back", False), ("go", True), ("back", True),
                                 ("back", True), ("go", False), ("go", True), ("back", False), ("go", True)]:
            model.open = is_open
            try:
                seen.append((trigger, model.trigger(trigger), model.state))
            except Exception as exc:  # noqa: BLE001 - compared between the two
                seen.append((trigger, type(exc).__name__, str(exc), model.state))
        runs.append((seen, model.calls, list(_DOTTED)))
    assert runs[0] == runs[1]
    assert any("is_open read" in c for c in runs[1][1]) and runs[1][2]
    assert any(c.startswith("callable") for c in runs[1][1])
    errors = [step[1] for step in runs[1][0] if len(step) == 4]
    assert errors == (["AttributeError"] * 7 if missing else [])
    if not missing:
        assert [step[2] for step in runs[1][0]] == ["a", "b_x", "a", "b_x", "b_y", "a", "a", "b_x", "a", "b_x"]


def test_the_models_trigger_calls_trigger_event_itself() -> None:
    """The model's ``trigger`` is ``trigger_event`` bound to the model (the library's goes through
    ``_get_trigger``, which only calls it): the same states, and a trigger the state does not
    take handed to ``on_exception`` alike; a subclass with its own ``_get_trigger`` keeps the
    library's."""
    model, machine = _machine(LeanHierarchicalMachine)
    _, plain = _machine(HierarchicalMachine)
    assert model.trigger.func == machine.trigger_event and model.trigger.args == (model,)
    plain_model = plain.models[0]
    assert plain_model.trigger.func == plain._get_trigger
    for m in (model, plain_model):
        m.trigger("new_hand")
        assert m.state == "hand_third_deal"
    for m in (model, plain_model):
        m.trigger("cut_done")  # not taken in this state: the error goes to on_exception
        assert m.calls[-1] == "_on_exception" and m.state == "hand_third_deal"

    class Own(LeanHierarchicalMachine):
        def _get_trigger(self, model: Any, trigger_name: str, *args: Any, **kwargs: Any) -> Any:
            return super()._get_trigger(model, trigger_name, *args, **kwargs)

    own_model, own = _machine(Own)
    assert own_model.trigger.func == own._get_trigger

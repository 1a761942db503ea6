"""The values that write their own ``__init__`` (``shoe_ctl.values``) behave as the dataclasses
made from their fields. The frozen ones (``frozen_value``: the events and commands, the table's
settings, the dealer inputs' specifications, a recorded hand, the rules core's rulings, profile,
steps and street plan, the machine's input table rows and placements) as
``@dataclass(frozen=True, slots=True)``: the constructor's parameters and defaults, equality, hash,
``repr``, frozenness, ``replace``, ``copy``, ``pickle``, ``__slots__`` and ``__match_args__``; the
plain ones (``value``) as ``@dataclass``."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from typing import Any

import pytest

from hil import dealer, replay
from shoe_ctl import analyze, config, events, input_spec, phh
from shoe_ctl.machine import inputs, irregular_place
from shoe_ctl.rules import hand, irregular, profiles, steps, stub
from shoe_ctl.values import FrozenValue, Value, frozen_value, value

MODULES = (events, config, input_spec, phh, irregular, profiles, steps, stub, inputs, irregular_place, analyze,
           dealer, replay, hand)


def _values(base: type = FrozenValue) -> list[type]:
    found = [c for m in MODULES for c in vars(m).values()
             if isinstance(c, type) and issubclass(c, base) and c.__module__ == m.__name__]
    assert found
    return found


def _reference(cls: type, frozen: bool = True) -> type:
    """The class ``@dataclass(frozen=True, slots=True)`` (``frozen``, else ``@dataclass``) makes
    from ``cls``'s fields, with its other methods and properties."""
    specs = []
    for f in dataclasses.fields(cls):
        kw: dict[str, Any] = {"init": f.init, "repr": f.repr, "hash": f.hash, "compare": f.compare,
                              "metadata": f.metadata}
        if f.default is not dataclasses.MISSING:
            kw["default"] = f.default
        if f.default_factory is not dataclasses.MISSING:
            kw["default_factory"] = f.default_factory
        specs.append((f.name, f.type, dataclasses.field(**kw)))
    own = {k: v for k, v in vars(cls).items()
           if not k.startswith("__") and not k.startswith("_") and callable(getattr(v, "__get__", None))}
    return dataclasses.make_dataclass(cls.__name__, specs, namespace=own, frozen=frozen, slots=frozen)


def _args(cls: type, salt: int) -> dict[str, Any]:
    """A value for every field ``__init__`` takes (hashable, told apart by ``salt``)."""
    return {f.name: (f.name, salt) for f in dataclasses.fields(cls) if f.init}


def _hash(value: object) -> object:
    try:
        return hash(value)
    except TypeError as exc:
        return str(exc)


@pytest.mark.parametrize("cls", _values(), ids=lambda c: c.__name__)
def test_a_frozen_value_behaves_as_the_frozen_dataclass(cls: type) -> None:
    ref = _reference(cls)
    mine_sig, ref_sig = inspect.signature(cls), inspect.signature(ref)
    assert [(p.name, p.kind, repr(p.default)) for p in mine_sig.parameters.values()] == \
        [(p.name, p.kind, repr(p.default)) for p in ref_sig.parameters.values()]
    assert cls.__match_args__ == ref.__match_args__  # type: ignore[attr-defined]
    assert set(cls.__slots__) == set(ref.__slots__)  # type: ignore[attr-defined]

    a, b = _args(cls, 1), _args(cls, 1)
    mine_a, ref_a = cls(**a), ref(**a)
    assert not hasattr(mine_a, "__dict__")
    assert mine_a.__getstate__() == ref_a.__getstate__()  # type: ignore[attr-defined]  # every slot set
    assert repr(mine_a) == repr(ref_a)
    assert hash(mine_a) == hash(ref_a)
    assert mine_a == cls(**b) and not (mine_a != cls(**b))
    assert mine_a != ref_a  # another class: not equal, as between two dataclasses
    for f in dataclasses.fields(cls):
        other = dict(a, **{f.name: (f.name, 2)})
        assert (mine_a == cls(**other)) is (ref_a == ref(**other)) is (not f.compare), f.name
        assert (hash(cls(**other)) == hash(mine_a)) is (hash(ref(**other)) == hash(ref_a))
        with pytest.raises(dataclasses.FrozenInstanceError) as mine_err:
            setattr(mine_a, f.name, 0)
        with pytest.raises(dataclasses.FrozenInstanceError) as ref_err:
            setattr(ref_a, f.name, 0)
        assert str(mine_err.value) == str(ref_err.value)
        with pytest.raises(dataclasses.FrozenInstanceError) as mine_err:
            delattr(mine_a, f.name)
        with pytest.raises(dataclasses.FrozenInstanceError) as ref_err:
            delattr(ref_a, f.name)
        assert str(mine_err.value) == str(ref_err.value)
        changed = dataclasses.replace(mine_a, **{f.name: (f.name, 3)})
        assert getattr(changed, f.name) == (f.name, 3) and type(changed) is cls

    for twin in (copy.copy(mine_a), copy.deepcopy(mine_a), pickle.loads(pickle.dumps(mine_a))):
        assert type(twin) is cls and twin == mine_a and repr(twin) == repr(mine_a)

    required = {f.name: (f.name, 1) for f in dataclasses.fields(cls)
                if f.init and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    mine_d, ref_d = cls(**required), ref(**required)
    assert repr(mine_d) == repr(ref_d) and _hash(mine_d) == _hash(ref_d)  # a dict default: unhashable in both
    for f in (f for f in dataclasses.fields(cls) if f.init):
        if f.default_factory is not dataclasses.MISSING:  # a new value for each, as the factory's
            assert getattr(mine_d, f.name) is not getattr(cls(**required), f.name)
        if f.default_factory is not dataclasses.MISSING or f.default is not dataclasses.MISSING:
            explicit = cls(**dict(required, **{f.name: None}))
            assert getattr(explicit, f.name) is None  # a value passed, None too, is kept


@pytest.mark.parametrize("cls", _values(Value), ids=lambda c: c.__name__)
def test_a_value_behaves_as_the_dataclass(cls: type) -> None:
    """The plain (mutable) values (the simulated dealer's script, table and stats, the replay's
    hand record, the analysis's street view and report, the rules core's hand and seat) as
    ``@dataclass`` makes them."""
    ref = _reference(cls, frozen=False)
    assert [(p.name, p.kind, repr(p.default)) for p in inspect.signature(cls).parameters.values()] == \
        [(p.name, p.kind, repr(p.default)) for p in inspect.signature(ref).parameters.values()]
    assert cls.__match_args__ == ref.__match_args__  # type: ignore[attr-defined]
    assert cls.__hash__ is None and ref.__hash__ is None
    a = _args(cls, 1)
    mine_a, ref_a = cls(**a), ref(**a)
    assert repr(mine_a) == repr(ref_a)
    assert mine_a == cls(**a) and mine_a != ref_a
    assert vars(mine_a) == vars(ref_a)  # every field set, the ones __init__ does not take included
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        other = dict(a, **{f.name: (f.name, 2)})
        assert (mine_a == cls(**other)) is (ref_a == ref(**other)) is (not f.compare), f.name
        changed = dataclasses.replace(mine_a, **{f.name: (f.name, 3)})
        assert getattr(changed, f.name) == (f.name, 3) and type(changed) is cls
        setattr(changed, f.name, (f.name, 4))  # mutable, as the dataclass
        assert getattr(changed, f.name) == (f.name, 4)
    for twin in (copy.copy(mine_a), copy.deepcopy(mine_a)):
        assert type(twin) is cls and twin == mine_a and twin is not mine_a
    required = {f.name: (f.name, 1) for f in dataclasses.fields(cls)
                if f.init and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    assert repr(cls(**required)) == repr(ref(**required))
    assert vars(cls(**required)) == vars(ref(**required))
    for f in (f for f in dataclasses.fields(cls) if f.init):
        if f.default_factory is not dataclasses.MISSING:
            assert getattr(cls(**required), f.name) is not getattr(cls(**required), f.name)
            assert getattr(cls(**dict(required, **{f.name: None})), f.name) is None


def test_a_frozen_value_writes_its_init() -> None:
    with pytest.raises(TypeError, match="writes its __init__"):
        @frozen_value
        class NoInit(FrozenValue):
            x: int

    with pytest.raises(TypeError, match="writes its __init__"):
        @frozen_value
        class NotAValue:
            def __init__(self) -> None:
                pass

    with pytest.raises(TypeError, match="writes its __init__"):
        @value
        class Plain(Value):
            x: int


def test_a_field_without_its_init_parameter_is_refused_when_the_class_is_made() -> None:
    """A field added to a value whose ``__init__`` was not given the parameter (or one out of
    order) stops the import, naming both lists."""
    with pytest.raises(TypeError, match=r"Late.__init__ takes x; its fields are x, y"):
        @frozen_value
        class Late(FrozenValue):
            x: int
            y: int = 0

            def __init__(self, x: int) -> None:
                self._put[0](self, x)

    with pytest.raises(TypeError, match=r"Swapped.__init__ takes b, a; its fields are a, b"):
        @value
        class Swapped(Value):
            a: int
            b: int

            def __init__(self, b: int, a: int) -> None:
                self.a, self.b = a, b


def test_a_field_hashed_but_not_compared_is_refused() -> None:
    with pytest.raises(TypeError, match="hashed but not compared"):
        @frozen_value
        class Odd(FrozenValue):
            x: int = dataclasses.field(compare=False, hash=True)

            def __init__(self, x: int) -> None:
                object.__setattr__(self, "x", x)

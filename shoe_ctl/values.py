"""Value classes that cost nothing to define: :func:`frozen_value` (the behaviour of a dataclass
with ``frozen=True, slots=True``) and :func:`value` (of a plain ``@dataclass``), whose
``__init__`` is written in the class's source.

A dataclass compiles its ``__init__``, ``__repr__`` and ``__eq__`` (frozen: ``__hash__``,
``__setattr__``, ``__delattr__`` too) from generated source as its class is made, at every start
of the process: up to half a millisecond a class, most of what a module of such classes costs to
import. Here the class writes its ``__init__`` (compiled once, into the module's bytecode) and the
other methods are shared, reading the fields the dataclass machinery recorded. Why and by how
much: docs/performance.md, "The whole process, cut by cut"."""

from __future__ import annotations

import reprlib
from collections.abc import Callable
from dataclasses import FrozenInstanceError, dataclass, field, fields
from operator import attrgetter
from typing import Any, TypeVar, cast, dataclass_transform

__all__ = ["FACTORY", "FrozenValue", "Value", "frozen_value", "value"]

T = TypeVar("T", bound=type)


class _Factory:
    """The default of an ``__init__`` parameter whose field has a ``default_factory``: the
    parameter left out, the field gets a new value from the factory (shown as a dataclass shows
    it in a signature)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"


FACTORY: Any = _Factory()
"""The default of a parameter whose field has a ``default_factory`` (``args: dict = FACTORY``,
then ``dict() if args is FACTORY else args``): a value passed, even ``None``, is kept."""

_set = object.__setattr__


def _tuple_of(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The values of ``names`` as a tuple (a dataclass compares and hashes that tuple), read in C
    where there are two names or more."""
    if len(names) >= 2:
        return attrgetter(*names)
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda value: (one(value),)
    return lambda value: ()


class _Fields:
    """What a dataclass compares and shows, shared: equality and ``repr`` over the fields as
    ``@dataclass`` makes them (the fields with ``compare``, in order, for another instance of the
    same class only; the fields with ``repr``; the class's qualified name)."""

    __slots__ = ()

    # set for each class by its decorator; no annotations here: a dataclass's type hints are read
    # in its own module's names (the journal's codec), where these would not resolve
    _fields = cast("tuple[str, ...]", ())  # every field's name, in order
    _compared = staticmethod(_tuple_of(()))  # the compared fields' values as a tuple
    _shown = cast("tuple[str, ...]", ())  # the names repr shows

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._compared(self) == self._compared(other)
        return NotImplemented

    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._shown)
        return f"{self.__class__.__qualname__}({shown})"


class FrozenValue(_Fields):
    """The methods of a frozen dataclass, shared: :class:`_Fields`' equality and ``repr``, the
    hash of the compared fields, no assignment or deletion of an attribute
    (:class:`dataclasses.FrozenInstanceError`), and the state ``copy`` and ``pickle`` use. A class
    takes them through :func:`frozen_value`, which fills in its field lists and :attr:`_put`.

    ``_put``: each field's slot setter in field order (the slot's own ``__set__``), what the
    class's ``__init__`` sets its fields with: ``put = self._put``, then ``put[0](self, first)``
    and so on. It sets the slot directly, as ``object.__setattr__`` (a frozen dataclass's way)
    would after finding the slot, in a third of the time: every card read and instruction is
    one of these values."""

    __slots__ = ()

    _put = cast("tuple[Callable[[Any, Any], None], ...]", ())

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __hash__(self) -> int:
        return hash(self._compared(self))

    def __getstate__(self) -> list[Any]:
        return [getattr(self, name) for name in self._fields]

    def __setstate__(self, state: list[Any]) -> None:
        for name, value in zip(self._fields, state, strict=False):
            _set(self, name, value)


class Value(_Fields):
    """The methods of a plain (mutable) dataclass, shared: :class:`_Fields`' equality and
    ``repr``, and no hash (a dataclass with ``eq`` and not frozen has ``__hash__ = None``). A
    class takes them through :func:`value`."""

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]


def _made(cls: type, base: type, kind: str, slots: bool) -> Any:
    """``cls`` made a dataclass without generated methods, its field lists set for ``base``."""
    if not issubclass(cls, base) or "__init__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__}: a {kind} is a {base.__name__} that writes its __init__")
    made: Any = dataclass(init=False, repr=False, eq=False, slots=slots)(cls)
    every = fields(made)
    code = made.__init__.__code__
    taken = code.co_varnames[1:code.co_argcount + code.co_kwonlyargcount]
    if taken != tuple(f.name for f in every if f.init):  # a field added without its parameter
        raise TypeError(f"{cls.__name__}.__init__ takes {', '.join(taken)}; its fields are "
                        f"{', '.join(f.name for f in every if f.init)}")
    made._fields = tuple(f.name for f in every)
    compared = tuple(f.name for f in every if f.compare)
    if base is FrozenValue and compared != tuple(f.name for f in every if (f.compare if f.hash is None else f.hash)):
        raise TypeError(f"{cls.__name__}: a field hashed but not compared, or compared but not hashed")
    made._compared = staticmethod(_tuple_of(compared))
    made._shown = tuple(f.name for f in every if f.repr)
    if base is FrozenValue:
        made._put = tuple(getattr(made, name).__set__ for name in made._fields)
    return made


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def frozen_value(cls: T) -> T:
    """Make ``cls`` (a subclass of :class:`FrozenValue` that writes its ``__init__``) a dataclass
    that behaves as ``@dataclass(frozen=True, slots=True)`` would make it: the same fields
    (:func:`dataclasses.fields`, defaults, metadata), ``__slots__``, ``__match_args__``,
    equality, hash, ``repr``, frozenness, :func:`dataclasses.replace`, ``copy`` and ``pickle``.
    Only ``__dataclass_params__`` says otherwise (no generated ``__init__``, ``__repr__`` or
    ``__eq__``, not frozen by the dataclass machinery).

    ``__init__`` sets every field through :attr:`FrozenValue._put` in field order, taking the
    dataclass's parameters (names, order, defaults; :data:`FACTORY` for a ``default_factory``).

    :raises TypeError: ``cls`` is not a :class:`FrozenValue`, defines no ``__init__`` of its own,
        its ``__init__`` does not take its fields' names in field order, or it has a field that
        is hashed and not compared or the other way round.
    """
    return _made(cls, FrozenValue, "frozen value", slots=True)  # type: ignore[no-any-return]


@dataclass_transform(field_specifiers=(field,))
def value(cls: T) -> T:
    """Make ``cls`` (a subclass of :class:`Value` that writes its ``__init__``) a dataclass that
    behaves as ``@dataclass`` would make it: the same fields, ``__match_args__``, equality,
    ``repr``, no hash, :func:`dataclasses.replace` and ``copy``; only ``__dataclass_params__``
    says otherwise. ``__init__`` sets every field (``self.name = name``) in field order, taking
    the dataclass's parameters (:data:`FACTORY` for a ``default_factory``).

    :raises TypeError: ``cls`` is not a :class:`Value`, defines no ``__init__`` of its own, or its
        ``__init__`` does not take its fields' names in field order.
    """
    return _made(cls, Value, "value", slots=False)  # type: ignore[no-any-return]

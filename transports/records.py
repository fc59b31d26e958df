"""Records: the small immutable values both sides build by keyword (a Part, a Task, a Frame).

A record is a tuple whose fields are its class's annotations, in order; a field's default is
the class attribute of its name. It does what this project asked of `typing.NamedTuple`:
built by keyword (or position), compared and hashed by value, with `_fields`,
`_field_defaults`, `_make()`, `_replace()` (and `copy.replace()`), `_asdict()`, copy, pickle
and `match`. Why not a NamedTuple: defining one evals its constructor from source (about
half a million instructions a type) and turns each string annotation into a ForwardRef,
whose first compile() costs a process about 10M. The default run defines forty record types
to make a few records of each: together that was the largest share of its start-up
(bench/startup.py --instructions). Defining a Record compiles nothing and costs about a
sixth as much where annotations are strings, as in these modules (a third where not). A type
starts with one general constructor (below); one that goes on to make many records, as a
served peer's do (sixteen a request), gets a compiled one, as fast as a NamedTuple's. The
two constructors word a wrong call's TypeError differently; both name the field.

Rules: fields are declared once, in the class that introduces them (a subclass adds
behaviour, not fields), required ones first; nothing is set on a record after it is made
(`_replace` makes a changed copy), and it has no `__dict__` to set it in; a missing or
unknown field is a TypeError naming it.
Not here: checking a field's type (the annotation documents it; from_wire validates input).
"""
from __future__ import annotations  # SomeRecord, below the class it is bound to, is read by checkers only

import sys
from itertools import count
from operator import itemgetter

try:
    from _collections import _tuplegetter  # the C field reader collections.namedtuple uses
except ImportError:  # a Python without it: a property reads the same field, a little slower
    def _tuplegetter(index: int, doc: str) -> Any:
        return property(itemgetter(index), doc=doc)

TYPE_CHECKING = False  # typing's names are for type checkers: a run need not load it (transports/__init__.py)
if TYPE_CHECKING:  # dataclass_transform tells editors and checkers the fields are the keywords
    from typing import Any, Iterable, Iterator, TypeVar, dataclass_transform
else:  # nothing at run time needs it
    def dataclass_transform(**_: Any) -> Any:
        return lambda cls: cls

_REQUIRED = object()  # the default of a field that has none: the caller must give it
WRITE_AFTER = 256  # records a type makes with the general constructor before its own is written.
# Writing one costs about 0.2M instructions and saves 7K to 10K a record (3.11, callgrind), so it
# pays for itself within a few dozen; 256 keeps the default run and `check` (77 rows of one type)
# from writing any.
_made: dict[type, Iterator[int]] = {}  # each type still on the general constructor: its records so far


class _RecordType(type):
    """Gives each record class an empty `__slots__`: a record is its tuple, with no `__dict__`
    beside it (8 bytes less a record, 16 on 3.12+, and no back door past `__setattr__`). So a
    record is not also an ABC or a Protocol (their metaclasses differ), nor holds a cached_property."""

    def __new__(mcls, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any) -> Any:
        namespace.setdefault("__slots__", ())
        return super().__new__(mcls, name, bases, namespace, **kwargs)


@dataclass_transform(kw_only_default=False, frozen_default=True)
class Record(tuple, metaclass=_RecordType):
    """An immutable record: subclass it and annotate its fields (`name: str = "default"`)."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _field_defaults: dict[str, Any] = {}
    _defaults: tuple[Any, ...] = ()  # one per field, _REQUIRED where there is none

    def __init_subclass__(cls) -> None:
        fields = tuple(cls.__annotations__)  # its own annotations, in order (3.10+: never a parent's)
        if not fields:  # a subclass adding behaviour: the parent's fields, unchanged
            return
        if cls._fields:
            raise TypeError(f"{cls.__name__}: a record's fields are declared in one class, not added by a subclass")
        defaults = tuple(cls.__dict__.get(name, _REQUIRED) for name in fields)
        if any(name.startswith("_") for name in fields):
            raise TypeError(f"{cls.__name__}: a field's name cannot begin with an underscore")
        given = [value is not _REQUIRED for value in defaults]
        if given != sorted(given):  # as in a function's parameters: the first default ends the required
            raise TypeError(f"{cls.__name__}: a field without a default follows one with a default")
        cls._fields, cls._defaults, cls.__match_args__ = fields, defaults, fields
        cls._field_defaults = {name: value for name, value in zip(fields, defaults) if value is not _REQUIRED}
        for index, name in enumerate(fields):  # each field reads its place in the tuple
            setattr(cls, name, _tuplegetter(index, f"{cls.__name__}.{name}"))

    def __new__(cls: type[SomeRecord], /, *given: Any, **named: Any) -> SomeRecord:
        """The constructor every type starts with: general, so defining a type compiles nothing.
        A type that has made WRITE_AFTER records gets its own, as fast as a NamedTuple's."""
        made = _made.get(cls) or _made.setdefault(cls, count())  # one count a type, however threads race
        if next(made) == WRITE_AFTER:
            cls.__new__ = _constructor(cls)  # type: ignore[method-assign]  # from the next record on
            _made.pop(cls, None)  # counted no more
        fields = cls._fields
        if given:  # by position, as a NamedTuple may be built: each value names its field
            if len(given) > len(fields):
                raise TypeError(f"{cls.__name__}() takes {len(fields)} fields, {len(given)} were given")
            for name, value in zip(fields, given):
                if name in named:
                    raise TypeError(f"{cls.__name__}() got two values for {name!r}")
                named[name] = value
        row = tuple(map(named.pop, fields, cls._defaults))
        if named:
            raise TypeError(f"{cls.__name__}() has no field {next(iter(named))!r}")
        if _REQUIRED in row:
            raise TypeError(f"{cls.__name__}() needs {fields[row.index(_REQUIRED)]!r}")
        return tuple.__new__(cls, row)

    def _replace(self: SomeRecord, /, **changes: Any) -> SomeRecord:
        """A copy with `changes` made: the record itself never changes."""
        row = tuple(map(changes.pop, self._fields, self))
        if changes:
            raise TypeError(f"{type(self).__name__} has no field {next(iter(changes))!r}")
        return tuple.__new__(type(self), row)

    __replace__ = _replace  # copy.replace(record, **changes), Python 3.13+

    @classmethod
    def _make(cls: type[SomeRecord], values: Iterable[Any]) -> SomeRecord:
        """A record of `values`, one a field, in order (as a NamedTuple's _make)."""
        row = tuple(values)
        if len(row) != len(cls._fields):
            raise TypeError(f"{cls.__name__}._make() takes {len(cls._fields)} values, {len(row)} were given")
        return tuple.__new__(cls, row)

    def _asdict(self) -> dict[str, Any]:
        return dict(zip(self._fields, self))

    def __getnewargs__(self) -> tuple[Any, ...]:  # copy and pickle rebuild it by position
        return tuple(self)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is a record: _replace() makes a changed copy")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{name}={value!r}' for name, value in zip(self._fields, self))})"


if TYPE_CHECKING:
    SomeRecord = TypeVar("SomeRecord", bound=Record)  # a method of a record returns its own type


def _constructor(cls: type[Record]) -> Any:
    """`cls`'s constructor, written as collections.namedtuple writes one: a function whose
    parameters are the fields, so that Python itself binds each keyword to its place (the
    fastest way there is to make a record: a served peer makes sixteen a request). Written
    once a type is in use, not with it: each costs about 0.2M instructions,
    which a run that makes a few records of a type never earns back (see WRITE_AFTER)."""
    names = "".join(f", {name}" for name in cls._fields)  # identifiers: annotated, none beginning with "_"
    new = eval(f"lambda _cls{names}: _tuple_new(_cls, ({names[2:]},))" if names else
               "lambda _cls: _tuple_new(_cls, ())", {"_tuple_new": tuple.__new__})
    new.__defaults__ = tuple(value for value in cls._defaults if value is not _REQUIRED) or None
    new.__qualname__ = f"{cls.__name__}.__new__"  # how a missing or unknown field's error names it
    return staticmethod(new)

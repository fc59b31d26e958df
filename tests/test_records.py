"""Records (transports/records.py) behave as the NamedTuples they replaced, on both constructors.

A record type starts with a general constructor and, once it has made WRITE_AFTER records,
gets a compiled one: every behaviour here is checked on a type still on the first and on
one already on the second, so the switch can change nothing a caller sees.
"""
import copy
import math
import pickle
import random

import pytest

from transports.records import WRITE_AFTER, Record


class Note(Record):
    """A record with a required field, defaults, and a method."""
    subject: str
    body: str = ""
    tags: tuple[str, ...] = ()

    def shout(self) -> str:
        return self.body.upper()


class LoudNote(Note):
    """A subclass adds behaviour, not fields."""
    def whisper(self) -> str:
        return self.body.lower()


def fresh_type(warm: bool) -> type[Record]:
    """A new record type of the same shape: `warm`, it has made enough records to be compiled."""
    class Fresh(Record):
        subject: str
        body: str = ""
        tags: tuple[str, ...] = ()
    if warm:
        for number in range(WRITE_AFTER + 1):
            Fresh(subject=str(number))
        assert "__new__" in Fresh.__dict__  # its own constructor now, not the general one
    return Fresh


@pytest.mark.parametrize("warm", [False, True], ids=["general constructor", "compiled constructor"])
def test_a_record_is_built_by_keyword_or_position_and_compared_by_value(warm):
    kind = fresh_type(warm)
    by_keyword, by_position = kind(subject="refund", body="ORD-1"), kind("refund", "ORD-1")
    assert by_keyword == by_position == ("refund", "ORD-1", ())
    assert hash(by_keyword) == hash(by_position) and {by_keyword, by_position} == {by_keyword}
    assert (by_keyword.subject, by_keyword.body, by_keyword.tags) == ("refund", "ORD-1", ())
    assert kind._fields == ("subject", "body", "tags") and kind._field_defaults == {"body": "", "tags": ()}
    assert by_keyword._asdict() == {"subject": "refund", "body": "ORD-1", "tags": ()}
    assert repr(by_keyword) == "Fresh(subject='refund', body='ORD-1', tags=())"


@pytest.mark.parametrize("warm", [False, True], ids=["general constructor", "compiled constructor"])
@pytest.mark.parametrize("build", [lambda kind: kind(), lambda kind: kind(body="x"),
                                   lambda kind: kind(subject="a", nope=1),
                                   lambda kind: kind("a", subject="b"), lambda kind: kind("a", "b", (), "d")],
                         ids=["nothing", "a required field missing", "an unknown field", "a field twice",
                              "too many by position"])
def test_a_wrong_construction_is_a_type_error(warm, build):
    with pytest.raises(TypeError):
        build(fresh_type(warm))


@pytest.mark.parametrize("warm", [False, True], ids=["general constructor", "compiled constructor"])
@pytest.mark.parametrize("build, field", [(lambda kind: kind(body="x"), "'subject'"),
                                          (lambda kind: kind(subject="a", nope=1), "'nope'"),
                                          (lambda kind: kind("a", subject="b"), "'subject'")],
                         ids=["a required field missing", "an unknown field", "a field twice"])
def test_a_wrong_field_is_named_in_its_error(warm, build, field):
    with pytest.raises(TypeError, match=field):
        build(fresh_type(warm))


@pytest.mark.parametrize("warm", [False, True], ids=["general constructor", "compiled constructor"])
def test_nothing_is_set_on_a_record_after_it_is_made(warm):
    note = fresh_type(warm)(subject="refund")
    for name in ("subject", "elsewhere"):
        with pytest.raises(AttributeError):
            setattr(note, name, "changed")
    with pytest.raises(AttributeError):  # no __dict__ either, so not even past __setattr__
        object.__setattr__(note, "elsewhere", "changed")
    assert not hasattr(note, "__dict__")
    changed = note._replace(body="ORD-2")
    assert (note.body, changed.body, type(changed)) == ("", "ORD-2", type(note))
    if hasattr(copy, "replace"):  # Python 3.13+
        assert copy.replace(note, tags=("t",)) == ("refund", "", ("t",))
    with pytest.raises(TypeError):
        note._replace(nope=1)
    made = type(note)._make(iter(["refund", "ORD-3", ()]))
    assert (made, type(made)) == (("refund", "ORD-3", ()), type(note))
    with pytest.raises(TypeError):
        type(note)._make(["refund"])


def test_a_record_survives_copy_and_pickle_and_a_subclass_keeps_its_fields():
    note = LoudNote(subject="refund", body="Ord-3", tags=("a",))
    assert copy.copy(note) == copy.deepcopy(note) == pickle.loads(pickle.dumps(note)) == note
    assert type(pickle.loads(pickle.dumps(note))) is LoudNote
    assert (LoudNote._fields, note.shout(), note.whisper()) == (Note._fields, "ORD-3", "ord-3")
    match note:
        case Note(subject, body):
            assert (subject, body) == ("refund", "Ord-3")


@pytest.mark.parametrize("body", [
    "class Bad(Note):\n    extra: int = 0",
    "class Bad(Record):\n    first: int = 0\n    second: int",
    "class Bad(Record):\n    _hidden: int = 0",
], ids=["a subclass adding a field", "a required field after a default", "a field beginning with _"])
def test_a_record_type_that_could_not_be_built_as_declared_is_refused(body):
    with pytest.raises(TypeError):
        exec(body, {"Note": Note, "Record": Record})


def test_any_values_go_in_and_come_out_unchanged_on_either_constructor():
    """Seeded: values of every kind a peer's JSON can give (and some it cannot), unhashable
    ones too; the two constructors must agree on each, and a record of an unhashable value
    is itself unhashable, as a tuple of it is."""
    rng = random.Random(36)
    cold, warm = fresh_type(False), fresh_type(True)
    pool = [None, True, 0, -1, 2**70, 1.5, math.nan, math.inf, "", "x" * 10_000, "\x00\u2028", b"\xff",
            [], {}, {"a": [1, {"b": None}]}, (), ("t",), object()]
    for _ in range(300):
        values = [rng.choice(pool) for _ in range(3)]
        made = [kind(*values) for kind in (cold, warm)] + [kind(subject=values[0], body=values[1], tags=values[2])
                                                           for kind in (cold, warm)]
        for record in made:
            assert all(got is given for got, given in zip(record, values))
            assert (record.subject, record.body, record.tags) == tuple(record)
            if any(isinstance(value, (list, dict)) for value in values):
                with pytest.raises(TypeError):
                    hash(record)


def test_a_record_of_no_fields_is_the_empty_tuple_on_either_constructor():
    class Nothing(Record):
        pass
    made = [Nothing() for _ in range(WRITE_AFTER + 2)]
    assert "__new__" in Nothing.__dict__ and made[0] == made[-1] == () and type(made[-1]) is Nothing
    with pytest.raises(TypeError):
        Nothing(extra=1)

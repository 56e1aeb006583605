"""Hypothesis strategies derived from the event Structs themselves, so every event type registered
now or later is covered without a hand-written strategy."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec
from hypothesis import strategies as st

from oneiros.events._types import DreamPhase, DreamStart, Event, EventMeta
from oneiros.settings._cycle import CycleBudget, CycleSettings, EngineSettings
from oneiros.settings._phases import PHASES
from oneiros.settings._prompts import PromptSet

_text = st.text(min_size=1, max_size=30)
# Fields whose Struct checks them in __post_init__, beyond what their type says.
_FIELDS: dict[tuple[type, str], st.SearchStrategy[Any]] = {
    (EngineSettings, "embedder"): st.sampled_from(("hashing", "none", "sentence-transformers:all-MiniLM-L6-v2")),
    (EngineSettings, "prompts"): st.just(PromptSet()),
    # A DreamPhase that leaves out its machine state takes the canonical table's, so it names one of its phases.
    (DreamPhase, "phase"): st.sampled_from(PHASES.names),
    # A cycle's recorded settings are validated by their own Structs (fuzzed in test_config); here
    # they only need to round-trip, in a few shapes.
    (DreamStart, "settings"): st.one_of(
        st.none(),
        st.builds(
            lambda tier, seed: CycleSettings(budget=CycleBudget(tier=tier), seed=seed),
            st.sampled_from(("core", "hardened")),
            st.none() | st.integers(0, 2**31),
        ),
    ),
}


def _field(cls: type, field: msgspec.inspect.Field) -> st.SearchStrategy[Any]:
    override = _FIELDS.get((cls, field.name))
    return override if override is not None else _for(field.type)


_json: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(-1e9, 1e9, allow_nan=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


def _for(t: msgspec.inspect.Type) -> st.SearchStrategy[Any]:  # noqa: PLR0911, PLR0912 - one branch per msgspec type
    i = msgspec.inspect
    if isinstance(t, i.StrType) and t.pattern is not None:
        return st.from_regex(t.pattern, fullmatch=True)
    if isinstance(t, i.StrType):
        return st.text(min_size=t.min_length or 0, max_size=max(t.min_length or 0, 30))
    if isinstance(t, i.BoolType):
        return st.booleans()
    if isinstance(t, i.IntType):
        lo = t.ge if t.ge is not None else -(2**40)
        hi = t.le if t.le is not None else 2**40
        return st.integers(min_value=lo, max_value=hi)
    if isinstance(t, i.FloatType):
        low: float = t.ge if t.ge is not None else -1e9
        high: float = t.le if t.le is not None else 1e9
        return st.floats(min_value=low, max_value=high, allow_nan=False)
    if isinstance(t, i.LiteralType):
        return st.sampled_from(t.values)
    if isinstance(t, i.NoneType):
        return st.none()
    if isinstance(t, i.UnionType):
        return st.one_of(*(_for(x) for x in t.types))
    if isinstance(t, i.DateTimeType):
        return st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC))
    if isinstance(t, i.VarTupleType | i.ListType | i.FrozenSetType | i.SetType):
        least = t.min_length or 0
        inner = st.lists(_for(t.item_type), min_size=least, max_size=max(least, 4))
        if isinstance(t, i.VarTupleType):
            return inner.map(tuple)
        if isinstance(t, i.FrozenSetType):
            return inner.map(frozenset)
        return inner
    if isinstance(t, i.TupleType):
        return st.tuples(*(_for(x) for x in t.item_types))
    if isinstance(t, i.AnyType):  # a JSON value (an item's value holds any)
        return _json
    if isinstance(t, i.DictType):
        return st.dictionaries(_for(t.key_type), _for(t.value_type), max_size=3)
    if isinstance(t, i.StructType):
        cls = t.cls
        return st.fixed_dictionaries(
            {f.name: _field(cls, f) for f in t.fields if f.required},
            optional={f.name: _field(cls, f) for f in t.fields if not f.required},
        ).map(lambda kw: cls(**kw))
    raise NotImplementedError(f"no strategy for {t!r}; add one to tests/strategies.py")


def events_of(cls: type[Event]) -> st.SearchStrategy[Event]:
    return _for(msgspec.inspect.type_info(cls))


def metas(golem_id: str = "g") -> st.SearchStrategy[EventMeta]:
    return st.builds(
        EventMeta,
        time=st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)),
        event_id=_text,
        golem_id=st.just(golem_id),
        cycle_id=st.none() | _text,
        causation_id=st.none() | _text,
        correlation_id=st.none() | _text,
        trace=st.dictionaries(_text, _text, max_size=2),
    )

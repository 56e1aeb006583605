"""Hostile input gets a typed error and never poisons a stream: fuzzing every way data gets in."""

from __future__ import annotations

import contextlib
import math
import string
import tempfile
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oneiros import Golems, InvalidEvent, OneirosError, load_episodes, open_store
from oneiros.config._load import load_config
from oneiros.events._codec import decode_event
from oneiros.events._types import MAX_FIGURE, MAX_TICK, Episode, Outcome
from oneiros.generators._results import PatternResult, parse_dream, parse_json, parse_partial

any_float = st.floats(allow_nan=True, allow_infinity=True)
any_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=40)  # lone surrogates too
hostile_tags = st.one_of(st.lists(any_text, max_size=5), st.just(["t"] * 300), st.just(["x" * 200]))


@st.composite
def hostile_episodes(draw: st.DrawFn) -> Episode:
    # Built in Python, as the API allows: msgspec does not validate Structs constructed this way.
    return Episode(
        tick=draw(st.integers(min_value=-2, max_value=2**63)),
        summary=draw(st.one_of(any_text, st.just("x" * 20_000))),
        tags=tuple(draw(hostile_tags)),
        regime=draw(any_text),
        significance=draw(any_float),
        arousal=draw(any_float),
        outcome=Outcome(surprise=draw(any_float), pnl=draw(any_float), regret=draw(any_float)),
        prediction_error=draw(any_float),
        embedding=draw(st.one_of(st.none(), st.lists(any_float, max_size=4).map(tuple))),
    )


def _is_clean(episode: Episode) -> bool:
    floats = [episode.significance, episode.arousal, episode.prediction_error, *(episode.embedding or ())]
    figures = [episode.outcome.surprise, episode.outcome.pnl, episode.outcome.regret, episode.prediction_error]
    floats += figures
    texts = [episode.summary, episode.regime, *episode.tags]
    return (
        all(math.isfinite(f) for f in floats)
        and all(abs(f) <= MAX_FIGURE for f in figures)
        and all(not any(0xD800 <= ord(c) <= 0xDFFF for c in t) for t in texts)
        and 0 <= episode.tick <= MAX_TICK
        and 1 <= len(episode.summary) <= 16_384
        and 0 <= episode.significance <= 1
        and 0 <= episode.arousal <= 1
        and len(episode.tags) <= 256
        and all(len(t) <= 128 for t in episode.tags)
        and len(episode.regime) <= 128
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(hostile_episodes(), min_size=1, max_size=3))
def test_hostile_episodes_through_the_api_are_refused_whole_and_the_stream_still_replays(
    episodes: list[Episode],
) -> None:
    """Recording episodes either writes them all (when every value is storable) or raises a typed
    error and writes none; either way every event of the stream still decodes."""
    store = open_store("memory://")
    golems = Golems(store)
    golems.create("g")
    before = store.head()
    try:
        golems.record_episodes("g", episodes)
    except OneirosError:
        assert before == store.head()
        assert not all(_is_clean(e) for e in episodes)
    else:
        assert all(_is_clean(e) for e in episodes)
        assert [*episodes] == [r.event.episode for r in store.read_stream("g")[1:]]
    assert golems.state("g").episodes == (len(episodes) if store.head() > before else 0)


def test_a_nan_names_the_field_it_is_in() -> None:
    """The refusal names the event type and the path of the offending value, verbatim."""
    golems = Golems(open_store("memory://"))
    golems.create("g")
    with pytest.raises(InvalidEvent) as caught:
        golems.record_episodes("g", [Episode(tick=1, summary="s", outcome=Outcome(pnl=float("nan")))])
    assert "EpisodeRecorded field episode.outcome.pnl: expected a finite number, got NaN or infinity" == str(
        caught.value
    )
    assert ("EpisodeRecorded", "episode.outcome.pnl") == (caught.value.type_name, caught.value.field)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=80) | st.just(b"[" * 50_000) | st.just(b'{"tick": 1e400, "summary": "s"}')))
def test_hostile_episode_files_raise_only_typed_errors(lines: list[bytes]) -> None:
    """Any bytes at all in an episode file give episodes or an EpisodeFileError, nothing else."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "episodes.jsonl"
        path.write_bytes(b"\n".join(lines))
        try:
            episodes = load_episodes(path)
        except OneirosError:
            return
        assert all(isinstance(e, Episode) for e in episodes)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(any_text, st.sampled_from(["X.v²", "EpisodeRecorded.v1", "EpisodeRecorded.v0", ".v1", "DreamStart.v9"])),
    st.one_of(st.binary(max_size=60), st.just(b"\xff\xfe"), st.just(b"[" * 50_000)),
)
def test_hostile_stored_events_raise_only_event_errors(topic: str, state: bytes) -> None:
    """Whatever bytes and topic a log holds, decoding raises an EventError or returns an event."""
    with contextlib.suppress(OneirosError):
        decode_event(topic, state, position=1)


toml_values = st.one_of(
    st.integers(), any_float.map(repr), any_text.map(lambda t: '"' + t.replace("\\", "").replace('"', "") + '"')
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(
                ["store", "golem", "schedule.enabled", "cycle.budget.cycle_tokens", "cycle.budget.month_usd", "nope"]
            ),
            toml_values,
        ),
        max_size=4,
    )
    | st.text(string.printable, max_size=60).map(lambda t: [("", t)])
)
def test_hostile_configs_raise_only_config_errors(pairs: list[tuple[str, object]]) -> None:
    """A config file with any keys and values loads or raises a typed error naming what was wrong."""
    text = "\n".join(f"{k} = {v}" if k else str(v) for k, v in pairs)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "oneiros.toml"
        path.write_text(text, errors="surrogatepass")
        with contextlib.suppress(OneirosError):
            load_config(path, environ={})


@settings(max_examples=300, deadline=None)
@given(st.one_of(any_text, st.binary(max_size=60).map(lambda b: b.decode("latin-1")), st.just("[" * 50_000)))
def test_hostile_model_output_raises_only_typed_errors(text: str) -> None:
    """Whatever a model answers, the parsers return a result or raise MalformedOutput."""
    for parse in (
        lambda: parse_json("k", "pattern", text, PatternResult),
        lambda: parse_partial("k", text),
        lambda: parse_dream("k", text),
    ):
        with contextlib.suppress(OneirosError):
            parse()


def test_an_episode_with_too_many_tags_is_refused_at_once() -> None:
    """200k tags used to take over a minute; the schema bound refuses them before any work."""
    golems = Golems(open_store("memory://"))
    golems.create("g")
    with pytest.raises(InvalidEvent) as caught:
        golems.record_episodes("g", [Episode(tick=1, summary="s", tags=("t",) * 200_000)])
    assert "episode.tags" == caught.value.field
    assert msgspec is not None

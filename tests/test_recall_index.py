"""The ``recall`` index applies a stretch of episodes at once (each word's row edited once per
stretch): whatever the stretches, its rows must be each golem's episodes and, per word, the ticks of
the newest ``postings`` episodes that have it, in the order they were recorded; caught up alone,
together with another projection, or taken live in pieces."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from oneiros._text import content_word_set
from oneiros.events._types import DreamStart, Episode, EpisodeRecorded, Event, EventMeta, GolemCreated
from oneiros.projections._db import ProjectionDB, open_projection_db
from oneiros.projections._index import GolemIndex
from oneiros.projections._recall import RecallIndex, RecallSettings
from oneiros.projections._runner import ProjectionRunner, RunnerSettings
from oneiros.store._store import open_store

_WORDS = ("harbor", "storm", "ledger", "signal", "copper", "tide")
_T0 = datetime(2026, 1, 1, tzinfo=UTC)
# (golem, tick, the episode's words, or None for a DreamStart between episodes)
_Step = tuple[str, int, tuple[str, ...] | None]
_steps = st.lists(
    st.tuples(
        st.sampled_from(("g", "h")),
        st.integers(0, 6),
        st.none() | st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4).map(tuple),
    ),
    min_size=1,
    max_size=40,
)


def _expected(steps: list[_Step], limit: int) -> dict[tuple[str, str], object]:
    """The rows, computed from the steps alone: an episode's row is the last recorded with its tick;
    a word's ticks are those of every episode whose text has it, the newest ``limit``."""
    rows: dict[tuple[str, str], object] = {}
    ticks: dict[str, list[int]] = {}
    for golem, tick, words in steps:
        if words is None:
            continue
        episode = Episode(tick=tick, summary=" ".join(words))
        rows[("episode", f"{golem}/{tick:012d}")] = {"tick": tick, "summary": episode.summary}
        # Its tags and regime are words of it too (the regime is "unknown" unless given).
        for word in content_word_set(" ".join((episode.summary, *episode.tags, episode.regime))):
            ticks.setdefault(f"{golem}/{word}", []).append(tick)
    rows |= {("word", key): {"ticks": found[-limit:]} for key, found in ticks.items()}
    return rows


def _rows(db: ProjectionDB) -> dict[tuple[str, str], object]:
    return {(kind, key): msgspec.json.decode(data) for kind, key, data in db.scan("recall")}


@settings(max_examples=60, deadline=None)
@given(steps=_steps, limit=st.integers(1, 4), batch=st.integers(1, 7), kept=st.integers(0, 3), piece=st.integers(1, 9))
def test_recall_rows_do_not_depend_on_how_the_log_is_cut(
    steps: list[_Step], limit: int, batch: int, kept: int, piece: int
) -> None:
    """Caught up alone (stretches of ``batch`` events, rows forgotten past ``kept`` at a commit),
    with another projection (the shared read), and taken live in pieces of ``piece`` events, the
    index holds the rows the steps give."""
    store = open_store("memory://")
    versions: dict[str, int] = {}
    for golem, tick, words in steps:
        event: Event = (
            DreamStart(cycle_id=f"{golem}-{tick}", trigger="owner")
            if words is None
            else EpisodeRecorded(episode=Episode(tick=tick, summary=" ".join(words)))
        )
        batch_of: list[Event] = [event] if golem in versions else [GolemCreated(name=golem), event]
        meta = EventMeta(time=_T0, event_id=f"e{store.head()}", golem_id=golem)
        store.append(golem, versions.get(golem, 0), [(meta, e) for e in batch_of])
        versions[golem] = versions.get(golem, 0) + len(batch_of)
    recall = RecallSettings(postings=limit)
    runner_settings = RunnerSettings(batch_events=batch, kept_rows=kept)
    alone, together, live = (open_projection_db("memory://") for _ in range(3))
    ProjectionRunner(store, alone, [RecallIndex(recall)], runner_settings).catch_up()
    ProjectionRunner(store, together, [RecallIndex(recall), GolemIndex()], runner_settings).catch_up()
    taker = ProjectionRunner(store, live, [RecallIndex(recall)], runner_settings)
    log = list(store.read_all())
    for start in range(0, len(log), piece):
        taker.take(log[start : start + piece])

    expected = _expected(steps, limit)

    def shown(db: ProjectionDB) -> dict[tuple[str, str], object]:
        # An episode row's other fields (tags, regime, time) are empty here: compare what is drawn.
        return {
            k: ({"tick": v["tick"], "summary": v["summary"]} if k[0] == "episode" else v)  # type: ignore[index]
            for k, v in _rows(db).items()
        }

    assert expected == shown(alone)
    assert expected == shown(together)
    assert expected == shown(live)
    assert store.head() == live.position("recall")

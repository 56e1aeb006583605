"""The offline generator writes reasoning a person can read: whole sentences about the episodes'
own content, deterministic under a seed, with the dream fragments and thread left dreamlike."""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oneiros import Deps, FixedClock, Golems, InProcessExecutor, SequentialIds, open_store
from oneiros._text import STOPWORDS, content_words, keywords
from oneiros.events._content import (
    DreamFragments,
    DreamStaged,
    EpisodeDepotentiated,
    HypnagogicPrediction,
    StrategyHypothesis,
    ThreatSimulated,
)
from oneiros.events._types import DreamCounterfactual, DreamHypothesis, DreamInsight, Episode, Outcome, ReplayBatch
from oneiros.generators._lines import EpisodeLine, episode_line, episode_lines
from oneiros.generators._offline import OfflineGenerator, dali_cut
from oneiros.generators._protocol import GenerationRequest, Task, TaskInputs
from oneiros.generators._results import (
    CounterfactualResult,
    DepotentiationResult,
    HypothesisResult,
    InsightResult,
    PatternResult,
    ThreatResult,
    parse_dream,
    parse_json,
)
from oneiros.phases._rem import MODES
from oneiros.settings._cycle import CycleBudget, CycleSettings
from oneiros.settings._prompts import PromptSet
from tests.cli_runner import run_cli

_WORDS = [
    "breakout", "funding", "oracle", "liquidity", "spread", "rebalance", "harvest", "stop", "entry", "exit",
    "volume", "hedge", "basis", "pool", "auction", "signal", "drawdown", "rally", "wick", "retest",
]  # fmt: skip
_TAGS = ["eth", "btc", "momentum", "mean-reversion", "latency", "fees", "gas", "lp", "sizing", "macro"]
_REGIMES = ["trending", "ranging", "volatile", "quiet", "unknown"]
# A sentence does not end on a word that needs something after it.
_DANGLING = {"a", "an", "the", "and", "or", "of", "to", "with", "as", "if", "into", "before", "while", "when"}
START = datetime(2026, 9, 1, 3, 0, tzinfo=UTC)


def _summaries() -> st.SearchStrategy[str]:
    words = st.lists(st.sampled_from(_WORDS), min_size=2, max_size=8)
    return st.builds(lambda ws, pct: f"{' '.join(ws).capitalize()}; moved {pct}%", words, st.integers(0, 9))


@st.composite
def episode_sets(draw: st.DrawFn, min_size: int = 1, max_size: int = 6) -> list[Episode]:
    count = draw(st.integers(min_size, max_size))
    out = []
    for index in range(count):
        out.append(
            Episode(
                tick=100 + 37 * index,
                time=START + timedelta(hours=30 * index),
                summary=draw(_summaries()),
                tags=tuple(draw(st.lists(st.sampled_from(_TAGS), max_size=3, unique=True))),
                regime=draw(st.sampled_from(_REGIMES)),
                significance=draw(st.floats(0, 1)),
                arousal=draw(st.floats(0, 1)),
                outcome=Outcome(
                    pnl=draw(st.floats(-0.1, 0.1)), surprise=draw(st.floats(0, 1)), regret=draw(st.floats(0, 0.5))
                ),
            )
        )
    return out


def assert_sentences(text: str) -> None:
    """``text`` is whole sentences: it opens with a capital, a digit or a quote, closes on a full
    stop or question mark after a word that can end one, and its quotes and brackets pair up."""
    body = re.sub(r"^\[[^\]]+\]\s*", "", text.strip())  # an engine's "[tag] " or "[perturbation] " label
    assert body, text
    assert body[0].isupper() or body[0].isdigit() or body[0] == '"', text
    assert body.endswith((".", "?")), text
    last = re.findall(r"[A-Za-z']+", body)[-1].lower()
    assert last not in _DANGLING, text
    assert body.count('"') % 2 == 0, text
    assert body.count("(") == body.count(")"), text
    assert "  " not in body, text


def assert_mentions(text: str, episodes: list[Episode]) -> None:
    """``text`` names something the episodes themselves said: a tag or a word of a summary."""
    said = {t.lower() for e in episodes for t in e.tags} | {w for e in episodes for w in content_words(e.summary)}
    assert said & (set(content_words(text)) | {w.lower() for w in re.findall(r"[\w-]+", text)}), text


def _request(task: Task, episodes: list[Episode], call_key: str, **values: object) -> GenerationRequest:
    stated = {name: value for name, value in values.items() if name in TaskInputs.__struct_fields__}
    return GenerationRequest(
        call_key=call_key,
        phase="rem",
        task=task,
        prompt=PromptSet().render(task, episodes=episode_lines(episodes), episode=episode_line(episodes[0]), **values),
        fragments=tuple(e.summary for e in episodes),
        given=msgspec.convert({"episodes": episodes, **stated}, TaskInputs, from_attributes=True),
    )


# Each reasoning task with a call key shaped as its engine shapes it, the result it parses into,
# its prompt values, and the fields that must name the episodes' own content.
_Case = tuple[Task, str, type[msgspec.Struct], dict[str, object], set[str]]
_COUNTERFACTUALS: list[_Case] = [
    (
        "counterfactual",
        f"c:rem:counterfactual:100:{b}",
        CounterfactualResult,
        {"branch": b, "depth": 4},
        {"hypothesis", "lesson"},
    )
    for b in (1, 2, 3, 4)
]
_HYPOTHESES: list[_Case] = [
    ("hypothesis", f"c:rem:creative:0:{m}", HypothesisResult, {"mode": m}, {"hypothesis"}) for m in MODES
]
_REASONING: list[_Case] = [
    ("pattern", "c:nrem:0:forward", PatternResult, {}, {"pattern"}),
    ("reverse", "c:nrem:0:reverse", PatternResult, {}, {"pattern"}),
    ("perturbed", "c:nrem:0:perturbed", PatternResult, {"perturbation": "a latency spike"}, {"pattern"}),
    *_COUNTERFACTUALS,
    *_HYPOTHESES,
    ("threat", "c:rem:threat:0", ThreatResult, {"kind": "flash crash"}, {"scenario", "response"}),
    ("depotentiate", "c:rem:depotentiate:100", DepotentiationResult, {}, {"happened"}),
]  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(episodes=episode_sets(), seed=st.integers(0, 2**32))
def test_every_reasoning_output_is_whole_sentences_about_the_episodes(episodes: list[Episode], seed: int) -> None:
    """For generated episodes, every reasoning task's output parses into its result, each of its
    text fields is whole sentences naming the episodes' own content, and the same seed and call
    give the same text."""
    generator = OfflineGenerator(seed=seed)
    tags = [t for e in episodes for t in e.tags]
    # Integration asks for an insight only on a tag the episodes share.
    theme: list[_Case] = [
        ("insight", f"c:integration:theme:{t}", InsightResult, {"tag": t}, {"insight"}) for t in tags[:1]
    ]
    for task, key, result_type, values, about in [*_REASONING, *theme]:
        request = _request(task, episodes, key, **values)
        text = generator.generate(request).text
        assert text == OfflineGenerator(seed=seed).generate(request).text
        result: msgspec.Struct = parse_json(key, task, text, result_type)
        fields = {k: v for k, v in msgspec.structs.asdict(result).items() if isinstance(v, str)}
        assert about <= set(fields), (task, text)
        for name, value in fields.items():
            assert_sentences(value)
            if name in about:
                assert_mentions(value, episodes)


@settings(max_examples=40, deadline=None)
@given(episodes=episode_sets(min_size=2), seed=st.integers(0, 2**32))
def test_fragments_and_thread_stay_dreamlike_and_partials_end_whole(episodes: list[Episode], seed: int) -> None:
    """The dream keeps Bumblebee's shape (3-6 first-person fragments, one thread joining words of the
    memories); a hypnagogic partial is one or more whole clauses whose only content words come from
    the residue, so a staged creative prediction is matched on the residue's words."""
    generator = OfflineGenerator(seed=seed)
    dream = generator.generate(
        GenerationRequest(
            call_key="c:rem:dream",
            phase="rem",
            task="dream",
            prompt=PromptSet().render("dream", name="g", pairs=episode_lines(episodes)),
            fragments=tuple(e.summary for e in episodes),
            given=TaskInputs(episodes=tuple(episodes)),
        )
    )
    parsed = parse_dream("c:rem:dream", dream.text)
    assert 3 <= len(parsed.fragments) <= 6
    assert all(f == f.lower() for f in parsed.fragments)
    assert_mentions(parsed.thread, episodes)
    partial = generator.generate(
        GenerationRequest(
            call_key="c:hypnagogic_onset:partial:0",
            phase="hypnagogic_onset",
            task="partial",
            prompt=PromptSet().render("partial", theme="none", episodes=episode_lines(episodes, figures=False)),
            fragments=tuple(e.summary for e in episodes),
            max_tokens=80,
            given=TaskInputs(episodes=tuple(episodes)),
        )
    ).text
    assert partial.endswith("."), partial
    residue = {w for e in episodes for w in (*e.tags, *keywords(e.summary, 50))} | {"sleep", "water", "hour"}
    assert set(content_words(partial)) <= residue | STOPWORDS, partial


@pytest.mark.parametrize(("limit", "expected"), [(80, "a b, c d; e f."), (5, "a b, c d."), (3, "a b."), (1, "a")])
def test_the_dali_cut_keeps_whole_clauses(limit: int, expected: str) -> None:
    """Token ``limit + 1`` is never kept, and the cut falls after the last whole clause that fits."""
    assert expected == dali_cut("a b, c d; e f.", limit)


@settings(max_examples=80, deadline=None)
@given(episodes=episode_sets(max_size=4))
def test_the_offline_generator_reads_what_the_prompt_line_shows(episodes: list[Episode]) -> None:
    """What the offline generator reads of an episode is what the engines' prompt line shows a
    model: tick, regime, tags, summary and the PnL to the line's precision, each also in the line."""
    for episode in episodes:
        read, line = EpisodeLine.of(episode), episode_line(episode)
        assert (episode.tick, episode.summary, tuple(episode.tags)) == (read.tick, read.summary, read.tags)
        assert ("" if episode.regime == "unknown" else episode.regime) == read.regime
        assert round(episode.outcome.pnl, 4) == read.pnl
        assert f"tick {read.tick}" in line
        assert read.summary in line
        assert f"{episode.outcome.pnl:+.4f}" in line


def test_a_decisions_branches_take_different_alternatives() -> None:
    """Counterfactual branches of one decision ask different questions and teach different lessons
    (the old generator wrote the same lesson twice)."""
    loss = Episode(
        tick=211,
        summary="Faded the BTC breakout too early; stopped out for a 3% loss",
        tags=("btc", "mean-reversion"),
        regime="trending",
        outcome=Outcome(pnl=-0.03),
    )
    outputs = [
        parse_json(
            "k",
            "counterfactual",
            OfflineGenerator(3)
            .generate(_request("counterfactual", [loss], f"c:rem:counterfactual:211:{b}", branch=b))
            .text,
            CounterfactualResult,
        )
        for b in (1, 2, 3)
    ]
    assert 3 == len({o.hypothesis for o in outputs}) == len({o.lesson for o in outputs})
    for o in outputs:
        assert "tick 211" in o.hypothesis
        assert "trending market" in o.lesson or "3.0%" in o.outcome


def _cycle_golems(episodes: list[Episode], seed: int) -> tuple[Golems, InProcessExecutor]:
    golems = Golems(open_store("memory://"), deps=Deps(clock=FixedClock(START), ids=SequentialIds("e"), seed=seed))
    golems.create("g")
    golems.record_episodes("g", episodes)
    settings_ = CycleSettings(budget=CycleBudget(tier="hardened"))
    return golems, InProcessExecutor(golems, settings=settings_)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(episodes=episode_sets(min_size=4, max_size=12), seed=st.integers(0, 1000))
def test_a_whole_cycle_writes_sentences_for_every_reasoning_output(episodes: list[Episode], seed: int) -> None:
    """A [HARDENED] cycle over generated episodes: every hypothesis, counterfactual (with outcome and
    lesson), strategy and its test, threat, depotentiation lesson, pattern, insight and validation
    criterion in the log is whole sentences, and the reasoning names the episodes' content."""
    golems, executor = _cycle_golems(episodes, seed)
    executor.run_cycle("g")
    events = [r.event for r in golems.store.read_all()]
    threads = {e.thread for e in events if isinstance(e, DreamFragments)}
    texts: list[tuple[str, bool]] = []
    for e in events:
        if isinstance(e, DreamHypothesis):
            texts.append((e.hypothesis, True))
        elif isinstance(e, DreamCounterfactual):
            texts += [(e.hypothesis, True), (e.outcome, False), (e.lesson, True)]
        elif isinstance(e, StrategyHypothesis):
            texts += [(e.hypothesis, True), (e.test, False)]
        elif isinstance(e, ThreatSimulated):
            texts += [(e.scenario, True), (e.response, False)]
        elif isinstance(e, EpisodeDepotentiated):
            texts.append((e.lesson, False))
        elif isinstance(e, ReplayBatch):
            texts.append((e.pattern, True))
        elif isinstance(e, DreamInsight) and e.insight not in threads:
            texts.append((e.insight, True))
        elif isinstance(e, DreamStaged):
            texts.append((e.validation_criterion, False))
    assert texts
    for text, about_episodes in texts:
        assert_sentences(text)
        if about_episodes:
            assert_mentions(text, episodes)


def test_the_sample_dream_reads_as_reasoning_on_the_cli(tmp_path: Path) -> None:
    """What a new user reads after ``oneiros dream``: every staged entry is whole sentences (the
    creative predictions and the dream thread excepted, which are dreamlike), lessons name the
    sample's own trades, nothing is cut mid-phrase, and the journal keeps Bumblebee's shape."""
    env = {**os.environ, "COLUMNS": "200"}
    env.pop("ONEIROS_STORE", None)

    def run(*args: str) -> str:
        done = run_cli([*args], cwd=tmp_path, env=env)
        assert 0 == done.returncode, done.stderr
        return done.stdout

    run("dream", "--sample")
    entries = json.loads(run("staging", "--json"))
    thread = next(r.event.thread for r in _sample_store(tmp_path).read_all() if isinstance(r.event, DreamFragments))
    assert {"novel_insight", "playbook_revision", "creative_prediction"} <= {e["kind"] for e in entries}
    for entry in entries:
        assert_sentences(entry["criterion"]["description"])
        if entry["kind"] != "creative_prediction" and entry["text"] != thread:
            assert_sentences(entry["text"])
        assert not entry["text"].endswith(("as if", "as if.")), entry["text"]
    lessons = [e["text"] for e in entries if e["kind"] == "playbook_revision"]
    assert all(re.search(r"tick \d+|tagged \w+", lesson) for lesson in lessons), lessons
    assert not any(lesson.startswith("weigh ") for lesson in lessons)
    journal = run("journal", "--markdown")
    assert "#dream #consolidation" in journal
    assert f"*thread: {thread}*" in journal


def _sample_store(cwd: Path):  # type: ignore[no-untyped-def]
    return open_store(f"sqlite:///{cwd / '.oneiros' / 'events.db'}")


def test_predictions_from_the_residue_are_confirmed_by_its_words() -> None:
    """A creative prediction's criterion is the two residue words its image joins, never the imagery."""
    golems, executor = _cycle_golems(
        [
            Episode(
                tick=100 + i,
                time=START + timedelta(days=i),
                summary=s,
                tags=t,
                regime="ranging",
                outcome=Outcome(pnl=0.01),
            )
            for i, (s, t) in enumerate(
                [
                    ("Harvested pool fees into the band", ("lp", "fees")),
                    ("Oracle guard paused trading", ("oracle", "guard")),
                    ("Macro print moved funding", ("macro", "funding")),
                    ("Rebalanced reserves quietly", ("rebalance",)),
                ]
            )
        ],
        seed=5,
    )
    executor.run_cycle("g")
    staged = [r.event for r in golems.store.read_all() if isinstance(r.event, DreamStaged)]
    predictions = [r.event for r in golems.store.read_all() if isinstance(r.event, HypnagogicPrediction)]
    assert predictions
    for entry in (s for s in staged if s.kind == "creative_prediction"):
        joined = re.search(r"brings (\S+) and (\S+) together", entry.validation_criterion)
        assert joined is not None, entry.validation_criterion
        assert {joined[1], joined[2]} <= set(content_words(entry.content)) - STOPWORDS

"""OpenSeed's wake-up message in its own shape, with the ``openseed`` preset: when the golem
woke and how long it slept, its reflection, its priority, its recent observations with their
RED / YLW / GRN levels, and where the full history is."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from oneiros import Deps, FixedClock, Golems, InProcessExecutor, SequentialIds, open_store
from oneiros.config._load import load_config
from oneiros.episodes._episodes import load_episodes, sample_episodes_path
from oneiros.events._content import DreamStaged, WakeUpSummary
from oneiros.events._observations import DreamObservation
from oneiros.events._schedule import DreamDirected
from oneiros.events._types import DreamPhase, DreamStart
from tests.cli_runner import run_cli

START = datetime(2026, 2, 12, 9, 32, tzinfo=UTC)


def _dream(preset: str | None) -> Golems:
    golems = Golems(
        open_store("memory://"), deps=Deps(clock=FixedClock(START, timedelta(seconds=3)), ids=SequentialIds("x"))
    )
    golems.create("g")
    golems.record_episodes("g", load_episodes(sample_episodes_path()))
    InProcessExecutor(golems, settings=load_config(preset=preset, path="/dev/null", environ={}).cycle).run_cycle("g")
    return golems


def test_the_openseed_preset_wakes_the_golem_in_openseeds_words() -> None:
    """The message opens "You woke up at <ISO time>Z after sleeping <n>s." (the return phase's time
    and its distance from DreamStart), then "During sleep you reflected:", "Your priority:" (the
    first lesson to act on), "Recent observations:" as "<LEVEL> HH:MM <text>" lines (the night's
    facts, the dream's observations, RED first, at most five), and "Full history:"."""
    golems = _dream("openseed")
    history = golems.history("g")
    started = next(r.meta.time for r in history if isinstance(r.event, DreamStart))
    woke = next(
        r.meta.time for r in history if isinstance(r.event, DreamPhase) and r.event.phase == "hypnopompic_return"
    )
    text = next(r.event.text for r in history if isinstance(r.event, WakeUpSummary))
    lines = text.splitlines()
    slept = int((woke - started).total_seconds())
    assert f"You woke up at {woke:%Y-%m-%dT%H:%M:%SZ} after sleeping {slept}s." == lines[0]
    assert ["", "During sleep you reflected:"] == lines[1:3]
    assert lines[3].startswith("While dreaming I replayed 19 episodes")
    lesson = next(
        r.event.content for r in history if isinstance(r.event, DreamStaged) and r.event.kind == "playbook_revision"
    )
    assert f"Your priority: {lesson}" in lines
    observed = lines[lines.index("Recent observations:") + 1 :]
    levels = [line for line in observed if re.match(r"^(RED|YLW|GRN) \d\d:\d\d \S", line)]
    facts = [r.event for r in history if isinstance(r.event, DreamObservation)]
    rank = {"RED": 0, "YLW": 1, "GRN": 2}
    expected = [f.text for f in sorted(facts, key=lambda f: rank[f.priority])][:5]
    assert facts
    assert expected == [line.split(" ", 2)[2] for line in levels]
    assert any(line.startswith("Full history: ") for line in lines)


def test_other_presets_keep_the_plain_summary() -> None:
    """Without the preset the wake-up stays the few plain sentences."""
    text = next(r.event.text for r in _dream(None).history("g") if isinstance(r.event, WakeUpSummary))
    assert text.startswith("While dreaming I replayed")
    assert "You woke up" not in text


def test_oneiros_run_with_the_openseed_preset(tmp_path: Path) -> None:
    """On the user's path: ``oneiros run --preset openseed`` dreams on the owner's directive, and
    ``oneiros report`` shows OpenSeed's message."""
    url = f"sqlite:///{tmp_path / 'events.db'}"
    golems = Golems(open_store(url))
    golems.create("golem")
    golems.record_episodes("golem", load_episodes(sample_episodes_path()))
    golems.record("golem", [DreamDirected(reason="dream now")])
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")}

    def oneiros(*args: str) -> str:
        done = run_cli([*args], cwd=tmp_path, env=env)
        assert 0 == done.returncode, done.stderr
        return done.stdout

    oneiros("run", "--store", url, "--preset", "openseed", "--ticks", "2", "--tick-seconds", "0.01")
    shown = oneiros("report", "--store", url, "--json")
    assert re.search(r"You woke up at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ after sleeping \d+s\.", shown)
    assert "Your priority: " in shown
    assert "Recent observations:" in shown

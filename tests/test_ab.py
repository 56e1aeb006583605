"""Offline A/B: the shipped timeline gives the same numbers on every run, through the CLI; a bad
timeline is named line by line; a live model is called once and its answers reused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from oneiros._errors import InputError
from oneiros.lab._ab import Arm, load_timeline, run_arm
from oneiros.settings._cycle import CycleSettings
from oneiros.settings._generator import GeneratorSettings, OpenAISettings
from tests.chat_server import HARDENED, ChatServer
from tests.cli_runner import run_cli

TIMELINE = Path(__file__).parents[1] / "examples" / "ab_timeline.jsonl"


def _ab(cwd: Path, *args: str, fresh: bool = False) -> dict[str, Any]:
    argv = ["ab", str(TIMELINE), "--json", *args]
    if fresh:  # a process of its own: its own hash seed, nothing cached from an earlier run
        out = subprocess.run(
            [sys.executable, "-m", "oneiros", *argv], cwd=cwd, check=True, capture_output=True, text=True
        )
    else:
        out = run_cli(argv, cwd=cwd, check=True)
    report: dict[str, Any] = json.loads(out.stdout)
    return report


def test_the_shipped_timeline_gives_the_same_numbers_twice(tmp_path: Path) -> None:
    """Two runs of `oneiros ab` in fresh processes print the same report; the dreaming arm ran a
    cycle at each of the six dream points and promoted insights that later outcomes bore out, the
    arm that does not dream has nothing to show and spent nothing; nothing is left on disk."""
    first, second = _ab(tmp_path, fresh=True), _ab(tmp_path, fresh=True)
    assert first == second
    assert (72, 288, 6) == (first["episodes"], first["outcomes"], first["dream_points"])
    a, b = first["arms"]
    assert ("a", True, 6) == (a["arm"], a["dreams"], a["cycles"])
    assert a["promoted"] > 0
    assert a["tokens"] > 0
    assert 0.0 < a["hit_rate"] < 1.0
    assert {
        "arm": "b",
        "label": "not dreaming",
        "dreams": False,
        "cycles": 0,
        "staged": 0,
        "promoted": 0,
        "refuted": 0,
        "confirmed_after_promotion": 0,
        "contradicted_after_promotion": 0,
        "precision": None,
        "hit_rate": None,
        "tokens": 0,
        "cost_usd": 0.0,
        "model_calls": 0,
        "recorded_calls": 0,
    } == b
    assert [] == list(tmp_path.iterdir())


def test_two_configurations_compare_their_sweeps(tmp_path: Path) -> None:
    """Arm b with a staging buffer three times as large ([staging] cap = 30) dreams the same
    cycles (same tokens) but keeps entries long enough for more outcomes to promote or refute."""
    (tmp_path / "roomy.toml").write_text("[staging]\ncap = 30\n")
    report = _ab(tmp_path, "--config-b", "roomy.toml")
    a, b = report["arms"]
    assert ("dreaming, roomy.toml", a["tokens"]) == (b["label"], b["tokens"])
    assert b["promoted"] > a["promoted"]
    assert b["refuted"] > a["refuted"]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"tick": 1, "dream": true, "episode": {"tick": 1, "summary": "x"}}', "exactly one of episode"),
        ('{"tick": 2, "episode": {"tick": 3, "summary": "x"}}', "the episode's tick 3 is not the line's tick 2"),
        ('{"tick": 1, "wake": true}', "Object contains unknown field `wake`"),
        ('{"tick": 0, "dream": true}', "tick 0 comes after tick 1; lines go in tick order"),
        (
            '{"tick": 2, "episode": {"tick": 2, "summary": "x", "outcome": {"pnl": 1e308}}}',
            "Expected `float` <= 1000000000000.0 - at `$.episode.outcome.pnl`",
        ),
    ],
)
def test_a_bad_timeline_line_is_named(tmp_path: Path, line: str, message: str) -> None:
    """Each bad line is refused with its line number and what is wrong, before anything runs."""
    path = tmp_path / "t.jsonl"
    path.write_text('{"tick": 1, "dream": true}\n' + line + "\n")
    with pytest.raises(InputError) as caught:
        load_timeline(path)
    assert str(caught.value).startswith("t.jsonl line 2: ")
    assert message in str(caught.value)


def test_a_live_model_is_called_once_and_its_answers_reused(
    chat_server: ChatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With an OpenAI-compatible model and a recordings file: the first run calls the model and
    records every call; the second answers every call from the recording, makes no request and
    reports the same numbers."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    steps = load_timeline(TIMELINE)
    cut = [i for i, s in enumerate(steps) if s.dream][1] + 1
    generator = GeneratorSettings(kind="openai", openai=OpenAISettings(base_url=chat_server.url, timeout_s=5))
    cycle = CycleSettings(budget=HARDENED.budget, generator=generator)
    arm = Arm(name="a", cycle=cycle, recordings=tmp_path / "a.jsonl")
    first = run_arm(steps[:cut], arm)
    requests = len(chat_server.requests)
    assert (requests, 0) == (first.model_calls, first.recorded_calls)
    assert requests > 10
    second = run_arm(steps[:cut], arm)
    assert requests == len(chat_server.requests)
    assert (0, requests) == (second.model_calls, second.recorded_calls)
    same = ("promoted", "refuted", "staged", "hit_rate", "tokens", "cost_usd", "precision")
    assert [getattr(first, k) for k in same] == [getattr(second, k) for k in same]


def test_two_arms_with_the_same_settings_give_the_same_numbers(tmp_path: Path) -> None:
    """An A/A run (both arms dreaming with the same config) reports identical figures for both:
    the arms differ by their settings only, never by their ids or clock."""
    (tmp_path / "same.toml").write_text("")
    a, b = _ab(tmp_path, "--config-a", "same.toml", "--config-b", "same.toml")["arms"]
    assert {**a, "arm": "b"} == b


def test_oneiros_ab_with_recordings_calls_the_model_once_through_the_cli(
    chat_server: ChatServer, tmp_path: Path
) -> None:
    """`oneiros ab TIMELINE --config-a live.toml --recordings DIR` twice, each in a process of its
    own: the first run's dreaming arm calls the model and records every call in DIR; the second
    makes no request, answers every call from DIR and prints the same numbers."""
    lines = [line for line in TIMELINE.read_text().splitlines() if line.strip()]
    dreams = [i for i, line in enumerate(lines) if json.loads(line).get("dream")]
    timeline = tmp_path / "two_dreams.jsonl"
    timeline.write_text("\n".join(lines[: dreams[1] + 1]) + "\n")
    (tmp_path / "live.toml").write_text(
        '[cycle.budget]\ntier = "hardened"\nprices = {}\n'
        f'[cycle.generator]\nkind = "openai"\n[cycle.generator.openai]\nbase_url = "{chat_server.url}"\ntimeout_s = 5\n'
    )
    env = {"PATH": "/usr/bin:/bin", "OPENAI_API_KEY": "sk-test"}
    argv = ["ab", str(timeline), "--config-a", "live.toml"]
    argv += ["--recordings", "recorded", "--json"]

    def run() -> dict[str, Any]:
        done = run_cli(argv, cwd=tmp_path, env=env)
        assert 0 == done.returncode, done.stderr
        a, _b = json.loads(done.stdout)["arms"]
        return dict(a)

    first = run()
    requests = len(chat_server.requests)
    assert requests > 10
    assert (requests, 0, 2) == (first["model_calls"], first["recorded_calls"], first["cycles"])
    assert (tmp_path / "recorded" / "a.jsonl").is_file()
    second = run()
    assert requests == len(chat_server.requests)
    assert (0, requests) == (second["model_calls"], second["recorded_calls"])
    calls = ("model_calls", "recorded_calls")
    assert {k: v for k, v in first.items() if k not in calls} == {k: v for k, v in second.items() if k not in calls}

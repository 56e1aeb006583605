"""Prompt templates users can override, and the parsers that turn model text into typed results."""

from __future__ import annotations

from pathlib import Path

import pytest

from oneiros._errors import InvalidPromptTemplate, MalformedOutput
from oneiros.generators._results import CounterfactualResult, parse_dream, parse_json
from oneiros.settings._prompts import PromptSet


def test_an_override_replaces_the_default_prompt() -> None:
    """A user's template is used for its task and filled with the step's values."""
    prompts = PromptSet(overrides={"pattern": "Consolidate:\n$episodes\nJSON please."})
    assert "Consolidate:\n- a\nJSON please." == prompts.render("pattern", episodes="- a")
    assert "what pattern connects" in PromptSet().render("pattern", episodes="- a")


def test_an_unknown_placeholder_is_refused_when_set() -> None:
    """A placeholder the task does not fill fails at configuration time with the allowed ones named."""
    with pytest.raises(InvalidPromptTemplate) as info:
        PromptSet(overrides={"threat": "Simulate $kind around $episode"})
    assert (
        "invalid prompt template for task 'threat': unknown placeholder $episode; this task fills $episodes, $kind"
        == str(info.value)
    )


def test_an_unknown_task_is_refused() -> None:
    """Overrides name real tasks only."""
    with pytest.raises(InvalidPromptTemplate) as info:
        PromptSet(overrides={"nightmare": "boo"})
    assert str(info.value).startswith(
        "invalid prompt template for task 'nightmare': no such task; tasks are pattern, hypothesis"
    )


def test_overrides_load_from_toml(tmp_path: Path) -> None:
    """A TOML file sets the system prompt and a [prompts] table of overrides (Ethos's custom prompt)."""
    path = tmp_path / "prompts.toml"
    path.write_text('system = "Be brief."\n[prompts]\ninsight = "Theme $tag: $episodes"\n')
    prompts = PromptSet.from_toml(path)
    assert ("Be brief.", "Theme eth: x") == (prompts.system, prompts.render("insight", tag="eth", episodes="x"))


def test_json_results_are_found_inside_prose_and_checked() -> None:
    """The first JSON object in the text is decoded into the task's result; missing fields are malformed."""
    text = 'Sure!\n```json\n{"hypothesis": "h", "outcome": "o", "lesson": "l"}\n```'
    assert CounterfactualResult("h", "o", "l") == parse_json("k", "counterfactual", text, CounterfactualResult)
    with pytest.raises(MalformedOutput) as info:
        parse_json("k", "counterfactual", '{"hypothesis": "h"}', CounterfactualResult)
    assert "malformed 'counterfactual' output for 'k': Object missing required field `outcome`" == str(info.value)


def test_the_dream_has_fragments_and_a_thread() -> None:
    """FRAGMENTS lines lose their bullets and are capped at six; THREAD is one sentence; either missing is malformed."""
    text = "FRAGMENTS:\n" + "\n".join(f"- fragment {i}" for i in range(8)) + "\nTHREAD: the tide pulls\n at thoughts"
    result = parse_dream("k", text)
    assert (6, "fragment 0", "the tide pulls at thoughts") == (
        len(result.fragments),
        result.fragments[0],
        result.thread,
    )
    with pytest.raises(MalformedOutput) as info:
        parse_dream("k", "FRAGMENTS:\n- only fragments")
    assert "malformed 'dream' output for 'k': no THREAD: section" == str(info.value)


def test_cycle_settings_round_trip_through_json() -> None:
    """Settings, prompt overrides and prices included, survive msgspec JSON (job payloads are never
    pickled), and a bad override in a payload fails as the same configuration error."""
    import msgspec

    from oneiros.settings._cycle import CycleBudget, CycleSettings, EngineSettings

    settings = CycleSettings(
        budget=CycleBudget(tier="hardened", month_usd=3.0),
        engines=EngineSettings(prompts=PromptSet(overrides={"pattern": "Look at $episodes"})),
        credit_fraction=0.4,
    )
    raw = msgspec.json.encode(settings)
    assert settings == msgspec.json.decode(raw, type=CycleSettings)
    with pytest.raises(InvalidPromptTemplate) as info:
        msgspec.json.decode(raw.replace(b"$episodes", b"$nothing"), type=CycleSettings)
    assert "invalid prompt template for task 'pattern': unknown placeholder $nothing; this task fills $episodes" == str(
        info.value
    )

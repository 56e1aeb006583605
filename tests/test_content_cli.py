"""``oneiros dream --tier``, ``report``, ``budget`` and ``pairs`` on the embedded SQLite store."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from oneiros.cli import app

runner = CliRunner()


def test_dream_then_report_budget_and_pairs_as_json(sqlite_url: str) -> None:
    """A hardened dream's report matches its DreamComplete; budget and pairs answer in JSON."""
    dreamt = runner.invoke(app, ["dream", "--sample", "--store", sqlite_url, "--tier", "hardened", "--json"])
    assert 0 == dreamt.exit_code, dreamt.output
    complete = json.loads(dreamt.output)["complete"]
    shown = runner.invoke(app, ["report", "--store", sqlite_url, "--json"])
    assert 0 == shown.exit_code, shown.output
    payload = json.loads(shown.output)
    assert complete["episodes_replayed"] == payload["report"]["journal"]["phase1_summary"]["episodes_replayed"]
    assert payload["wake_up"]["text"].startswith("While dreaming I replayed")
    spent = json.loads(runner.invoke(app, ["budget", "--store", sqlite_url, "--tier", "hardened", "--json"]).output)
    assert ["cycle", "window", "day", "month"] == [c["cap"] for c in spent["caps"]]
    assert all(c["tokens"] > 0 for c in spent["caps"])
    drawn = json.loads(runner.invoke(app, ["pairs", "--store", sqlite_url, "--json"]).output)
    assert 3 == len(drawn["pairs"])
    assert all(p["similarity"] <= 0.35 for p in drawn["pairs"])


def test_unknown_tier_is_a_clear_error(sqlite_url: str) -> None:
    """A tier that does not exist exits 2 naming the choices, and writes nothing."""
    result = runner.invoke(app, ["dream", "--store", sqlite_url, "--tier", "gold"])
    assert 2 == result.exit_code
    expected = (
        "error: invalid setting cycle.budget.tier = 'gold' (from flag --tier): expected one of 'core', 'hardened'"
    )
    assert expected == " ".join(result.output.split())


def test_report_without_a_dream_is_a_clear_error(sqlite_url: str) -> None:
    """Asking for the report of a golem that never dreamt, or of one that does not exist, names the
    golem and what it lacks."""
    from oneiros import Golems, open_store

    assert 0 == runner.invoke(app, ["dream", "--sample", "--store", sqlite_url, "--json"]).exit_code
    with open_store(sqlite_url) as store:
        Golems(store).create("sleepless")
    said = []
    for golem in ("sleepless", "nobody"):
        result = runner.invoke(app, ["report", "--store", sqlite_url, "--golem", golem])
        said.append((result.exit_code, " ".join(result.output.split())))
    assert [
        (2, "error: golem 'sleepless' has not dreamt yet: it has no cycle"),
        (2, "error: golem 'nobody' does not exist"),
    ] == said


def test_budget_from_the_ledger_events_shows_what_the_whole_stream_gives(sqlite_url: str) -> None:
    """``budget``, which reads only the golem's ledger events and its last event, shows what
    ``budget_report`` over the whole stream gives: after two cycles and episodes recorded since
    (so the stream's last event is an episode, whose time ends the caps' windows)."""
    from msgspec.structs import replace

    from oneiros import open_store
    from oneiros.episodes._episodes import load_episodes, sample_episodes_path
    from oneiros.fsm._service import Golems
    from oneiros.runtime._budget import budget_report
    from oneiros.settings._cycle import CycleBudget

    for _ in range(2):
        assert 0 == runner.invoke(app, ["dream", "--sample", "--store", sqlite_url, "--tier", "hardened"]).exit_code
    with open_store(sqlite_url) as store:
        later = load_episodes(sample_episodes_path())[:3]
        Golems(store).record_episodes("golem", [replace(e, tick=10_000 + i) for i, e in enumerate(later)])
        last_cycle, rows = budget_report(store.read_stream("golem"), CycleBudget(tier="hardened"))
    shown = json.loads(runner.invoke(app, ["budget", "--store", sqlite_url, "--tier", "hardened", "--json"]).output)
    whole = {"phases": [], "tokens_in": 0, "tokens_out": 0, "cost_usd": 0.0}  # given for one cycle only
    assert {"golem_id": "golem", "tier": "hardened", "cycle_id": last_cycle, "caps": rows, **whole} == shown


def test_budget_judges_spend_by_the_configured_caps(sqlite_url: str, tmp_path: Path) -> None:
    """``budget --config`` shows the caps of that config, which every other process enforces: a month cap of $3 and a
    core cycle cap of 9,000 tokens from ``--config`` (the defaults alone showed $15.00 and 12,000),
    and ``--tier`` picks the tier under them: the cap the config set holds at the hardened tier,
    which fills in only the caps the config left unset ($0.50 a cycle)."""
    assert 0 == runner.invoke(app, ["dream", "--sample", "--store", sqlite_url, "--json"]).exit_code
    config = tmp_path / "oneiros.toml"
    config.write_text("[cycle.budget]\nmonth_usd = 3.0\ncycle_tokens = 9000\n")
    shown = runner.invoke(app, ["budget", "--store", sqlite_url, "--config", str(config), "--json"])
    assert 0 == shown.exit_code, shown.output
    caps = {c["cap"]: (c["token_cap"], c["usd_cap"]) for c in json.loads(shown.output)["caps"]}
    assert ("core", (9000, None), (None, 3.0)) == (json.loads(shown.output)["tier"], caps["cycle"], caps["month"])
    argv = ["budget", "--store", sqlite_url, "--config", str(config), "--tier", "hardened", "--json"]
    hardened = runner.invoke(app, argv)
    assert 0 == hardened.exit_code, hardened.output
    caps = {c["cap"]: (c["token_cap"], c["usd_cap"]) for c in json.loads(hardened.output)["caps"]}
    assert ("hardened", (9000, 0.5), (None, 3.0)) == (json.loads(hardened.output)["tier"], caps["cycle"], caps["month"])


def test_budget_shows_the_caps_the_last_cycle_ran_with(sqlite_url: str) -> None:
    """Without --tier, ``budget`` shows the caps recorded in the last cycle's DreamStart (a
    hardened cycle against the hardened caps, a cap set in another process's environment as it
    was), not the default core caps; --tier still shows another tier's."""
    dreamt = runner.invoke(
        app,
        ["dream", "--sample", "--store", sqlite_url, "--tier", "hardened", "--json"],
        env={"ONEIROS_CYCLE__BUDGET__HARDENED_CYCLE_TOKENS": "50000"},
    )
    assert 0 == dreamt.exit_code, dreamt.output
    shown = json.loads(runner.invoke(app, ["budget", "--store", sqlite_url, "--json"]).output)
    assert ("hardened", 50000, 0.5) == (shown["tier"], shown["caps"][0]["token_cap"], shown["caps"][0]["usd_cap"])
    core = json.loads(runner.invoke(app, ["budget", "--store", sqlite_url, "--tier", "core", "--json"]).output)
    assert ("core", 12000) == (core["tier"], core["caps"][0]["token_cap"])


def test_budget_of_a_golem_that_never_dreamt_shows_the_configs_caps(sqlite_url: str) -> None:
    """A golem with no cycle yet is shown against the config's cycle.budget (here from ONEIROS_*)."""
    from oneiros import Golems, open_store

    store = open_store(sqlite_url)
    Golems(store).create("quiet")
    store.close()
    env = {"ONEIROS_CYCLE__BUDGET__TIER": "hardened", "ONEIROS_CYCLE__BUDGET__MONTH_USD": "3.5"}
    shown = runner.invoke(app, ["budget", "--store", sqlite_url, "--golem", "quiet", "--json"], env=env)
    assert 0 == shown.exit_code, shown.output
    payload = json.loads(shown.output)
    assert ("hardened", 60000, 3.5) == (payload["tier"], payload["caps"][0]["token_cap"], payload["caps"][3]["usd_cap"])

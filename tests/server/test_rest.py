"""Every REST route against a real ``oneiros serve`` process, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

from oneiros.episodes._episodes import sample_episodes_path
from tests.server.conftest import Server, read_events

pytestmark = pytest.mark.timeout(180)


def _episodes(count: int = 24) -> list[dict[str, Any]]:
    with open(sample_episodes_path()) as f:
        return [json.loads(line) for line in f][:count]


def _ok(response: httpx.Response, status: int = 200) -> Any:
    assert status == response.status_code, response.text
    return response.json()


def _cycle(http: httpx.Client, golem: str = "g1", body: dict[str, Any] | None = None) -> dict[str, Any]:
    """Start a cycle (202 at once, with its id), then wait until its journal entry says it ended
    and every entry it staged can be read, alone and in the list; the start's answer with the cycle's final status."""
    started: dict[str, Any] = _ok(http.post(f"/golems/{golem}/cycles", json=body or {}), 202)
    cycle_id = started["cycle_id"]
    if cycle_id is None:
        return started
    deadline = time.monotonic() + 120
    while True:
        entry = _ok(http.get(f"/golems/{golem}/cycles/{cycle_id}"))
        if entry["status"] != "dreaming":
            staged = {s["entry_id"] for s in _ok(http.get(f"/golems/{golem}/cycles/{cycle_id}/report"))["staged"]}
            listed = {d["entry_id"] for d in _ok(http.get("/dreams", params={"golem": golem, "limit": 500}))["items"]}
            # each projection follows the log on its own: the list's index can trail the entries
            if all(http.get(f"/dreams/{e}").status_code == 200 for e in staged) and staged <= listed:
                return {**started, "status": entry["status"]}
        assert time.monotonic() < deadline, entry
        time.sleep(0.05)


def _dreamt(http: httpx.Client, golem: str = "g1") -> dict[str, Any]:
    """A golem with episodes and one complete cycle."""
    _ok(http.post("/golems", json={"golem_id": golem}), 201)
    _ok(http.post(f"/golems/{golem}/episodes", json={"episodes": _episodes()}), 201)
    return _cycle(http, golem, {"max_outputs": 4})


def test_a_golem_from_its_first_episode_through_a_cycle_feedback_and_recall(server: Server) -> None:
    """An httpx client walks the whole loop: create, record, dream, review, recall; each step reads
    back what the one before wrote, and the recall is in the log with its query and hits."""
    http = server.client("write")
    created = _ok(http.post("/golems", json={"golem_id": "g1", "name": "trader"}), 201)
    assert ("g1", "Waking", 0) == (created["golem_id"], created["mode"], created["episodes"])
    recorded = _ok(http.post("/golems/g1/episodes", json={"episodes": _episodes()}), 201)
    assert 24 == recorded["appended"]
    _ok(http.post("/golems/g1/activity", json={"kind": "message", "detail": "hello"}), 201)

    cycle = _cycle(http, "g1", {"max_outputs": 3})
    assert "complete" == cycle["status"]
    status = _ok(http.get("/dreaming/status", params={"golem": "g1"}))
    assert cycle["cycle_id"] == status["latest_run"]["cycle_id"]
    assert "complete" == status["latest_run"]["status"]
    assert 3 == status["pending_count"]
    assert "Waking" == status["golem"]["mode"]

    dreams = _ok(http.get("/dreams", params={"golem": "g1", "status": "proposed"}))
    assert 3 == len(dreams["items"])
    chosen = dreams["items"][0]
    decided = _ok(
        http.post(
            f"/dreams/{chosen['entry_id']}/feedback",
            json={"decision": "promote_candidate", "feedback": "the user confirmed it"},
        )
    )
    assert "promoted" == decided["status"]
    assert [["promote_candidate", "writer", "the user confirmed it"]] == [
        [r["decision"], r["who"], r["why"]] for r in decided["reviews"]
    ]
    assert "promoted" == _ok(http.get(f"/dreams/{chosen['entry_id']}"))["status"]

    # The entry's own words: it matches every one of them, so no episode that shares only a common
    # word (the offline prose names the same tags often) can push it out of the first page.
    query = " ".join(w for w in chosen["text"].lower().split() if w.isalpha())
    recalled = _ok(http.post("/golems/g1/recall", json={"query": query, "limit": 50}))
    assert chosen["entry_id"] in {r["ref"] for r in recalled["results"] if r["kind"] in ("insight", "belief")}
    assert all(d["status"] in ("proposed", "reinforced") for d in recalled["related_dreams"])
    assert chosen["entry_id"] not in {d["ref"] for d in recalled["related_dreams"]}
    rows = read_events(server, http.headers, after=0, raw=True, types="MemoryRecalled")
    [recorded_recall] = [data for name, data in rows if name == "log_event"]
    assert ("g1:recall", query) == (recorded_recall["golem_id"], recorded_recall["payload"]["query"])
    assert [[r["kind"], r["ref"], r["score"]] for r in recalled["results"]] == [
        [h["kind"], h["ref"], h["score"]] for h in recorded_recall["payload"]["hits"]
    ]
    memory = _ok(http.get("/golems/g1/memory"))["memory"]
    assert 1 == memory["version"]
    assert chosen["text"] in memory["content"]


def test_every_read_route_answers_with_what_the_log_holds(server: Server) -> None:
    """Journal (JSON and Markdown), staging, sinks, MEMORY.md versions and diff, and a cycle's events,
    report, budget and trace all answer, consistent with each other."""
    http = server.client("admin")
    cycle_id = _dreamt(http)["cycle_id"]
    second = _cycle(http, "g1", {"max_outputs": 2})["cycle_id"]

    runs = _ok(http.get("/dreaming/runs", params={"golem": "g1"}))
    assert [second, cycle_id] == [r["cycle_id"] for r in runs["items"]]
    journal = _ok(http.get("/golems/g1/journal"))
    assert [second, cycle_id] == [e["cycle_id"] for e in journal["items"]]
    markdown = http.get("/golems/g1/journal", params={"format": "markdown"})
    assert "text/markdown; charset=utf-8" == markdown.headers["content-type"]
    assert "nosniff" == markdown.headers["x-content-type-options"]
    assert "#dream" in markdown.text
    staging = _ok(http.get("/golems/g1/staging"))
    assert 6 == len(staging["items"])
    beliefs = _ok(http.get("/golems/g1/beliefs"))["items"]
    assert all(b["source"].startswith("dream:") for b in beliefs)
    assert all(f["text"].startswith("[dream] ") for f in _ok(http.get("/golems/g1/noise"))["items"])
    assert {o["priority"] for o in _ok(http.get("/golems/g1/observations"))["items"]} <= {"RED", "YLW", "GRN"}

    first, other = [e["entry_id"] for e in staging["items"][:2]]
    for dream_id in (first, other):
        _ok(http.post(f"/dreams/{dream_id}/feedback", json={"decision": "promote_candidate", "feedback": "yes"}))
    versions = _ok(http.get("/golems/g1/memory/versions"))["items"]
    assert [2, 1] == [v["version"] for v in versions]
    assert versions[1] == _ok(http.get("/golems/g1/memory/versions/1"))
    diff = http.get("/golems/g1/memory/diff", params={"from": 1, "to": 2})
    assert diff.text.startswith("--- MEMORY.md v1\n+++ MEMORY.md v2\n")

    events = _ok(http.get(f"/golems/g1/cycles/{cycle_id}/events", params={"limit": 500}))["items"]
    assert "DreamStart" == events[0]["type"]
    assert {cycle_id} == {e["cycle_id"] for e in events}
    report = _ok(http.get(f"/golems/g1/cycles/{cycle_id}/report"))
    assert cycle_id == report["report"]["cycle_id"]
    budget = _ok(http.get(f"/golems/g1/cycles/{cycle_id}/budget"))
    assert ["cycle", "window", "day", "month"] == [c["cap"] for c in budget["caps"]]
    assert sum(p["tokens"] for p in budget["phases"]) == budget["caps"][0]["tokens"]
    trace = _ok(http.get(f"/golems/g1/cycles/{cycle_id}/trace"))
    assert isinstance(trace, list)

    state = _ok(http.get("/golems/g1"))
    early = _ok(http.get("/golems/g1", params={"at": events[2]["position"]}))  # DreamStart, ModeChanged, DreamPhase
    assert ("Dreaming_HypnagogicOnset", 24) == (early["machine_state"], early["episodes"])
    assert (state["cycles_completed"], state["mode"]) == (2, "Waking")
    assert ["g1"] == [g["golem_id"] for g in _ok(http.get("/golems"))["items"]]


def test_cursor_pages_cover_a_list_once(server: Server) -> None:
    """Walking the dreams two at a time by next_cursor yields each dream exactly once, newest first."""
    http = server.client()
    _dreamt(http)
    everything = _ok(http.get("/dreams", params={"golem": "g1", "limit": 500}))["items"]
    seen: list[str] = []
    cursor = None
    while True:
        page = _ok(http.get("/dreams", params={"golem": "g1", "limit": 2, **({"cursor": cursor} if cursor else {})}))
        seen += [d["entry_id"] for d in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert [d["entry_id"] for d in everything] == seen
    assert len(seen) == len(set(seen))


def test_errors_have_one_shape_with_the_error_type_and_attributes(server: Server) -> None:
    """Missing golems and dreams, an illegal review, a bad body, a bad cursor and a too-large body
    all answer {"error": {type, message, status, attributes}}."""
    http = server.client()
    missing = http.get("/golems/nope")
    assert 404 == missing.status_code
    assert {
        "error": {
            "type": "GolemNotFound",
            "message": "golem 'nope' does not exist",
            "status": 404,
            "attributes": {"golem_id": "nope", "nearest": None},
        }
    } == missing.json()
    _dreamt(http)
    typo = http.get("/golems/g11")  # a typo of g1's: the answer names it
    assert (404, "golem 'g11' does not exist; did you mean 'g1'?", {"golem_id": "g11", "nearest": "g1"}) == (
        typo.status_code,
        typo.json()["error"]["message"],
        typo.json()["error"]["attributes"],
    )
    # Another case or one letter off got no hint before (difflib's ratio was under its cutoff).
    assert ["g1", "g1", "g1"] == [
        http.get(f"/golems/{t}").json()["error"]["attributes"]["nearest"] for t in ("G1", "g2", "gl")
    ]
    dream = _ok(http.get("/dreams", params={"golem": "g1", "limit": 1}))["items"][0]["entry_id"]
    _ok(http.post(f"/dreams/{dream}/feedback", json={"decision": "reject", "feedback": "no"}))
    illegal = http.post(f"/dreams/{dream}/feedback", json={"decision": "promote_candidate", "feedback": "after all"})
    assert 409 == illegal.status_code
    assert {
        "type": "IllegalReview",
        "message": f"entry {dream!r} is rejected; decision 'promote_candidate' is not allowed",
        "status": 409,
        "attributes": {"entry_id": dream, "status": "rejected", "decision": "promote_candidate", "allowed": []},
    } == illegal.json()["error"]
    bad = http.post("/golems/g1/cycles", json={"max_outputs": 51})
    assert (400, "InputError") == (bad.status_code, bad.json()["error"]["type"])
    assert "request body: Expected `int` <= 50 - at `$.max_outputs`" == bad.json()["error"]["message"]
    cursor = http.get("/dreams", params={"golem": "g1", "cursor": "%%%"})
    assert "cursor '%%%' is not one this server gave out" == cursor.json()["error"]["message"]
    huge = http.post("/golems/g1/activity", content=b"x" * 1_100_000, headers={"content-type": "application/json"})
    assert (
        413,
        "request body over 1048576 bytes, the limit server.max_body_bytes sets (ONEIROS_SERVER__MAX_BODY_BYTES)",
    ) == (huge.status_code, huge.json()["error"]["message"])
    cycle = http.get("/golems/g1/cycles/nope/report")
    assert ("CycleNotFound", "golem 'g1' has no cycle 'nope'") == (
        cycle.json()["error"]["type"],
        cycle.json()["error"]["message"],
    )


def test_outcomes_move_matching_dreams_and_toggles_shape_the_cycle(server: Server) -> None:
    """An outcome naming a dream confirms it (+0.1), and with ``?explain=true`` says why it moved
    that dream alone; a bad flag is a 400; a cycle with dream off stages nothing, and one with only
    re-evaluation starts no cycle."""
    http = server.client()
    _dreamt(http)
    dream = _ok(http.get("/dreams", params={"golem": "g1", "limit": 1}))["items"][0]
    body = {"tick": 900, "verdict": "confirms", "entry_id": dream["entry_id"]}
    moved = _ok(http.post("/golems/g1/outcomes", json=body, params={"explain": "true"}), 201)
    assert [round(dream["confidence"] + 0.1, 2)] == [d["confidence"] for d in moved["entries"]]
    assert [(dream["entry_id"], True)] == [(m["entry_id"], m["moved"]) for m in moved["explain"]["moved"]]
    assert {"the outcome names another entry"} == {n["why"] for n in moved["explain"]["nearest"]}
    bad = http.post("/golems/g1/outcomes", json=body, params={"explain": "maybe"})
    assert (400, "query parameter explain='maybe' must be true or false") == (
        bad.status_code,
        bad.json()["error"]["message"],
    )
    quiet = _cycle(http, "g1", {"dream_enabled": False})
    journal = _ok(http.get("/golems/g1/journal", params={"limit": 1}))["items"][0]
    assert (quiet["cycle_id"], 0) == (journal["cycle_id"], journal["staged"])
    only = _cycle(http, "g1", {"reflect_enabled": False, "dream_enabled": False})
    assert (None, "reevaluated") == (only["cycle_id"], only["status"])


def test_openapi_lists_every_route_and_cors_is_off(server: Server) -> None:
    """/openapi.json is OpenAPI 3.1 with every route; with no origins configured, no CORS header."""
    document = httpx.get(server.url + "/openapi.json").json()
    assert "3.1.0" == document["openapi"]
    for path in (
        "/api/v1/dreaming/status",
        "/api/v1/dreams/{entry_id}",
        "/api/v1/events",
        "/api/v1/golems/{golem_id}/recall",
    ):
        assert path in document["paths"]
    assert "CycleIn" in document["components"]["schemas"]
    answer = server.client().get("/golems", headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in answer.headers

"""`oneiros import --format claude-code` and `--format codex` (issue 37): a coding agent's session
files, a file or a project folder of them, as episodes, through the `oneiros` command.

The fixtures under tests/sessions are written for these tests in the shape Claude Code 2.0 and
Codex CLI write (no real user's data): a project folder of two sessions and a subagent's sidechain
file, the first session compacted half way; and one Codex rollout."""

from __future__ import annotations

import json
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from oneiros import Oneiros
from oneiros.episodes._sessions import claude_code_golems
from oneiros.events._types import Episode, EpisodeRecorded
from oneiros.store._store import open_store
from tests.test_cli import run

_SESSIONS = Path(__file__).parent / "sessions"
_PROJECT = _SESSIONS / "claude-code" / "-home-dev-shop"
_FIRST = "5b0e7f3a-1c2d-4e5f-8a9b-0c1d2e3f4a51.jsonl"
_CODEX = _SESSIONS / "codex"
_MAIN = [
    "u-0002", "u-0004#1", "u-0004#2", "u-0005", "u-0006", "u-0007", "u-0008", "u-0011", "u-0012",
    "v-0001", "v-0002", "v-0003", "v-0004",
]  # fmt: skip


def _episodes(url: str, golem: str) -> list[Episode]:
    with open_store(url) as store:
        return [r.event.episode for r in store.read_stream(golem) if isinstance(r.event, EpisodeRecorded)]


def _project(tmp_path: Path) -> Path:
    """A copy of the fixture project, the later session's file named to sort first: the import
    orders sessions by their times, not their names."""
    copy = tmp_path / "project"
    shutil.copytree(_PROJECT, copy)
    (copy / "9d8c7b6a-5f4e-4d3c-9b2a-1f0e9d8c7b62.jsonl").rename(copy / "0000-later-session.jsonl")
    return copy


def _event(uuid: str, parent: str | None, when: str, role: str, content: object, **more: object) -> str:
    message = {"role": role, "content": content}
    line = {"parentUuid": parent, "isSidechain": False, "sessionId": "s", "type": role, "message": message}
    return json.dumps({**line, "uuid": uuid, "timestamp": when, **more}) + "\n"


def test_a_project_folder_becomes_the_conversation_in_order_with_tools_apart(tmp_path: Path) -> None:
    """A project folder: each user and assistant text an episode with its speaker, time and the
    event's uuid; a tool call and its result episodes tagged tool-call / tool-result with the
    tool's name (and error where it failed); the event of a text and a call two parts, <uuid>#1
    and #2; thinking, meta messages, the title and the compaction summary left out, the turns
    before and after the boundary in order; the sessions in time order; the folder's import
    shows a progress bar."""
    url = f"sqlite:///{tmp_path}/e.db"

    result = run("import", str(_project(tmp_path)), "--format", "claude-code", "--golem", "dev", store=url)

    assert 0 == result.returncode, result.stderr
    assert "recording episodes" in result.stdout
    episodes = _episodes(url, "dev")
    assert _MAIN == [e.ref for e in episodes]
    assert list(range(1, 14)) == [e.tick for e in episodes]
    assert [e.time for e in episodes] == sorted(e.time for e in episodes if e.time)
    by_ref = {e.ref: e for e in episodes}
    assert ("user", "user", ()) == (by_ref["u-0002"].speaker, by_ref["u-0002"].source, by_ref["u-0002"].tags)
    assert ("assistant", "self", ()) == (by_ref["u-0004#1"].speaker, by_ref["u-0004#1"].source, by_ref["u-0004#1"].tags)
    call, failed = by_ref["u-0004#2"], by_ref["u-0005"]
    assert (("tool-call", "bash"), "self") == (call.tags, call.source)
    assert call.summary.startswith('Bash {"command": "pytest tests/test_checkout.py -x --count 5"')
    assert (("tool-result", "bash", "error"), "tool", "tool") == (failed.tags, failed.speaker, failed.source)
    assert ("tool-result", "task") == by_ref["u-0007"].tags
    texts = " ".join(e.summary for e in episodes)
    assert "race in the cart fixture" not in texts  # thinking
    assert "continued from a previous conversation" not in texts  # the compaction's summary


def test_a_sidechain_goes_to_its_own_golem(tmp_path: Path) -> None:
    """A subagent's sidechain file (agentId a3f9c2d1) fills golem dev-a3f9c2d1, not dev; an inline
    sidechain with no agentId fills dev-sidechain-<its root uuid's first 8>; --json says so."""
    url = f"sqlite:///{tmp_path}/e.db"
    inline = tmp_path / "inline.jsonl"
    inline.write_text(
        _event("11111111-aaaa", None, "2026-03-05T10:00:00Z", "user", "main turn")
        + _event("22222222-bbbb", None, "2026-03-05T10:00:01Z", "user", "explore", isSidechain=True)
        + _event("33333333-cccc", "22222222-bbbb", "2026-03-05T10:00:02Z", "assistant", "found it", isSidechain=True)
    )

    folder = run("import", str(_PROJECT), "--format", "claude-code", "--golem", "dev", "--json", store=url)
    one = run("import", str(inline), "--format", "claude-code", "--golem", "in", "--json", store=url)

    assert 0 == folder.returncode, folder.stderr
    rows = {g["golem"]: g for g in json.loads(folder.stdout)["golems"]}
    assert {"dev": (13, 2), "dev-a3f9c2d1": (4, 1)} == {g: (r["recorded"], r["sessions"]) for g, r in rows.items()}
    assert ["s-0001", "s-0002", "s-0003", "s-0004"] == [e.ref for e in _episodes(url, "dev-a3f9c2d1")]
    assert not {"s-0001", "s-0004"} & {e.ref for e in _episodes(url, "dev")}
    assert ["in", "in-sidechain-22222222"] == [g["golem"] for g in json.loads(one.stdout)["golems"]]
    assert ["33333333-cccc"] == [e.ref for e in _episodes(url, "in-sidechain-22222222")][1:]


def test_a_rerun_records_nothing_and_a_grown_session_only_its_new_events(tmp_path: Path) -> None:
    """The same folder again records nothing. Then the first session grows by a turn while the
    second is already in: the rerun records just that turn, ticked after the golem's last, and
    every episode recorded before keeps its tick and text."""
    url = f"sqlite:///{tmp_path}/e.db"
    project = _project(tmp_path)
    first = run("import", str(project), "--format", "claude-code", "--golem", "dev", "--json", store=url)
    before = _episodes(url, "dev")

    again = run("import", str(project), "--format", "claude-code", "--golem", "dev", "--json", store=url)
    with (project / _FIRST).open("a") as session:
        session.write(_event("u-0013", "u-0012", "2026-03-02T09:07:00.000Z", "user", "Thanks, ship it."))
    grown = run("import", str(project), "--format", "claude-code", "--golem", "dev", "--json", store=url)

    assert 0 == first.returncode == again.returncode == grown.returncode, (again.stderr, grown.stderr)
    assert [0, 0] == [g["recorded"] for g in json.loads(again.stdout)["golems"]]
    assert [1, 0] == [g["recorded"] for g in json.loads(grown.stdout)["golems"]]
    assert "skipped 13 episodes golem 'dev' already has" in grown.stderr
    after = _episodes(url, "dev")
    assert before == after[:-1]
    assert ("u-0013", 14, "Thanks, ship it.") == (after[-1].ref, after[-1].tick, after[-1].summary)


def test_a_tool_output_over_16_kb_is_split_into_parts_that_keep_its_id(tmp_path: Path) -> None:
    """A tool result of 40,000 characters with a code block in it is three or more episodes,
    <uuid>#1 ..., each a tool-result under 16,384 characters, the code block whole in one of
    them, the output whole when they are joined; the turns around it keep their order."""
    url = f"sqlite:///{tmp_path}/e.db"
    code = "```python\n" + "total = sum(prices)\n" * 40 + "```\n"
    output = "line of log output\n" * 1100 + code + "more output\n" * 1500
    path = tmp_path / "long.jsonl"
    result = [{"type": "tool_result", "tool_use_id": "toolu_9", "content": [{"type": "text", "text": output}]}]
    call = [{"type": "tool_use", "id": "toolu_9", "name": "Read", "input": {"file_path": "app.log"}}]
    path.write_text(
        _event("c-1", None, "2026-03-06T10:00:00Z", "user", "read the log")
        + _event("c-2", "c-1", "2026-03-06T10:00:01Z", "assistant", call)
        + _event("c-3", "c-2", "2026-03-06T10:00:02Z", "user", result)
        + _event("c-4", "c-3", "2026-03-06T10:00:03Z", "assistant", "The log shows the totals.")
    )  # fmt: skip

    done = run("import", str(path), "--golem", "long", store=url)

    assert 0 == done.returncode, done.stderr
    episodes = _episodes(url, "long")
    parts = [e for e in episodes if e.ref and e.ref.startswith("c-3#")]
    assert len(parts) >= 3
    assert ["c-1", "c-2"] + [f"c-3#{n}" for n in range(1, len(parts) + 1)] + ["c-4"] == [e.ref for e in episodes]
    assert output == "".join(p.summary for p in parts)
    assert all(len(p.summary) <= 16_384 and p.tags == ("tool-result", "read") for p in parts)
    assert any(code in p.summary for p in parts)


def test_a_codex_rollout_becomes_episodes_with_line_ids(tmp_path: Path) -> None:
    """A Codex rollout: the user's question, the shell call, its output and the answer, each with
    <session id>:<line> as its id; the environment context, reasoning and the event_msg echo
    left out; found by its first line without --format; a rerun records nothing."""
    url = f"sqlite:///{tmp_path}/e.db"

    first = run("import", str(_CODEX), "--golem", "cx", "--json", store=url)
    again = run("import", str(_CODEX), "--golem", "cx", "--json", store=url)

    assert 0 == first.returncode, first.stderr
    assert ("codex", 4) == (json.loads(first.stdout)["format"], json.loads(first.stdout)["golems"][0]["recorded"])
    assert 0 == json.loads(again.stdout)["golems"][0]["recorded"]
    episodes = _episodes(url, "cx")
    session = "0199a0b1-2c3d-7e4f-8a9b-0c1d2e3f4a5b"
    assert [f"{session}:{n}" for n in (3, 7, 8, 9)] == [e.ref for e in episodes]
    assert [
        ("user", ()),
        ("assistant", ("tool-call", "shell")),
        ("tool", ("tool-result", "shell")),
        ("assistant", ()),
    ] == [(e.speaker, e.tags) for e in episodes]
    assert "real 0m35.2s\n12000 queries" == episodes[2].summary


def test_bad_input_is_one_line_naming_what_and_nothing_is_written(tmp_path: Path) -> None:
    """A line that is not JSON names the file and the line; a user event without a timestamp too;
    a session with nothing said and a missing path name it; an unknown format lists the known
    ones: exit 2, one line on stderr, no store left behind."""
    url = f"sqlite:///{tmp_path}/e.db"
    project = _project(tmp_path)
    with (project / _FIRST).open("a") as session:
        session.write('{"type": "user", "uuid": "u-0099", "message": {"role": "user", "content": "hi"\n')
    untimed = tmp_path / "untimed.jsonl"
    no_time = {"type": "user", "uuid": "t-2", "parentUuid": "t-1", "sessionId": "s", "message": {"role": "user"}}
    untimed.write_text(_event("t-1", None, "2026-03-06T10:00:00Z", "user", "ok") + json.dumps(no_time) + "\n")

    titled = tmp_path / "titled.jsonl"
    titled.write_text(json.dumps({"type": "summary", "summary": "Fix the test", "leafUuid": "x"}) + "\n")
    cases = [
        (str(project), "claude-code", f"{project / _FIRST}:14: Input data was truncated"),
        (str(titled), "claude-code", f"{titled}: no user or assistant message in the session files"),
        (str(untimed), "claude-code", f"{untimed}:2: a user event needs `uuid` and `timestamp`"),
        (str(tmp_path / "nowhere"), "claude-code", f"{tmp_path / 'nowhere'}: no such file or folder"),
        (str(untimed), "gemini", "unknown --format 'gemini'; use locomo, chat-jsonl, episodes, claude-code or codex"),
    ]
    for path, fmt, said in cases:
        result = run("import", path, "--format", fmt, "--golem", "dev", store=url)
        assert 2 == result.returncode, result.stdout
        assert 1 == len(result.stderr.strip().splitlines()), result.stderr
        assert said in result.stderr, result.stderr
    assert not (tmp_path / "e.db").exists()


# Short texts of any characters, and long ones (18,000 to 60,000) repeating a piece of spaces,
# line breaks and backticks, the characters the splitter cuts at.
_long = st.builds(
    lambda piece, times: piece * times, st.text(alphabet="ab \n`", min_size=20, max_size=30), st.integers(900, 2000)
)
_said = st.one_of(st.text(min_size=1, max_size=30), _long)


@settings(max_examples=25, deadline=None)  # texts of up to 40,000 characters; a shared machine's load
@given(st.lists(st.tuples(st.sampled_from(["user", "assistant"]), _said, st.booleans()), min_size=1, max_size=8))
def test_every_event_s_text_is_kept_whole_and_in_order(events: list[tuple[str, str, bool]]) -> None:
    """Any session of user and assistant texts, each a string or a text block, short or over the
    cap: the episodes, read in order, give back each event's text (that says something) under its
    uuid, parts under the cap and numbered <uuid>#1 ... only when there are several, ticks 1, 2 ..."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.jsonl"
        path.write_text(
            "".join(
                _event(f"e{n}", f"e{n - 1}" if n else None, f"2026-03-02T09:{n:02}:00Z", role,
                       [{"type": "text", "text": text}] if as_block else text)
                for n, (role, text, as_block) in enumerate(events)
            )
        )  # fmt: skip
        (golem,) = claude_code_golems([path], "g")
    episodes = golem.episodes
    kept = [(f"e{n}", role, text) for n, (role, text, _) in enumerate(events) if text.strip()]

    assert list(range(1, len(episodes) + 1)) == [e.tick for e in episodes]
    assert all(len(e.summary) <= 16_384 for e in episodes)
    for uuid, role, text in kept:
        mine = [e for e in episodes if e.ref == uuid or (e.ref or "").startswith(uuid + "#")]
        assert text == "".join(e.summary for e in mine)
        assert {role} == {e.speaker for e in mine}
        assert [uuid] == [e.ref for e in mine] if len(mine) == 1 else [f"{uuid}#{n}" for n in range(1, len(mine) + 1)]
    assert [u for u, _, _ in kept] == list(dict.fromkeys((e.ref or "").split("#")[0] for e in episodes))


def test_an_unmarked_compaction_summary_and_odd_bookkeeping_lines_are_passed_over(tmp_path: Path) -> None:
    """A summary from before Claude Code marked it (the first user message after a compact
    boundary, in the words Claude Code opens it with) is not imported; a later user message is;
    a line of another kind whose timestamp is a number (another tool's history) is passed over; a
    time without a zone is taken as UTC."""
    path = tmp_path / "old.jsonl"
    summary = "This session is being continued from a previous conversation. The user asked..."
    boundary = {"type": "system", "subtype": "compact_boundary", "uuid": "b", "timestamp": "2026-03-07T10:00:00Z"}
    path.write_text(
        json.dumps({"display": "/clear", "timestamp": 1772877600000, "project": "/home/dev/shop"}) + "\n"
        + _event("o-1", None, "2026-03-07T09:00:00", "user", "first question")
        + json.dumps(boundary) + "\n"
        + _event("o-2", "b", "2026-03-07T10:00:01Z", "user", summary)
        + _event("o-3", "o-2", "2026-03-07T10:01:00Z", "user", "second question")
    )  # fmt: skip

    (golem,) = claude_code_golems([path], "g")

    assert ["o-1", "o-3"] == [e.ref for e in golem.episodes]
    assert datetime(2026, 3, 7, 9, tzinfo=UTC) == golem.episodes[0].time


def test_an_import_by_ref_never_overwrites_what_the_golem_has() -> None:
    """Into a golem that has ticks 1 to 3 already (recorded some other way), episodes planned at
    ticks 1 and 2 with ids a and b are recorded after them, at 4 and 5, and the first three are
    untouched; run again, both are skipped by their ids."""
    with Oneiros("memory://") as app:
        app.create_golem("g")
        app.record_episodes("g", [Episode(tick=t, summary=f"own {t}") for t in (1, 2, 3)])
        planned = [Episode(tick=1, summary="first", ref="a"), Episode(tick=2, summary="second", ref="b")]

        first = app.import_episodes("g", [planned], by_ref=True)
        again = app.import_episodes("g", [planned], by_ref=True)
        episodes = [r.event.episode for r in app.store.read_stream("g") if isinstance(r.event, EpisodeRecorded)]

    assert ((2, 0), (0, 2)) == ((first.recorded, first.skipped), (again.recorded, again.skipped))
    assert [(1, "own 1"), (2, "own 2"), (3, "own 3"), (4, "first"), (5, "second")] == [
        (e.tick, e.summary) for e in episodes
    ]

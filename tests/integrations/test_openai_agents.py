"""OneirosSession against the real OpenAI Agents SDK: the ``Session`` contract on SQLite and
PostgreSQL (order, limit, pop, clear, what another object on the same store sees), the log as its
only truth, and ``Runner.run`` with a session and an offline model across runs, dreams and restarts."""

from __future__ import annotations

import asyncio
import importlib
import json
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from agents import Agent, RunConfig, Runner
from agents.items import ModelResponse, TResponseInputItem, TResponseStreamEvent
from agents.memory import Session, SessionSettings
from agents.models.interface import Model
from agents.usage import Usage
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.types.responses import ResponseOutputMessage, ResponseOutputText

from oneiros import ConfigError, Deps, InputError, InvalidEvent, Oneiros, load_episodes
from oneiros.app._sessions import SessionItems
from oneiros.events._sessions import SessionCleared, SessionItemPopped
from oneiros.events._types import Episode, EpisodeRecorded
from oneiros.integrations.openai_agents import OneirosSession
from tests.conftest import postgres_url

ROOT = Path(__file__).resolve().parents[2]
OFFLINE = RunConfig(tracing_disabled=True)


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store URL of each persistent backend, which a second object opens afresh."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/events.db"
    return postgres_url(request.getfixturevalue("pg_schema"))


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Oneiros]:
    with Oneiros(f"sqlite:///{tmp_path}/events.db") as opened:
        yield opened


def said(role: str, text: str) -> TResponseInputItem:
    item: Any = {"role": role, "content": text}
    return item  # type: ignore[no-any-return]  # TypedDict unions take a literal dict only


def texts(items: list[TResponseInputItem]) -> list[str]:
    return [str(item.get("content")) for item in items]


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# -- the Session contract ---------------------------------------------------------------------------


def test_it_is_the_sdk_session() -> None:
    """The SDK recognises it as a Session (its runtime-checkable protocol)."""
    with OneirosSession("alice", "memory://") as session:
        assert isinstance(session, Session)
        assert "alice" == session.session_id


def test_the_session_contract_on_each_backend(store_url: str) -> None:
    """Items come back in the order added, each as given; ``limit`` gives the newest N, oldest
    first; pop takes the newest and returns it; clear empties; items after a clear show; a new
    object on the same store (a restart) sees exactly what the first left."""

    async def first() -> None:
        with OneirosSession("alice", store_url) as session:
            assert [] == await session.get_items()
            assert await session.pop_item() is None
            await session.add_items([said("user", "one"), said("assistant", "two")])
            await session.add_items([said("user", "three")])
            assert ["one", "two", "three"] == texts(await session.get_items())
            assert ["two", "three"] == texts(await session.get_items(limit=2))
            assert ["one", "two", "three"] == texts(await session.get_items(limit=10))
            assert [] == await session.get_items(limit=0)
            assert said("user", "three") == await session.pop_item()
            assert ["one", "two"] == texts(await session.get_items())

    async def second() -> None:
        with OneirosSession("alice", store_url) as session:
            assert ["one", "two"] == texts(await session.get_items())
            await session.clear_session()
            assert [] == await session.get_items()
            assert await session.pop_item() is None
            await session.add_items([said("user", "four")])

    async def third() -> None:
        with OneirosSession("alice", store_url) as session:
            assert ["four"] == texts(await session.get_items())

    run(first())
    run(second())
    run(third())


def test_the_settings_limit_applies_when_the_caller_gives_none() -> None:
    """``session_settings.limit`` caps get_items without a limit; an explicit limit wins."""
    with OneirosSession("alice", "memory://", session_settings=SessionSettings(limit=2)) as session:
        run(session.add_items([said("user", str(n)) for n in range(5)]))
        assert ["3", "4"] == texts(run(session.get_items()))
        assert ["2", "3", "4"] == texts(run(session.get_items(3)))


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
ITEMS = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "system"]), "content": st.text()}, optional={"extra": JSON}
    )
    | st.fixed_dictionaries({"type": st.just("function_call"), "name": st.text(min_size=1), "arguments": st.text()})
    | st.dictionaries(st.text(min_size=1, max_size=8), JSON, max_size=4),
    max_size=6,
)


@settings(max_examples=30, deadline=None)
@given(batches=st.lists(ITEMS, max_size=3), limit=st.integers(0, 8) | st.none())
def test_items_come_back_exactly_as_added(batches: list[list[dict[str, Any]]], limit: int | None) -> None:
    """Whatever JSON objects were added, in however many batches, get_items returns them equal and
    in order (any text, nesting, numbers), and a limit returns the newest ones."""
    added: list[Any] = [item for batch in batches for item in batch]
    with OneirosSession("g", "memory://") as session:
        for batch in batches:
            run(session.add_items(batch))  # type: ignore[arg-type]  # plain JSON objects, as the SDK's are
        assert added == run(session.get_items())
        want = added if limit is None else (added[-limit:] if limit else [])
        assert want == run(session.get_items(limit))
        assert json.dumps(added) == json.dumps(run(session.get_items()))  # key order too


def test_an_item_that_is_not_json_is_refused_and_nothing_is_written(app: Oneiros) -> None:
    """A batch with a value JSON cannot hold is InputError naming the item; none of it is kept."""
    session = OneirosSession("alice", app)
    run(session.add_items([said("user", "kept")]))
    bad: Any = [said("user", "lost"), {"role": "user", "content": object()}]
    with pytest.raises(InputError, match=r"^session item 1 is not JSON: "):
        run(session.add_items(bad))
    nan: Any = [{"role": "user", "content": float("nan")}]
    with pytest.raises(InputError, match=r"^session item 0 is not JSON: Out of range float"):
        run(session.add_items(nan))
    assert ["kept"] == texts(run(session.get_items()))


def test_a_first_item_the_log_refuses_leaves_no_golem_behind(app: Oneiros) -> None:
    """An item past the event size cap is InvalidEvent; when it was the session's first, no empty
    golem is left behind either."""
    session = OneirosSession("alice", app)
    with pytest.raises(InvalidEvent, match=r"^EpisodeRecorded: \d+ bytes encoded; an event may take at most"):
        run(session.add_items([said("user", "x" * 1_100_000)]))
    assert not app.golem_exists("alice")
    assert [] == run(session.get_items())


def test_a_session_id_that_cannot_name_a_golem_is_a_clear_error() -> None:
    """The session id is the golem's: one it cannot be is InputError before anything opens."""
    with pytest.raises(InputError, match="golem id 'no spaces please' must be"):
        OneirosSession("no spaces please", "memory://")


# -- the log is the only truth ----------------------------------------------------------------------


def test_pop_and_clear_are_events_and_the_episodes_stay(app: Oneiros) -> None:
    """Taking items out appends SessionItemPopped and SessionCleared; every episode recorded stays
    in the golem's stream and memory (the golem still lived it), and the session is their fold."""
    session = OneirosSession("alice", app)
    run(session.add_items([said("user", "a"), said("assistant", "b"), said("user", "c")]))
    run(session.pop_item())
    run(session.clear_session())
    events = [r.event for r in app.store.read_stream("alice")]
    episodes = [e.episode for e in events if isinstance(e, EpisodeRecorded)]
    assert ["a", "b", "c"] == [e.summary for e in episodes]
    assert [2] == [e.tick for e in events if isinstance(e, SessionItemPopped)]
    assert [2] == [e.items for e in events if isinstance(e, SessionCleared)]
    assert 3 == app.golem("alice").episodes
    assert [] == run(session.get_items())


def test_items_are_episodes_that_dreaming_and_recall_read(app: Oneiros) -> None:
    """Each item's episode says who said it, where it came from and its own id; the item's JSON is
    kept on it byte for byte, and recall finds the turn by its words."""
    session = OneirosSession("alice", app)
    call: Any = {"type": "function_call", "name": "get_weather", "arguments": '{"city":"Oslo"}', "call_id": "c1"}
    output: Any = {"type": "function_call_output", "call_id": "c1", "output": "sleet, 2 degrees"}
    run(session.add_items([said("user", "What is the weather in Oslo?"), call, output]))
    episodes = [r.event.episode for r in app.store.read_stream("alice") if isinstance(r.event, EpisodeRecorded)]
    assert [("user", "user"), (None, "self"), ("tool", "tool")] == [(e.speaker, e.source) for e in episodes]
    assert [None, "c1", "c1"] == [e.ref for e in episodes]
    assert 'called get_weather({"city":"Oslo"})' == episodes[1].summary
    assert json.loads(str(episodes[2].item)) == output
    found = app.recall("alice", "weather Oslo", 3, record=False)
    assert "What is the weather in Oslo?" in [r.text for r in found.results]


def test_items_take_free_ticks_and_never_replace_an_episode(app: Oneiros) -> None:
    """An episode the golem recorded elsewhere keeps its tick: session items go after the highest."""
    app.create_golem("alice")
    app.record_episodes("alice", [Episode(tick=40, summary="imported before the session")])
    session = OneirosSession("alice", app)
    run(session.add_items([said("user", "hello")]))
    ticks = {r.event.episode.tick: r.event.episode.summary for r in app.store.read_stream("alice")
             if isinstance(r.event, EpisodeRecorded)}  # fmt: skip
    assert {40: "imported before the session", 41: "hello"} == ticks
    assert ["hello"] == texts(run(session.get_items()))


def test_sessions_writing_at_once_lose_no_item(tmp_path: Path) -> None:
    """Two objects (each its own store connection) adding and popping on one golem at the same time:
    every item added lands at a tick of its own, and each pop takes a different item."""
    url = f"sqlite:///{tmp_path}/events.db"
    with Oneiros(url) as setup:
        setup.create_golem("alice")
    errors: list[BaseException] = []
    popped: list[Any] = []

    def writer(name: str) -> None:
        try:
            with OneirosSession("alice", url) as session:
                for n in range(8):
                    run(session.add_items([said("user", f"{name}{n}")]))
                popped.append(run(session.pop_item()))
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(name,)) for name in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [] == errors
    with OneirosSession("alice", url) as session:
        left = texts(run(session.get_items()))
    assert 2 == len({json.dumps(p) for p in popped})
    assert sorted(f"{n}{i}" for n in "ab" for i in range(8)) == sorted(left + texts(popped))


def test_the_blocking_calls_run_off_the_event_loop(app: Oneiros, monkeypatch: pytest.MonkeyPatch) -> None:
    """get_items, add_items, pop_item and clear_session each reach oneiros from another thread than
    the event loop's, so an agent serving many users never blocks on the store."""
    seen: dict[str, int] = {}
    for name in ("items", "add", "pop", "clear"):
        original = getattr(SessionItems, name)

        def spy(self: SessionItems, *args: Any, _name: str = name, _original: Any = original) -> Any:
            seen[_name] = threading.get_ident()
            return _original(self, *args)

        monkeypatch.setattr(SessionItems, name, spy)

    async def calls() -> int:
        session = OneirosSession("alice", app)
        await session.add_items([said("user", "x")])
        await session.get_items()
        await session.pop_item()
        await session.clear_session()
        return threading.get_ident()

    loop_thread = run(calls())
    assert {"items", "add", "pop", "clear"} == set(seen)
    assert loop_thread not in seen.values()


def test_without_the_sdk_the_import_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """Importing the integration where the SDK is missing is a ConfigError naming the extra."""
    monkeypatch.setitem(sys.modules, "agents", None)  # None in sys.modules: the import fails
    monkeypatch.delitem(sys.modules, "oneiros.integrations.openai_agents")
    with pytest.raises(ConfigError, match=r"pip install 'oneiros\[openai-agents\]'"):
        importlib.import_module("oneiros.integrations.openai_agents")


# -- a real Runner.run ------------------------------------------------------------------------------


class EchoModel(Model):
    """An offline model: answers how many items it was given and the last thing the user said,
    and keeps the instructions and input of every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str | None, list[Any]]] = []

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        *args: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        given: list[Any] = [said("user", input)] if isinstance(input, str) else list(input)
        self.calls.append((system_instructions, given))
        last = next(str(i.get("content")) for i in reversed(given) if i.get("role") == "user")
        text = f"{len(given)} items; you said {last}"
        message = ResponseOutputMessage(
            id=f"msg_{len(self.calls)}",
            role="assistant",
            status="completed",
            type="message",
            content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
        )
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[TResponseStreamEvent]:
        raise NotImplementedError("the tests run the agent without streaming")


def test_runner_history_persists_across_runs_and_restarts(tmp_path: Path) -> None:
    """Runner.run with an OneirosSession: the second run's model sees the first run's turns, also
    through a new session object on the same store (a restarted agent); after a dream the agent's
    instructions carry the memory block for what the user just said."""
    url = f"sqlite:///{tmp_path}/events.db"
    model = EchoModel()

    async def turn(text: str) -> str:
        with OneirosSession("alice", url) as session:
            agent = Agent(name="assistant", instructions=session.instructions("You are terse."), model=model)
            result = await Runner.run(agent, text, session=session, run_config=OFFLINE)
            return str(result.final_output)

    assert "1 items; you said I deployed on Friday without a canary" == run(
        turn("I deployed on Friday without a canary")
    )
    assert "3 items; you said the deploy was rolled back" == run(turn("the deploy was rolled back"))
    history = [str(i.get("content")) for i in model.calls[-1][1] if i.get("role") == "user"]
    assert ["I deployed on Friday without a canary", "the deploy was rolled back"] == history
    assert "You are terse." == model.calls[0][0]  # nothing dreamt or recalled yet beyond the turn

    with Oneiros(url, deps=Deps(seed=3)) as app:  # a week of work besides, at ticks after the session's
        week = load_episodes(str(ROOT / "examples" / "episodes.jsonl"))
        app.record_episodes("alice", [msgspec.structs.replace(e, tick=e.tick + 100) for e in week])
        assert app.dream("alice").complete is not None
    run(turn("should I deploy on Friday?"))
    assert 5 == len(model.calls[-1][1])  # the four items of the two runs before, and this one
    instructions = str(model.calls[-1][0])
    assert instructions.startswith("You are terse.\n\n")
    assert "## Recalled for: should I deploy on Friday?" in instructions
    assert "deploy" in instructions.split("## Recalled for:", 1)[1]


@pytest.mark.slow
def test_the_example_runs_offline_twice_in_a_row(tmp_path: Path) -> None:
    """examples/openai_agents_agent.py in an empty folder, twice in a row: each run's restarted
    agent remembers the first day's ten items and answers from the memory block its dream left."""
    for _ in range(2):
        result = subprocess.run(
            [sys.executable, str(ROOT / "examples" / "openai_agents_agent.py")],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
            timeout=170,
        )
        assert 0 == result.returncode, result.stderr[-3000:]
        lines = result.stdout.splitlines()
        assert "day one: remembered 0 items" == lines[0]
        assert any(line.startswith("day two: remembered 10 items, the first: Monday I deployed") for line in lines)
        block = lines.index("## Recalled for: Should I deploy the billing service on Friday without a canary?")
        assert lines[block + 1].startswith("- [")
        assert lines[-1].startswith("  agent: From memory: [")
    assert [] == list(tmp_path.iterdir())  # its store was a temporary one

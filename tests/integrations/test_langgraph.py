"""OneirosStore keeps LangGraph's store contract on a golem's log.

The first half ports the cases LangGraph's own store tests write for ``InMemoryStore`` (repository
langchain-ai/langgraph, ``libs/checkpoint/tests/test_store.py``): namespaces listed by prefix,
suffix, wildcards, depth and page; namespaces refused; put, get, search and delete, sync and async;
search by query with filters and pages. Those that test InMemoryStore's internals (its embedding
calls, the batching of ``AsyncBatchedBaseStore``) are left out, and where LangGraph's cases search
by embedding similarity these search by oneiros recall (BM25), so they check what recall means:
items that hold the query's words rank first, by relevance; the rest follow with score 0.

The second half is oneiros's own: every read is a fold of the log (another store on the same log
sees the same items, a delete is an event), racing writers never share an episode, dream outputs
come back in a query's ranking, and a compiled ``StateGraph`` reads and writes through the store.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("langgraph", reason="the langgraph extra is not installed")

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import InvalidNamespaceError, PutOp
from typing_extensions import TypedDict

from oneiros import InputError, InvalidEvent, Oneiros
from oneiros.events._items import ItemForgotten, ItemKept
from oneiros.events._types import EpisodeRecorded
from oneiros.integrations.langgraph import OneirosStore, StoreSettings, item_text
from tests.conftest import postgres_url

DOC = {"foo": "bar"}


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A store URL of this test's own, on each backend that keeps its log across processes."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path_factory.mktemp('store')}/events.db"
    return postgres_url(request.getfixturevalue("pg_schema"))


@pytest.fixture
def lg_store(store_url: str) -> Iterator[OneirosStore]:
    """An OneirosStore over a fresh store, closed afterwards."""
    with OneirosStore(store_url) as opened:
        yield opened


def _keys(found: list[Any]) -> list[str]:
    return [item.key for item in found]


# -- namespaces (LangGraph's test_list_namespaces_*) ----------------------------------------------


def test_namespaces_by_prefix_suffix_depth_and_page(lg_store: OneirosStore) -> None:
    """list_namespaces filters by prefix and suffix (with ``*`` for any label), truncates to
    ``max_depth`` and pages in sorted order, across every golem the namespaces name."""
    namespaces = [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
        ("users", "123"),
        ("users", "456", "settings"),
        ("admin", "users", "789"),
    ]
    for i, ns in enumerate(namespaces):
        lg_store.put(ns, f"id_{i}", {"data": f"value_{i:02d}"})

    under_ab = [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f")]
    assert under_ab == lg_store.list_namespaces(prefix=("a", "b"))
    assert [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")] == lg_store.list_namespaces(suffix=("f",))
    assert [("a", "b", "f"), ("a", "c", "f")] == lg_store.list_namespaces(prefix=("a",), suffix=("f",))
    assert [("a", "b", "c"), ("a", "b", "d"), ("a", "b", "f")] == lg_store.list_namespaces(
        prefix=("a", "b"), max_depth=3
    )
    assert under_ab[:2] == lg_store.list_namespaces(prefix=("a", "b"), limit=2)
    assert under_ab[2:] == lg_store.list_namespaces(prefix=("a", "b"), offset=2)
    assert [("a", "b", "f"), ("a", "c", "f")] == lg_store.list_namespaces(prefix=("a", "*", "f"))
    assert [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")] == lg_store.list_namespaces(suffix=("*", "f"))
    assert [] == lg_store.list_namespaces(prefix=("nonexistent",))
    assert [("users", "123")] == lg_store.list_namespaces(prefix=("users", "123"))
    assert sorted(namespaces) == lg_store.list_namespaces()
    assert [("a", "b"), ("a", "c"), ("admin", "users"), ("b", "a"), ("users", "123"), ("users", "456")] == (
        lg_store.list_namespaces(max_depth=2)
    )


def test_namespaces_with_wildcards_and_pages(lg_store: OneirosStore) -> None:
    """Wildcards match any one label; pages of five walk twenty namespaces in order."""
    for i, ns in enumerate(
        [("users", "123"), ("users", "456"), ("users", "789", "settings"), ("guests", "456", "preferences")]
    ):
        lg_store.put(ns, f"id_{i}", {"data": f"value_{i:02d}"})
    assert [("users", "123"), ("users", "456"), ("users", "789", "settings")] == (
        lg_store.list_namespaces(prefix=("users", "*"))
    )
    assert [("guests", "456", "preferences")] == lg_store.list_namespaces(suffix=("*", "preferences"))
    assert [] == lg_store.list_namespaces(prefix=("*", "users"), suffix=("*", "settings"))

    for i in range(20):
        lg_store.put(("namespace", f"sub_{i:02d}"), f"id_{i:02d}", {"data": f"value_{i:02d}"})
    for offset in (0, 5, 15):
        expected = [("namespace", f"sub_{i:02d}") for i in range(offset, offset + 5)]
        assert expected == lg_store.list_namespaces(prefix=("namespace",), limit=5, offset=offset)


def test_an_empty_store_lists_no_namespace(lg_store: OneirosStore) -> None:
    """Nothing put, nothing listed, nothing found."""
    assert [] == lg_store.list_namespaces()
    assert [] == lg_store.search(())
    assert lg_store.get(("nobody", "here"), "k") is None


# -- put, get, search, delete (LangGraph's test_cannot_put_empty_namespace) -----------------------


def test_invalid_namespaces_are_refused_and_valid_ones_round_trip(lg_store: OneirosStore) -> None:
    """An empty namespace, a label with a dot, an empty label and a first label ``langgraph`` are
    refused by put (as LangGraph's stores refuse them); a put past the public API (a batch) may use
    ``langgraph``; every item round-trips through get, search and delete, sync and async."""
    for bad in [(), ("the", "thing.about"), ("some", "fun", ""), ("langgraph", "foo")]:
        with pytest.raises(InvalidNamespaceError):
            lg_store.put(bad, "foo", DOC)
        with pytest.raises(InvalidNamespaceError):
            asyncio.run(lg_store.aput(bad, "foo", DOC))

    async def round_trip(ns: tuple[str, ...], through_batch: bool) -> None:
        if through_batch:
            await lg_store.abatch([PutOp(ns, "bar", DOC)])
        else:
            await lg_store.aput(ns, "bar", DOC)
        got = await lg_store.aget(ns, "bar")
        assert got is not None
        assert DOC == got.value
        assert DOC == (await lg_store.asearch(ns))[0].value
        await lg_store.adelete(ns, "bar")
        assert await lg_store.aget(ns, "bar") is None

    for ns, through_batch in ((("foo", "langgraph", "foo"), False), (("langgraph", "foo"), True)):
        asyncio.run(round_trip(ns, through_batch))
        if through_batch:
            lg_store.batch([PutOp(ns, "bar", DOC)])
        else:
            lg_store.put(ns, "bar", DOC)
        got = lg_store.get(ns, "bar")
        assert got is not None
        assert DOC == got.value
        assert DOC == lg_store.search(ns)[0].value
        lg_store.delete(ns, "bar")
        assert lg_store.get(ns, "bar") is None


def test_gathered_async_calls_run_in_the_order_they_were_made(lg_store: OneirosStore) -> None:
    """``gather(aput, adelete, aput)`` on the same keys ends with every key put (the last call),
    as LangGraph's batched stores end; searches then filter by equality and comparisons."""
    colors, things, scores = ["red", "blue", "green", "yellow", "purple"], ["apple", "car", "house"], [3.0, 4.0, 5.0]
    docs = [
        (f"doc{i}", {"text": f"{colors[i % 5]} {things[i % 3]}", "color": colors[i % 5], "score": scores[i % 3]})
        for i in range(15)
    ]

    async def run() -> tuple[list[Any], list[Any], list[Any], list[Any]]:
        await asyncio.gather(
            *[lg_store.aput(("test",), k, v) for k, v in docs],
            *[lg_store.adelete(("test",), k) for k, _ in docs],
            *[lg_store.aput(("test",), k, v) for k, v in docs],
        )
        return await asyncio.gather(
            lg_store.asearch(("test",), query="apple", filter={"color": "red"}),
            lg_store.asearch(("test",), query="car", filter={"score": {"$gt": 4.99}}),
            lg_store.asearch(("test",), query="house", filter={"score": {"$lte": 3.0}, "color": "green"}),
            lg_store.asearch(("test",), filter={"score": {"$ne": 4.0}}, limit=20),
        )

    red, high, cheap_green, not_four = asyncio.run(run())
    assert sorted(k for k, _ in docs) == sorted(_keys(lg_store.search(("test",), limit=50)))
    assert red
    assert all(item.value["color"] == "red" for item in red)
    assert "red apple" == red[0].value["text"]
    assert high
    assert all(item.value["score"] > 4.99 for item in high)
    assert all(item.value["score"] <= 3.0 and item.value["color"] == "green" for item in cheap_green)
    assert 10 == len(not_four)


# -- search by query (LangGraph's test_vector_*) --------------------------------------------------


def test_a_query_ranks_the_items_that_hold_its_words_first(lg_store: OneirosStore) -> None:
    """Items whose text holds the query's words come first, by relevance; an item kept again is
    ranked by its new text only; an item put with ``index=False`` is never ranked."""
    for key, value in [
        ("doc1", {"text": "zany zebra Xerxes"}),
        ("doc2", {"text": "something about dogs"}),
        ("doc3", {"text": "text about birds"}),
    ]:
        lg_store.put(("test",), key, value)
    first = lg_store.search(("test",), query="Zany Xerxes")
    assert "doc1" == first[0].key
    assert first[0].score is not None
    assert first[0].score > 0
    assert all(item.score == 0.0 for item in first[1:])

    lg_store.put(("test",), "doc1", {"text": "new text about dogs"})
    after = {item.key: item.score for item in lg_store.search(("test",), query="Zany Xerxes")}
    assert 0.0 == after["doc1"]
    again = lg_store.search(("test",), query="new text about dogs")
    assert "doc1" == again[0].key
    assert again[0].score is not None
    assert again[0].score > 0

    lg_store.put(("test",), "doc4", {"text": "new text about dogs"}, index=False)
    assert "doc4" not in _keys(lg_store.search(("test",), query="new text about dogs", limit=3))
    assert 0.0 == {i.key: i.score for i in lg_store.search(("test",), query="new text about dogs")}["doc4"]


def test_a_query_search_filters_and_pages(lg_store: OneirosStore) -> None:
    """A filter keeps only the items it matches before ranking; offset and limit page the ranking;
    a query no item holds still lists the items the filter keeps, each with score 0."""
    docs = [
        ("doc1", {"text": "red apple", "color": "red", "score": 4.5}),
        ("doc2", {"text": "red car", "color": "red", "score": 3.0}),
        ("doc3", {"text": "green apple", "color": "green", "score": 4.0}),
        ("doc4", {"text": "blue car", "color": "blue", "score": 3.5}),
    ]
    for key, value in docs:
        lg_store.put(("test",), key, value)
    assert ["doc1", "doc2"] == _keys(lg_store.search(("test",), query="apple", filter={"color": "red"}))
    assert ["doc2", "doc1"] == _keys(lg_store.search(("test",), query="car", filter={"color": "red"}))
    unknown = lg_store.search(("test",), query="bbbbluuu", filter={"score": {"$gt": 3.2}})
    assert ["doc4", "doc3", "doc1"] == _keys(unknown)  # newest first, none ranked
    assert all(item.score == 0.0 for item in unknown)
    assert ["doc3"] == _keys(
        lg_store.search(("test",), query="apple", filter={"score": {"$gte": 4.0}, "color": "green"})
    )

    for i in range(5):
        lg_store.put(("pages",), f"doc{i}", {"text": f"test document number {i}"})
    first = lg_store.search(("pages",), query="test", limit=2)
    second = lg_store.search(("pages",), query="test", limit=2, offset=2)
    assert 2 == len(first) == len(second)
    assert not set(_keys(first)) & set(_keys(second))
    assert 5 == len(lg_store.search(("pages",), query="test", limit=10))


@pytest.mark.parametrize("query", ["", None, "test " * 100, "test!@#$%^&*()"])
def test_queries_at_the_edges_still_find_the_item(lg_store: OneirosStore, query: str | None) -> None:
    """An empty or missing query lists; a long one and one full of punctuation still search."""
    lg_store.put(("test",), "doc1", {"text": "test document"})
    assert ["doc1"] == _keys(asyncio.run(lg_store.asearch(("test",), query=query)))


# -- oneiros's own ---------------------------------------------------------------------------------


def test_a_second_store_on_the_same_log_sees_the_first_ones_items(store_url: str) -> None:
    """Items live in the log, not in the store object: another OneirosStore (another process's)
    reads what the first put, sees what it deletes, and finds it by query."""
    with OneirosStore(store_url) as first, OneirosStore(store_url) as second:
        first.put(("alice", "memories"), "tea", {"text": "Alice drinks green tea every morning"})
        first.put(("alice", "memories"), "dog", {"text": "Alice walks her dog Biscuit"})
        got = second.get(("alice", "memories"), "tea")
        assert got is not None
        assert "Alice drinks green tea every morning" == got.value["text"]
        assert "tea" == second.search(("alice",), query="green tea")[0].key
        first.delete(("alice", "memories"), "tea")
        assert second.get(("alice", "memories"), "tea") is None
        second.put(("alice", "memories"), "dog", {"text": "Alice's dog Biscuit is ten"})
        dog = first.get(("alice", "memories"), "dog")
        assert dog is not None
        assert "Alice's dog Biscuit is ten" == dog.value["text"]
        assert dog.created_at < dog.updated_at
    with OneirosStore(store_url) as later:
        assert ["dog"] == _keys(later.search(("alice",)))


def test_a_delete_is_an_event_and_a_key_kept_again_reuses_its_episode(store_url: str) -> None:
    """Nothing is updated in place: put, delete and put again are three ItemKept/ItemForgotten
    events, the item's text one episode (its tick kept across the delete), so recall and dreams
    hold one text per item."""
    with Oneiros(store_url) as app:
        store = OneirosStore(app)
        store.put(("bob", "notes"), "n1", {"text": "first words"})
        store.delete(("bob", "notes"), "n1")
        store.delete(("bob", "notes"), "n1")  # nothing to delete: nothing written
        store.put(("bob", "notes"), "n1", {"text": "second words"})
        events = [r.event for r in app.store.read_stream("bob")]
        kinds = [type(e).__name__ for e in events if isinstance(e, ItemKept | ItemForgotten)]
        assert ["ItemKept", "ItemForgotten", "ItemKept"] == kinds
        ticks = {e.episode.tick for e in events if isinstance(e, EpisodeRecorded)}
        assert 1 == len(ticks)
        assert ["n1"] == _keys(store.search(("bob",), query="second"))
        assert 0.0 == store.search(("bob",), query="first")[0].score


def test_racing_writers_give_each_item_an_episode_of_its_own(store_url: str) -> None:
    """Two stores putting new keys to one golem at once never give two items one tick (which would
    make one item's episode replace the other's): the tick is chosen again when a race is lost."""
    stores = [OneirosStore(store_url), OneirosStore(store_url)]
    stores[0].put(("carol", "facts"), "seed", {"text": "seed fact"})

    def write(n: int) -> None:
        for i in range(6):
            stores[n].put(("carol", "facts"), f"w{n}-{i}", {"text": f"writer{n} fact{i}"})

    threads = [threading.Thread(target=write, args=(n,)) for n in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    items = stores[0].oneiros.items("carol")
    assert 13 == len(items)
    assert 13 == len({item.tick for item in items})
    for n in (0, 1):
        for i in range(6):
            assert f"w{n}-{i}" == stores[1].search(("carol",), query=f"writer{n} fact{i}")[0].key
    for store in stores:
        store.close()


def test_dream_outputs_rank_beside_the_items_under_the_dreams_namespace(lg_store: OneirosStore) -> None:
    """After a dream, a query search of the golem's namespace ranks what the dream made of the
    items under ``(golem, "dreams")``, with the items it stands for where it names them; a search of a deeper
    namespace shows items only; nothing may be put into the dreams namespace."""
    for i, text in enumerate(
        ["Deployed on Friday without a canary; errors doubled", "Rolled back the deploy", "Canary deploy went fine"]
    ):
        lg_store.put(("dana", "episodes"), f"e{i}", {"text": text})
    run = lg_store.oneiros.dream("dana")
    assert "complete" == run.status
    ranked = lg_store.search(("dana",), query="deploy canary", limit=50)
    dreams = [item for item in ranked if item.namespace == ("dana", "dreams")]
    assert dreams, [item.value for item in ranked]
    assert all(item.score is not None and item.score > 0 for item in dreams)
    assert all(item.value["standing"] in ("dream", "fact") for item in dreams)
    assert all(isinstance(item.value["source_items"], list) for item in dreams)
    assert all(item.namespace == ("dana", "episodes") for item in lg_store.search(("dana", "episodes"), query="deploy"))
    assert [("dana", "episodes")] == lg_store.list_namespaces()
    with pytest.raises(InputError, match="dreams"):
        lg_store.put(("dana", "dreams"), "mine", {"text": "a dream of my own"})


def test_one_golem_may_hold_every_namespace(store_url: str) -> None:
    """With ``StoreSettings(golem=...)`` every namespace maps to that golem, the namespace kept whole
    on the item; an item's text is the fields ``index`` names."""
    with OneirosStore(store_url, StoreSettings(golem="agent")) as store:
        store.put(("users", "u1"), "profile", {"name": "Eve", "likes": "sailing"}, index=["likes"])
        store.put(("docs",), "readme", {"title": "How to sail"})
        assert {"agent"} == {g.golem_id for g in store.oneiros.golems().items}
        assert [("docs",), ("users", "u1")] == store.list_namespaces()
        assert ["profile"] == _keys(store.search(("users",), query="sailing"))
        assert 0.0 == store.search(("users",), query="Eve")[0].score  # the name was not indexed


def test_a_value_that_is_not_json_is_refused_with_nothing_written(lg_store: OneirosStore) -> None:
    """A value JSON cannot hold is one clear InputError naming the key; nothing is kept."""
    with pytest.raises(InputError, match="'k1'"):
        lg_store.put(("erin",), "k1", {"when": object()})
    assert lg_store.get(("erin",), "k1") is None


def test_an_item_text_is_the_strings_and_numbers_at_its_fields() -> None:
    """``$`` takes every string and number of the value in order; a path takes what lies there
    (through lists); flags, nulls and missing paths give nothing."""
    value = {"text": "tea", "n": 3, "ok": True, "gap": None, "tags": [{"t": "green"}, {"t": "hot"}]}
    assert "tea; 3; green; hot" == item_text(value, ["$"])
    assert "green; hot" == item_text(value, ["tags.t"])
    assert item_text(value, ["missing", "ok", "gap"]) is None


class _State(TypedDict, total=False):
    user: str
    said: str
    answer: str


def test_a_compiled_graph_reads_and_writes_through_the_store(lg_store: OneirosStore) -> None:
    """A node gets the store from its Runtime, recalls what earlier runs kept and keeps what it
    was told: a second run of the graph answers from the first run's memory."""

    def remember(state: _State, runtime: Runtime[None]) -> _State:
        store = runtime.store
        assert store is not None
        ns = (state["user"], "memories")
        recalled = [item.value["text"] for item in store.search(ns, query=state["said"], limit=1) if item.score]
        store.put(ns, f"m{len(store.search(ns, limit=100))}", {"text": state["said"]})
        return {"answer": recalled[0] if recalled else "nothing yet"}

    graph = StateGraph(_State).add_node("remember", remember)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", END)
    compiled = graph.compile(store=lg_store)
    assert "nothing yet" == compiled.invoke({"user": "frank", "said": "my cat is called Miso"})["answer"]
    second = compiled.invoke({"user": "frank", "said": "what is my cat called?"})
    assert "my cat is called Miso" == second["answer"]
    assert 2 == len(lg_store.search(("frank",)))


_ops = st.lists(
    st.tuples(st.sampled_from(["put", "delete"]), st.sampled_from(["a", "b", "c"]), st.integers(0, 3)),
    max_size=12,
)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_ops)
def test_the_store_reads_as_a_dict_after_any_puts_and_deletes(ops: list[tuple[str, str, int]]) -> None:
    """Whatever puts and deletes ran, get and a search with no query give what a dict given the same
    calls holds: the fold of the log is the store's state."""
    model: dict[str, dict[str, Any]] = {}
    with OneirosStore("memory://") as store:
        for op, key, n in ops:
            if op == "put":
                model[key] = {"n": n, "text": f"note {n}"}
                store.put(("gina",), key, model[key])
            else:
                model.pop(key, None)
                store.delete(("gina",), key)
        for key in "abc":
            got = store.get(("gina",), key)
            assert model.get(key) == (got.value if got is not None else None)
        assert sorted(model) == sorted(_keys(store.search(("gina",), limit=10)))


def test_importing_without_langgraph_names_the_extra() -> None:
    """Without LangGraph installed the module raises ConfigError, which names the extra to install."""
    code = (
        "import sys; sys.modules['langgraph'] = None\n"
        "from oneiros import ConfigError\n"
        "try:\n    import oneiros.integrations.langgraph\n"
        "except ConfigError as exc:\n    print(exc)\n"
    )
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    assert "pip install 'oneiros[langgraph]'" in result.stdout


def test_editing_a_value_read_changes_nothing_until_it_is_put(lg_store: OneirosStore) -> None:
    """What get and search give is the caller's own: editing it changes no later read, only a put
    (an event) does."""
    lg_store.put(("hank",), "k", {"text": "tea", "tags": ["green"]})
    got = lg_store.get(("hank",), "k")
    assert got is not None
    got.value["text"] = "coffee"
    got.value["tags"].append("black")
    lg_store.search(("hank",))[0].value["text"] = "juice"
    again = lg_store.get(("hank",), "k")
    assert again is not None
    assert {"text": "tea", "tags": ["green"]} == again.value
    lg_store.put(("hank",), "k", got.value)
    assert {"text": "coffee", "tags": ["green", "black"]} == (lg_store.get(("hank",), "k") or got).value


@pytest.mark.parametrize(
    ("namespace", "key", "field"),
    [(("ivy",), "k" * 2000, "key"), (("ivy", "l" * 300), "k", "namespace[1]")],
)
def test_an_item_the_log_refuses_writes_nothing_not_even_its_golem(
    lg_store: OneirosStore, namespace: tuple[str, ...], key: str, field: str
) -> None:
    """A key or label longer than the log holds is one InvalidEvent naming the field, and leaves
    no golem, item or episode behind."""
    with pytest.raises(InvalidEvent, match=re.escape(f"field {field}")):
        lg_store.put(namespace, key, {"text": "too long"})
    assert not lg_store.oneiros.golem_exists("ivy")
    assert 0 == lg_store.oneiros.store.head()

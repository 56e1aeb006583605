"""A LangGraph agent whose long-term memory is oneiros (``oneiros.integrations.langgraph.OneirosStore``),
offline: a compiled graph recalls what it knows about the user, answers with a stub model, and keeps
what it is told. Between two sessions the golem dreams once (the offline generator); the second
session, on a new store object as a new process would open it, answers from the first session's
memories and shows what the dream made of them.

    python examples/langgraph_agent.py [STORE_URL]   # default: a new SQLite file in a temporary folder

Install the extra first: ``pip install 'oneiros[langgraph]'``. With a STORE_URL of your own, a second
run starts from what the first kept (the same keys are kept again, not added twice).
"""

from __future__ import annotations

import hashlib
import sys
import tempfile
from pathlib import Path
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from oneiros import Oneiros
from oneiros.integrations.langgraph import OneirosStore

USER = "sam"
MEMORIES = (USER, "memories")
FIRST_SESSION = [
    "I moved to Lisbon in March for a job at a harbour startup",
    "I am allergic to peanuts, so no satay for me",
    "My sister Ana visits every summer with her two dogs",
    "I started learning the cello and practise every evening",
]
SECOND_SESSION = ["Where did I move in March?", "Can I eat satay?", "Who visits me in summer?"]


class Turn(TypedDict, total=False):
    message: str
    recalled: list[str]
    reply: str


def recall(state: Turn, runtime: Runtime[None]) -> Turn:
    """What the store ranks for the message: the user's own memories that hold its words."""
    assert runtime.store is not None
    found = runtime.store.search(MEMORIES, query=state["message"], limit=2)
    return {"recalled": [item.value["text"] for item in found if item.score]}


def offline_model(message: str, recalled: list[str]) -> str:
    """A stand-in for a chat model, so the example runs offline: it answers from the best memory
    recalled, and acknowledges what it is told."""
    if message.endswith("?"):
        return f"From what you told me: {recalled[0]}." if recalled else "You have not told me yet."
    return "Noted." if not recalled else f"Noted; that goes with: {recalled[0]}."


def respond(state: Turn) -> Turn:
    return {"reply": offline_model(state["message"], state.get("recalled", []))}


def remember(state: Turn, runtime: Runtime[None]) -> Turn:
    """Keep what the user says about themselves (a question is asked, not kept)."""
    assert runtime.store is not None
    if not state["message"].endswith("?"):
        # Keyed by its words: told again, the same memory is kept again, not added twice.
        key = hashlib.sha256(state["message"].encode()).hexdigest()[:16]
        runtime.store.put(MEMORIES, key, {"text": state["message"]})
    return {}


def agent(store: OneirosStore) -> CompiledStateGraph[Turn, None, Turn, Turn]:
    graph = StateGraph(Turn)
    graph.add_node("recall", recall)
    graph.add_node("respond", respond)
    graph.add_node("remember", remember)
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "respond")
    graph.add_edge("respond", "remember")
    graph.add_edge("remember", END)
    return graph.compile(store=store)


def session(store_url: str, messages: list[str]) -> None:
    with OneirosStore(store_url) as store:
        graph = agent(store)
        for message in messages:
            reply = graph.invoke({"message": message})["reply"]
            print(f"{USER}: {message}")
            print(f"agent: {reply}")


def main(store_url: str) -> int:
    with OneirosStore(store_url) as store:
        known = len(store.search(MEMORIES, limit=1000))
    print(f"{USER} has {known} memories in the store")

    print("-- first session")
    session(store_url, FIRST_SESSION)

    # Dreaming runs on the golem the store feeds (namespace[0]); here once, on request. In a
    # deployment `oneiros run` (or `oneiros serve`) dreams when the config's schedule says.
    with Oneiros(store_url) as app:
        run = app.dream(USER)
        assert run.complete is not None, run.interrupted
        print(f"dreamt cycle {run.cycle_id}: episodes replayed {run.complete.episodes_replayed}")

    print("-- second session (a new store object, as another process would open it)")
    session(store_url, SECOND_SESSION)

    with OneirosStore(store_url) as store:
        print("-- recalled for 'summer dogs', memories and dreams in one ranking:")
        for item in store.search((USER,), query="summer dogs", limit=4):
            print(f"  {'/'.join(item.namespace)} {item.score:.2f} {item.value['text']}")
        block = store.oneiros.memory_block(USER, "Lisbon cello", budget_tokens=120)
        print(f"-- memory block for a prompt ({block.tokens} tokens):")
        print(block.text)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1:
        sys.exit(main(sys.argv[1]))
    with tempfile.TemporaryDirectory() as folder:
        sys.exit(main(f"sqlite:///{Path(folder) / 'events.db'}"))

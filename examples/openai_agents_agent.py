"""An OpenAI Agents SDK agent whose conversation memory is oneiros (``OneirosSession``), offline:
a model stub stands in for the LLM, so it runs without a key or a network.

Day one, the user tells the agent about a week of deploys, one ``Runner.run`` a turn; each turn is
an episode of golem ``alice``. At night the golem dreams one cycle (the offline generator). Day
two, a new session object (a restarted agent) on the same store remembers the conversation, and
the agent, given only the newest turns as history, has the memory block in its instructions: what
recall ranks for what the user just asked, from the older turns and the dream (marked hypotheses).

    python examples/openai_agents_agent.py [STORE_URL]   # default: a SQLite file in a temp folder

Needs ``pip install 'oneiros[openai-agents]'``.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from collections.abc import AsyncIterator
from typing import Any

from agents import Agent, RunConfig, Runner
from agents.items import ModelResponse, TResponseInputItem, TResponseStreamEvent
from agents.memory import SessionSettings
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseOutputMessage, ResponseOutputText

from oneiros.integrations.openai_agents import OneirosSession

SESSION = "alice"
DAY_ONE = (
    "Monday I deployed the billing service straight to every host and it broke; we rolled back.",
    "Tuesday the search service went out behind a 5% canary and it went cleanly.",
    "Wednesday I dropped the old audit table without asking anyone and lost a report.",
    "Thursday the billing deploy went behind a canary again and it went cleanly.",
    "Friday I deployed the search service without a canary and had to roll it back.",
)
DAY_TWO = "Should I deploy the billing service on Friday without a canary?"
INSTRUCTIONS = "You are a careful release assistant. Answer in one sentence."
OFFLINE = RunConfig(tracing_disabled=True)


class StubModel(Model):
    """Stands in for the LLM: acknowledges a turn, or answers from the first line of memory its
    instructions hold."""

    async def get_response(
        self, system_instructions: str | None, input: str | list[TResponseInputItem], *args: Any, **kwargs: Any
    ) -> ModelResponse:
        recalled = [line for line in (system_instructions or "").splitlines() if line.startswith("- ")]
        text = f"From memory: {recalled[0][2:]}" if recalled else "Noted."
        message = ResponseOutputMessage(
            id=f"msg_{1 if isinstance(input, str) else len(input)}",
            role="assistant",
            status="completed",
            type="message",
            content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
        )
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[TResponseStreamEvent]:
        raise NotImplementedError("this example runs without streaming")


async def day_one(store_url: str) -> None:
    with OneirosSession(SESSION, store_url) as session:
        print(f"day one: remembered {len(await session.get_items())} items")
        agent = Agent(name="release assistant", instructions=INSTRUCTIONS, model=StubModel())
        for said in DAY_ONE:
            result = await Runner.run(agent, said, session=session, run_config=OFFLINE)
            print(f"  user: {said}\n  agent: {result.final_output}")
        # The night: the golem dreams on what it lived through (the daemon would, on its schedule).
        run = session.oneiros.dream(SESSION)
        done = run.complete
        print(f"dreamt cycle {run.cycle_id}: episodes replayed {done.episodes_replayed if done else 0}")


async def day_two(store_url: str) -> None:
    # A new object (a restarted agent) that gives the model only the newest 4 items as history:
    # the memory block brings back what matters from further back, and what the dream made of it.
    with OneirosSession(SESSION, store_url, session_settings=SessionSettings(limit=4)) as session:
        items = await session.get_items(limit=100)
        print(f"day two: remembered {len(items)} items, the first: {items[0].get('content')}")
        block = await session.memory_block(DAY_TWO, budget_tokens=300)
        print(f"memory block ({block.tokens} tokens):\n{block.text}")
        agent = Agent(name="release assistant", instructions=session.instructions(INSTRUCTIONS), model=StubModel())
        result = await Runner.run(agent, DAY_TWO, session=session, run_config=OFFLINE)
        print(f"  user: {DAY_TWO}\n  agent: {result.final_output}")


def main(store_url: str | None) -> int:
    with tempfile.TemporaryDirectory() as folder:
        url = store_url or f"sqlite:///{folder}/events.db"
        asyncio.run(day_one(url))
        asyncio.run(day_two(url))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else None))

"""The OpenAI Agents SDK's conversation memory over oneiros: :class:`OneirosSession`, a ``Session``
whose items are a golem's episodes, so what the agent lives through is what its golem dreams about.

A session is a golem: ``OneirosSession("alice")`` keeps its items as the episodes of golem
``alice`` (created by the first item), each episode carrying the item's JSON byte for byte
(``Episode.item``) beside a readable summary that dreaming and recall read. ``pop_item`` and
``clear_session`` are events (``SessionItemPopped``, ``SessionCleared``): the session is a fold of
the log, and the episodes stay what the golem lived through. Another session object, in this
process or another, on the same store shows the same items. Every call runs oneiros off the event
loop, in a worker thread.

What dreaming learned comes back through :meth:`OneirosSession.memory_block` (MEMORY.md's lines,
then what recall ranks for a query, within a token budget) and :meth:`OneirosSession.instructions`,
which gives ``Agent(instructions=...)`` the agent's own instructions followed by the block for the
newest user message (leaving out the turns the model is given as history anyway).
See docs/integrations/openai-agents.md.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType
from typing import Any, Self, cast

from oneiros import ConfigError, EventStore, GolemNotFound, InputError
from oneiros._input import check_plain
from oneiros.app import MemoryBlock, Oneiros
from oneiros.app._memory_block import render_block, tokenizer
from oneiros.events._types import Episode
from oneiros.fsm._service import Golems
from oneiros.settings._trust import EpisodeSource

try:
    from agents import Agent, RunContextWrapper
    from agents.items import TResponseInputItem
    from agents.memory import SessionSettings
    from agents.memory.session_settings import resolve_session_limit
except ImportError:
    raise ConfigError(
        "oneiros.integrations.openai_agents needs the OpenAI Agents SDK: pip install 'oneiros[openai-agents]'"
    ) from None

__all__ = ["OneirosSession", "episode_of"]

Instructions = Callable[[RunContextWrapper[Any], Agent[Any]], Awaitable[str]]
"""What ``Agent(instructions=...)`` calls before each model call."""

_SUMMARY_CHARS = 16_384  # Episode.summary's bound
_REF_CHARS = 256  # Episode.ref's
_SPEAKER_CHARS = 128
_SOURCES: dict[str, EpisodeSource] = {"user": "user", "system": "user", "developer": "user", "assistant": "self"}
"""Where a message's words came from, by its role: the owner's (system and developer prompts are
theirs too) or the agent's own."""


class OneirosSession:
    """An OpenAI Agents SDK session (``agents.memory.Session``) whose items are the episodes of
    golem ``session_id``.

    ``store`` is an :class:`~oneiros.Oneiros` (left open: its owner closes it), or a store URL, an
    open :class:`~oneiros.EventStore` or None (``$ONEIROS_STORE``, the config's store), for an
    ``Oneiros`` opened here and closed by :meth:`close`. ``session_settings`` is the SDK's (its
    ``limit`` caps what :meth:`get_items` returns when the caller gives none); ``budget_tokens``
    the memory block's budget (the config's ``memory_block.budget_tokens`` if None).

    >>> import asyncio
    >>> with OneirosSession("alice", "memory://") as session:
    ...     asyncio.run(session.add_items([{"role": "user", "content": "hello"}]))
    ...     asyncio.run(session.get_items())
    [{'role': 'user', 'content': 'hello'}]
    """

    session_settings: SessionSettings | None

    def __init__(
        self,
        session_id: str,
        store: Oneiros | EventStore | str | None = None,
        *,
        session_settings: SessionSettings | None = None,
        budget_tokens: int | None = None,
    ) -> None:
        Golems.check_id(session_id)
        self.session_id = session_id
        self.session_settings = session_settings
        self.budget_tokens = budget_tokens
        self._owned = not isinstance(store, Oneiros)
        self.oneiros = store if isinstance(store, Oneiros) else Oneiros(store)
        """The application the session works through: ``session.oneiros.dream(session.session_id)``
        dreams on what it holds."""

    # -- the SDK's Session protocol -------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The newest ``limit`` items (the settings' limit if None; every item if neither), oldest
        first, each exactly as it was added."""
        chosen = resolve_session_limit(limit, self.session_settings)
        texts = await asyncio.to_thread(self.oneiros.session_items, self.session_id, chosen)
        return [cast("TResponseInputItem", json.loads(text)) for text in texts]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Record ``items`` as the golem's next episodes, all or none (InputError naming the first
        item that is not JSON: nothing is written)."""
        episodes = [episode_of(item, f"session item {index}") for index, item in enumerate(items)]
        await asyncio.to_thread(self.oneiros.append_session_items, self.session_id, episodes)

    async def pop_item(self) -> TResponseInputItem | None:
        """Take the newest item out of the session (an event; its episode stays the golem's) and
        return it; None when the session is empty."""
        text = await asyncio.to_thread(self.oneiros.pop_session_item, self.session_id)
        return None if text is None else cast("TResponseInputItem", json.loads(text))

    async def clear_session(self) -> None:
        """Take every item out of the session (one event; the episodes stay the golem's)."""
        await asyncio.to_thread(self.oneiros.clear_session, self.session_id)

    # -- what dreaming learned ---------------------------------------------------------------------

    async def memory_block(self, query: str | None = None, *, budget_tokens: int | None = None) -> MemoryBlock:
        """What the golem knows, as a prompt section (``.text``) within ``budget_tokens`` (the
        session's, else the config's): MEMORY.md's lines, then what recall ranks for ``query``,
        each line dated and naming the turns it stands for. A read: it writes nothing. Empty for a
        session that has recorded nothing yet."""
        budget = self.budget_tokens if budget_tokens is None else budget_tokens
        return await asyncio.to_thread(self._block, query, budget)

    def instructions(self, base: str = "") -> Instructions:
        """For ``Agent(instructions=session.instructions("You are ..."))``: ``base``, then the memory
        block for the session's newest user message (MEMORY.md alone before there is one)."""

        async def instructions(_context: RunContextWrapper[Any], _agent: Agent[Any]) -> str:
            block = await asyncio.to_thread(self._block_for_turn)
            return "\n\n".join(part for part in (base, block.text) if part)

        return instructions

    # -- lifetime --------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the application if this session opened it."""
        if self._owned:
            self.oneiros.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- in the worker thread ----------------------------------------------------------------------

    def _block(self, query: str | None, budget_tokens: int | None) -> MemoryBlock:
        try:
            return self.oneiros.memory_block(self.session_id, query, budget_tokens=budget_tokens)
        except GolemNotFound:
            limit = self.oneiros.config.memory_block.budget_tokens if budget_tokens is None else budget_tokens
            return MemoryBlock(
                golem_id=self.session_id,
                query=query,
                text="",
                tokens=0,
                budget_tokens=limit,
                tokenizer=self.oneiros.config.memory_block.tokenizer,
                items=[],
            )

    def _block_for_turn(self) -> MemoryBlock:
        """The block for the newest user message, without the turns the model is given anyway (the
        history ``get_items`` hands the run, as the settings' limit cuts it): recall finds the
        message itself first, and repeating history only spends the budget."""
        entries = self.oneiros.session_entries(self.session_id)
        query, asked = None, len(entries)
        for index in range(len(entries) - 1, -1, -1):
            item = json.loads(entries[index][1])
            if isinstance(item, dict) and item.get("role") == "user" and (said := _text_of(item.get("content"))):
                query, asked = said, index
                break
        # The run read its history before it added this turn's input: the ``limit`` items before it.
        limit = resolve_session_limit(None, self.session_settings)
        shown = entries[asked - min(limit, asked) :] if limit is not None else entries
        block = self._block(query, self.budget_tokens)
        ticks = {str(tick) for tick, _text in shown}
        kept = [i for i in block.items if not (i.kind == "episode" and i.ref in ticks)]
        if len(kept) == len(block.items):
            return block
        count = tokenizer(block.tokenizer)
        return render_block(
            self.session_id, query, kept, budget_tokens=block.budget_tokens, count=count, tokenizer_name=block.tokenizer
        )


def episode_of(item: Mapping[str, Any], where: str = "session item") -> Episode:
    """The episode that keeps ``item``: its JSON byte for byte in ``item``, and for dreaming and
    recall a one-line summary of what was said or done, who said it (``speaker``), where it came
    from (``source``: the user, the agent itself, a tool) and its own id (``ref``). Its tick is
    the session's to give. InputError, naming ``where``, for an item that is not JSON."""
    if not isinstance(item, Mapping):
        raise InputError(f"{where}: expected a JSON object, got {type(item).__name__}")
    check_plain(item, where)
    try:
        text = json.dumps(item, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise InputError(f"{where} is not JSON: {exc}") from None
    summary, speaker, source = _described(item)
    ref = item.get("id") or item.get("call_id")
    return Episode(
        tick=0,
        summary=_clipped(summary, _SUMMARY_CHARS),
        speaker=_clipped(speaker, _SPEAKER_CHARS) if speaker else None,
        source=source,
        ref=_clipped(ref, _REF_CHARS) if isinstance(ref, str) and ref else None,
        item=text,
    )


def _described(item: Mapping[str, Any]) -> tuple[str, str | None, EpisodeSource]:
    """``(summary, speaker, source)`` of an item: a message's words, a tool call's name and
    arguments, a tool's output, a reasoning summary; another kind by its type and any text in it.
    The summary is never blank (the log refuses a blank one): an item with no words is named by
    its kind."""
    kind = item.get("type") or ("message" if "role" in item else "item")
    named = str(kind).strip() or "item"
    if kind == "message":
        role = str(item.get("role") or "")
        said = _text_of(item.get("content")) or "(said nothing)"
        return said, role or None, _SOURCES.get(role, "unspecified")
    if kind == "function_call":
        return f"called {item.get('name', 'a tool')}({item.get('arguments', '')})", None, "self"
    if kind == "function_call_output":
        return _text_of(item.get("output")) or "a tool returned nothing", "tool", "tool"
    if kind == "reasoning":
        return _text_of(item.get("summary")) or "reasoned", None, "self"
    text = _text_of(item.get("content")) or _text_of(item.get("output"))
    return (f"{named}: {text}" if text else named), None, "unspecified"


def _text_of(content: object) -> str:
    """The text of a message's content: a string, or the text of its parts (text, refusals,
    transcripts), one after another."""
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):
        parts = (_text_of(part) for part in content)
        return " ".join(part for part in parts if part)
    if isinstance(content, Mapping):
        for key in ("text", "refusal", "transcript", "output"):
            if isinstance(value := content.get(key), str) and value.strip():
                return value.strip()
    return ""


def _clipped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"

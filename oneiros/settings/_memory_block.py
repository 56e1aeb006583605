"""How the memory block (recall rendered as a prompt section) is sized."""

from __future__ import annotations

from typing import Annotated

import msgspec

__all__ = ["MemoryBlockSettings"]


class MemoryBlockSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The memory block's defaults: how its tokens are counted, its budget, how deep recall goes.

    ``chars/4`` is the usual rule of thumb for English under BPE tokenizers (OpenAI's tokenizer
    guide: "one token generally corresponds to ~4 characters"); a deployment that knows its model's
    tokenizer names a function counting a text's tokens, ``module:function`` (for instance one
    around ``tiktoken``), so the budget is the model's own."""

    tokenizer: str = "chars/4"
    """``chars/N`` (characters divided by N, rounded up) or ``module:function``, a callable taking a
    text and returning its token count."""
    budget_tokens: Annotated[int, msgspec.Meta(ge=1)] = 1000
    """The block's size when a caller names none."""
    limit: Annotated[int, msgspec.Meta(ge=1, le=100)] = 20
    hypotheses: bool = False
    """Whether staged dreams that recall ranks (proposed or reinforced, not yet validated) join the
    block, marked as hypotheses. Off: a prompt is paid for by the token, and a dream is a hypothesis
    to review, never something to act on (Dense-Mem); what dreams observed of the record (dated
    facts, threads) and what validation promoted join either way."""
    """How many results and related dreams recall ranks for the block (each list at most this many)."""

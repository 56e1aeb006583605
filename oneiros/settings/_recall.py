"""How recall ranks: BM25's constants, the optional embedder, grouping by source turn, and what
the user stands by (``[recall]`` in oneiros.toml, ``ONEIROS_RECALL__*``; docs/projections.md)."""

from __future__ import annotations

import msgspec

__all__ = ["RecallSettings"]


class RecallSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Recall's ranking, the same for the CLI, REST, MCP, the memory block and the eval."""

    k1: float = 1.2
    """BM25's term-frequency saturation (the textbook 1.2, as Lucene and issue 29's baseline)."""
    b: float = 0.75
    """BM25's length normalisation (the textbook 0.75)."""
    embedder: str = "none"
    """``none``, ``hashing`` or ``sentence-transformers:<model>`` (the ``embeddings`` extra): rank
    each ranking's candidates by cosine similarity too, fused by reciprocal rank."""
    pool: int = 50
    """Candidates fetched from each part of the index for the fusion (at least the recall's limit)."""
    grouped: bool = True
    """Group the ranking by source episode: an item whose episodes are all stood for by items ranked
    above it is left out, so each place brings at least one episode of its own; a dream that
    restates one episode gives its place to that episode, and an episode gives its place to an
    observation among the candidates that restates it with more (the question it answers): a dream's
    observations add context instead of crowding turns out (docs/evaluation.md has the figures)."""
    instructions: int = 2
    """At most this many of the user's standing instructions whose condition the query matches
    ("... when I ask about dependencies") are ranked first, whatever else matches; 0: none."""
    profile_weight: float = 3.0
    """What the relevance of a turn stating a preference or instruction still in force, and of its
    profile entry, is multiplied by: a request the user made once ranks with what they keep
    wanting (docs/evaluation.md has what each weight does to each kind of question); 1: no weight."""

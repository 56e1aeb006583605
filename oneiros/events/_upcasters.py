"""Upcasters for every retired event schema version. Never edit one once released; add the next."""

from __future__ import annotations

from typing import Any

from oneiros.events._codec import register_upcaster


@register_upcaster("EpisodeRecorded", from_version=1)
def _episode_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """v1 stored a flat episode with top-level ``pnl`` and ``surprise``; v2 nests an ``episode``
    with an ``outcome`` holding every outcome figure."""
    episode = {k: v for k, v in data.items() if k not in ("pnl", "surprise")}
    episode["outcome"] = {"pnl": data.get("pnl", 0.0), "surprise": data.get("surprise", 0.0)}
    return {"episode": episode}


@register_upcaster("GenerationRecorded", from_version=1)
def _generation_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """v1 keyed a recorded response by ``call_key`` alone and did not record the requested model,
    task or system prompt. Their hash cannot be rebuilt, so a lifted record carries
    ``request_hash=""``: it matches a request only if the prompt, temperature and max_tokens it
    did record are equal (workers/_metered.py, ``matches``)."""
    return {**data, "request_hash": ""}

"""Upcasters for every retired event schema version. Never edit one once released; add the next."""

from __future__ import annotations

import re
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


@register_upcaster("DreamStart", from_version=1)
def _dream_start_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """v1 had one ``trigger`` that mixed Bardo's three names with the scheduler's; v2 keeps the
    scheduler's trigger and Bardo's beside it. A v1 Bardo name becomes the scheduler trigger that
    produces it (``time``: a window; the other two: urgency); a v1 scheduler trigger gets the Bardo
    name of the mapping as it stood when v2 was released."""
    bardo_names = {"time": "window", "emotional_load": "urgency", "novelty_streak": "urgency"}
    released = {"fatigue": "novelty_streak", "emergency": "emotional_load", "urgency": "novelty_streak"}
    trigger = data.get("trigger", "owner")
    if trigger in bardo_names:
        return {**data, "trigger": bardo_names[trigger], "bardo_trigger": trigger}
    return {**data, "bardo_trigger": released.get(trigger, "time")}


@register_upcaster("DreamPhase", from_version=1)
def _dream_phase_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """v2 names the phase as Bardo does, beside oneiros's name."""
    names = {
        "hypnagogic_onset": "HypnagogicOnset",
        "nrem": "NREM",
        "rem": "REM",
        "integration": "Integration",
        "hypnopompic_return": "HypnopompicReturn",
    }
    phase = data.get("phase", "")
    return {**data, "bardo_phase": names.get(phase, phase)}


@register_upcaster("DreamStart", from_version=2)
def _dream_start_v2_to_v3(data: dict[str, Any]) -> dict[str, Any]:
    """v2 did not record the cycle's settings; v3 always names them, None for the cycles before."""
    return {**data, "settings": None}


@register_upcaster("EpisodeRecorded", from_version=2)
def _episode_v2_to_v3(data: dict[str, Any]) -> dict[str, Any]:
    """v3 episodes name where their content came from and how far it is trusted. Every v2 episode
    was the golem's own record, trusted fully (the sweep promoted what was drawn from it): it is
    lifted as ``source="self"``, ``trust="high"``, written out so that no later default or
    ``staging.trust`` setting re-judges an old log."""
    return {**data, "episode": {**data["episode"], "source": "self", "trust": "high"}}


@register_upcaster("DreamStart", from_version=3)
def _dream_start_v3_to_v4(data: dict[str, Any]) -> dict[str, Any]:
    """v3's budget meant its caps through its tier: a hardened cycle ran under
    ``hardened_cycle_tokens`` whatever ``cycle_tokens`` said, and a core cycle under no money cap
    per cycle or window. v4's ``cycle_tokens``, ``cycle_usd`` and ``window_usd`` are the caps at
    any tier, so a v3 budget is lifted to the caps it ran under."""
    settings = data.get("settings")
    if not isinstance(settings, dict) or not isinstance(settings.get("budget"), dict):
        return data
    budget = dict(settings["budget"])
    if budget.get("tier") == "hardened":
        budget.pop("cycle_tokens", None)  # unset: the Struct takes hardened_cycle_tokens, recorded or default
        if "hardened_cycle_tokens" in budget:
            budget["cycle_tokens"] = budget["hardened_cycle_tokens"]
    else:
        budget["cycle_usd"] = None
        budget["window_usd"] = None
    return {**data, "settings": {**settings, "budget": budget}}


# What the LoCoMo importer wrote last in a turn's text before v4: the text, a space and
# ``[shares <caption>]`` (``[shares an image]`` for an image with no caption), all stripped.
_SHARED_MARKER = re.compile(r" ?\[shares ([^\]]+)\]$")


@register_upcaster("EpisodeRecorded", from_version=3)
def _episode_v3_to_v4(data: dict[str, Any]) -> dict[str, Any]:
    """v4 keeps an image an episode shared in its ``shared`` field; v3's importer wrote it at the
    end of the summary as `` [shares <caption>]``. The marker moves to the field (``an image`` was
    the importer's words for an image with no caption) and the summary keeps the turn's own text,
    empty when the turn said nothing else, so that ``Episode.said()`` gives back the v3 summary
    exactly."""
    episode = data["episode"]
    summary = episode.get("summary")
    found = _SHARED_MARKER.search(summary) if isinstance(summary, str) else None
    if found is None or episode.get("shared") is not None:
        return data
    caption = found.group(1)
    shared = {"caption": None if caption == "an image" else caption}
    return {**data, "episode": {**episode, "summary": summary[: found.start()], "shared": shared}}

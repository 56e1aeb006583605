"""Presets: each source system's triggers, gates and cycle knobs as a layer of settings.

A preset is plain TOML-shaped data laid over the defaults, under the same validation as a file,
so ``oneiros config show --preset NAME`` shows exactly what a golem configured with it runs.
"""

from __future__ import annotations

import copy
from typing import Any, Final

__all__ = ["PRESETS", "preset_layer"]

_ALL_HOURS = list(range(24))
# Only Bardo waits for an episode count before the first dream; the others dream from the start.
_NO_EPISODE_WAIT = {"thriving": 0, "stable": 0, "conservation": 0, "declining": 0, "terminal": 0}
# The Bumblebee gates switched off, for the systems whose own trigger is the whole rule.
_NO_GATES: dict[str, Any] = {
    "enabled": True,
    "mode": "owner",
    "idle_trigger": False,
    "silence_seconds": 0,
    "cooldown_seconds": 0,
    "dream_hours": _ALL_HOURS,
    "max_per_day": 0,
    "require_no_pending_messages": False,
}

PRESETS: Final[dict[str, dict[str, Any]]] = {
    # Bumblebee: five gates (enabled, 1 h silence, 4 h cooldown, hours 0-5, 2 a day); one
    # high-temperature (1.15) generation; beliefs enter at confidence 0.35.
    "bumblebee": {
        "schedule": {
            "enabled": True,
            "mode": "owner",
            "idle_trigger": True,
            "silence_seconds": 3600,
            "cooldown_seconds": 14400,
            "dream_hours": [0, 1, 2, 3, 4, 5],
            "max_per_day": 2,
            "require_no_pending_messages": False,
            "preconditions": {"first_dream_episodes": _NO_EPISODE_WAIT},
        },
        "cycle": {"engines": {"exploration_temperature": 1.15, "insight_confidence": 0.35}},
    },
    # Bardo: hybrid windows + autonomous urgency (0.8), four hard preconditions, urgency
    # decay 0.1 a tick, the CORE interval trigger every 50 ticks, emergency dream before death.
    "bardo": {
        "schedule": {
            **_NO_GATES,
            "mode": "hybrid",
            "windows": [{"start": "02:00", "end": "06:00", "timezone": "UTC"}],
            "interval": {"enabled": True, "every_ticks": 50},
            "emergency_dream": True,
        },
        "daemon": {"apply_intensity": True},
        "cycle": {
            "engines": {
                "exploration_temperature": 0.7,
                "hypothesis_confidence": 0.2,
                "insight_confidence": 0.3,
                # Bardo's agent trades: its perturbations and threats are a trader's.
                "nrem": {
                    "perturbations": ["simulated slippage", "a latency spike", "a gas price change", "data dropout"]
                },
                "rem": {
                    "threat_kinds": [
                        "flash crash",
                        "oracle manipulation",
                        "smart contract exploit",
                        "cascading liquidations",
                        "MEV attack",
                    ]
                },
            }
        },
    },
    # Dense-Mem: one scheduled cycle per golem per local day from 03:00, checked once a minute.
    "dense-mem": {
        "schedule": {
            **_NO_GATES,
            "max_per_day": 1,
            "daily": {"enabled": True, "start_time": "03:00"},
            "preconditions": {"first_dream_episodes": _NO_EPISODE_WAIT},
        },
        "daemon": {"tick_seconds": 60},
    },
    # Ethos: idle 120 min with no pending messages, at most 3 a day, any hour.
    "ethos": {
        "schedule": {
            **_NO_GATES,
            "idle_trigger": True,
            "silence_seconds": 7200,
            "max_per_day": 3,
            "require_no_pending_messages": True,
            "preconditions": {"first_dream_episodes": _NO_EPISODE_WAIT},
        },
    },
    # OpenSeed: fatigue (warn 60, force 80), voluntary sleep (>= 30 s, 10 min since the last
    # dream), deep sleep every 10th dream with a 300 s pause, and its wake-up message.
    "openseed": {
        "schedule": {
            **_NO_GATES,
            "fatigue": {"enabled": True, "warning_actions": 60, "limit_actions": 80},
            "voluntary": {"enabled": True, "min_seconds": 30, "min_since_last_dream_seconds": 600},
            "deep_sleep_every": 10,
            "preconditions": {"first_dream_episodes": _NO_EPISODE_WAIT},
        },
        "daemon": {"deep_sleep_pause_seconds": 300},
        "cycle": {"engines": {"wake_up": {"style": "openseed"}}},
    },
    # OpenClaw (docs.openclaw.ai, "Dreaming"): one managed sweep a day at 03:00, and a deep phase
    # that promotes only what passes score 0.8, 3 recalls and 3 distinct queries, scored from six
    # weighted signals. Promotion is by recall evidence; outcomes still move confidence and refute.
    "openclaw": {
        "schedule": {
            **_NO_GATES,
            "max_per_day": 1,
            "daily": {"enabled": True, "start_time": "03:00"},
            "preconditions": {"first_dream_episodes": _NO_EPISODE_WAIT},
        },
        "staging": {
            "promotion": "recalls",
            "recall": {
                "min_score": 0.8,
                "min_recalls": 3,
                "min_distinct_queries": 3,
                "weights": {
                    "relevance": 0.30,
                    "frequency": 0.24,
                    "query_diversity": 0.15,
                    "recency": 0.15,
                    "consolidation": 0.10,
                    "conceptual_richness": 0.06,
                },
            },
        },
    },
}


def preset_layer(name: str) -> dict[str, Any]:
    """The settings ``name`` lays over the defaults (a deep copy the caller may change)."""
    return copy.deepcopy(PRESETS[name])

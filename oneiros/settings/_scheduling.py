"""The scheduler's and the daemon's settings: every gate and trigger of the source documents.

Each number is the default of a setting and its docstring names the document it comes from. Where
two documents disagree (Bumblebee's one hour of silence against Ethos's two, two dreams a day
against three), the default follows the first document listed and the other one's preset sets its
own value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Literal

import msgspec

from oneiros.settings._vocabulary import BardoTrigger, BehavioralPhase, DreamTrigger

__all__ = [
    "BardoTriggerSettings",
    "DaemonSettings",
    "DailySettings",
    "FatigueSettings",
    "IntensitySettings",
    "IntervalSettings",
    "MicroConsolidationSettings",
    "PhaseValues",
    "PreconditionSettings",
    "ScheduleMode",
    "ScheduleSettings",
    "SleepWindow",
    "UrgencySettings",
    "UrgencyWeights",
    "VoluntarySleepSettings",
    "WakeInterruptSettings",
]

ScheduleMode = Literal["owner", "autonomous", "hybrid"]
HHMM = Annotated[str, msgspec.Meta(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$")]
Seconds = Annotated[float, msgspec.Meta(ge=0.0)]
Count = Annotated[int, msgspec.Meta(ge=0)]
Unit = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]
Hour = Annotated[int, msgspec.Meta(ge=0, le=23)]
Zone = Annotated[str, msgspec.Meta(min_length=1)]


class SleepWindow(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """An owner's sleep window (Bardo, ``[dream.windows]``); ``end`` before ``start`` spans midnight."""

    start: HHMM
    end: HHMM
    timezone: Zone = "UTC"


class PhaseValues(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One number per behavioral phase."""

    thriving: float
    stable: float
    conservation: float
    declining: float
    terminal: float

    def of(self, phase: BehavioralPhase) -> float:
        value: float = getattr(self, phase)
        return value


class UrgencyWeights(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Weights of Bardo's ``dream_urgency`` for one behavioral phase (they sum to 1, so the score is in [0, 1]).

    Bardo names the terms but gives no figures, only that declining golems weigh time and
    novelty more and consolidation less; these defaults follow that description."""

    novelty: Unit = 0.20
    consolidation: Unit = 0.25
    emotional: Unit = 0.15
    threat: Unit = 0.15
    epistemic: Unit = 0.15
    temporal: Unit = 0.10
    natural_period: Annotated[float, msgspec.Meta(gt=0.0)] = 150.0
    """Ticks at which ``sigmoid(ticks_since_last_dream / natural_period)`` reaches sigmoid(1)."""


def _default_weights() -> dict[BehavioralPhase, UrgencyWeights]:
    return {
        "thriving": UrgencyWeights(novelty=0.25, consolidation=0.20, temporal=0.10, natural_period=200.0),
        "stable": UrgencyWeights(),
        "conservation": UrgencyWeights(novelty=0.20, consolidation=0.20, temporal=0.15, natural_period=100.0),
        "declining": UrgencyWeights(novelty=0.25, consolidation=0.10, temporal=0.20, natural_period=50.0),
        "terminal": UrgencyWeights(novelty=0.25, consolidation=0.10, temporal=0.20, natural_period=50.0),
    }


class UrgencySettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Bardo, trigger 2: the autonomous urgency score."""

    threshold: Unit = 0.8
    """Score a settled golem needs (Bardo: "A Thriving Golem needs score >= 0.8";
    ``autonomousThreshold = 0.8``)."""
    adapting_threshold: Unit = 0.6
    """Score a golem in an uncertain or adapting phase needs (Bardo: ">= 0.6")."""
    adapting_phases: tuple[BehavioralPhase, ...] = ("conservation", "declining")
    """Phases that count as adapting; a host may also flag ``Signals.adapting``."""
    decay_per_tick: Unit = 0.1
    """Urgency lost per tick while a precondition blocks it, instead of resetting (Bardo)."""
    debt_saturation: Annotated[int, msgspec.Meta(gt=0)] = 200
    """Unreplayed episodes at which consolidation debt is 1.0: the top of Bardo's 50-200
    first-dream range, so debt is full once a cycle's worth of episodes waits."""
    weights: dict[BehavioralPhase, UrgencyWeights] = msgspec.field(default_factory=_default_weights)


class PreconditionSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Bardo: the four hard preconditions every trigger passes through."""

    first_dream_episodes: PhaseValues = PhaseValues(
        thriving=200, stable=150, conservation=100, declining=50, terminal=50
    )
    """Episodes before the first dream: "50-200 depending on behavioral phase" (Bardo). The
    document gives only the range; the closer to death, the sooner a golem may dream."""
    min_credit: Unit = 0.15
    """LLM credit partition that must remain (Bardo: ">= 15% remaining")."""
    block_terminal: bool = True
    """Terminal golems never dream; they go to the death protocol (Bardo)."""
    block_on_permit: bool = True
    """No dream while an ActionPermit is pending (Bardo)."""


class IntervalSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Bardo, [CORE] tier: ``tick % dreamCycleInterval == 0 AND phase != terminal``."""

    enabled: bool = False
    every_ticks: Annotated[int, msgspec.Meta(gt=0)] = 50
    """Default interval: 50 ticks (~33 min at the standard tick rate) (Bardo)."""


class FatigueSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """OpenSeed: each action raises fatigue; consolidation resets it."""

    enabled: bool = False
    warning_actions: Count = 60
    """FATIGUE_WARNING: actions before the "start wrapping up" message (OpenSeed)."""
    limit_actions: Count = 80
    """FATIGUE_LIMIT: actions before consolidation is forced (OpenSeed)."""
    warning_message: str = "You've been active for a while. Start wrapping up."


class VoluntarySleepSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """OpenSeed: ``set_sleep`` consolidates only if long enough and not too soon."""

    enabled: bool = False
    min_seconds: Seconds = 30.0
    """QUICK_NAP_THRESHOLD: shorter sleeps only pause (OpenSeed)."""
    min_since_last_dream_seconds: Seconds = 600.0
    """MIN_DREAM_INTERVAL_MS: 10 minutes since the last dream (OpenSeed)."""


class DailySettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Dense-Mem: one scheduled cycle per golem per local day, from a start time on."""

    enabled: bool = False
    start_time: HHMM = "03:00"
    """DREAMING_START_TIME_LOCAL (Dense-Mem)."""


class IntensitySettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Bardo: dream intensity from epistemic fitness and the three mortality clocks."""

    high_below_fitness: Unit = 0.5
    """Epistemic fitness under which uncertainty is high (Bardo, ``dream_intensity``)."""
    medium_below_fitness: Unit = 0.7
    """Epistemic fitness under which uncertainty is medium (Bardo)."""
    economic_weight: float = 0.5
    epistemic_weight: float = 0.3
    stochastic_weight: float = 0.2
    """The three-clock composite: ``1 + econ * 0.5 + epistemic * 0.3 + stochastic * 0.2`` (Bardo)."""
    double_rate_below_hours: Seconds = 72.0
    """Economic clock: under 72 h of projected life, dream twice as often (Bardo)."""
    consolidation_only_below_hours: Seconds = 24.0
    """Economic clock: under 24 h, consolidation only (Bardo)."""
    cease_below_hours: Seconds = 6.0
    """Economic clock: under 6 h dreams cease, resources go to the death protocol (Bardo)."""
    legacy_bias_above: Unit = 0.70
    """Stochastic clock: hayflick ratio over which dreams lean to legacy (Bardo)."""
    legacy_mode_above: Unit = 0.85
    """Stochastic clock: hayflick ratio over which dreams are full legacy consolidation (Bardo)."""


class WakeInterruptSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Bardo, ``[dream.wakeInterrupts]``: what may wake a dreaming golem."""

    enabled: bool = True
    owner: bool = True
    clade_alert: bool = True
    market_threshold: bool = True
    market_change_percent: Annotated[float, msgspec.Meta(gt=0.0)] = 10.0
    """Wake when an asset moves this much… (Bardo: ETH, ``changePercent = 10``)."""
    market_window_seconds: Seconds = 300.0
    """…within this window (Bardo: ``window = "5m"``)."""


def _bardo_by_trigger() -> dict[DreamTrigger, BardoTrigger]:
    return {
        "owner": "time",
        "window": "time",
        "interval": "time",
        "daily": "time",
        "idle": "time",
        "voluntary": "time",
        "fatigue": "novelty_streak",
        "emergency": "emotional_load",
        "urgency": "novelty_streak",
    }


def _bardo_by_term() -> dict[str, BardoTrigger]:
    return {
        "novelty": "novelty_streak",
        "epistemic": "novelty_streak",
        "emotional": "emotional_load",
        "threat": "emotional_load",
        "consolidation": "time",
        "temporal": "time",
        "micro_consolidation": "novelty_streak",
    }


class BardoTriggerSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How a cycle's trigger reads in Bardo's event contract, whose ``DreamStart`` names only
    ``"time"|"emotional_load"|"novelty_streak"``. ``DreamStart`` keeps the scheduler's own trigger
    beside it (see ``docs/bardo-events.md`` for the whole mapping)."""

    by_trigger: dict[DreamTrigger, BardoTrigger] = msgspec.field(default_factory=_bardo_by_trigger)
    """Bardo's trigger for each scheduler trigger. Bardo gives the three names only: what runs
    on the clock or on someone's word (windows, the interval, daily, idle, voluntary sleep, the owner)
    reads as ``time``; OpenSeed's fatigue, a streak of actions, as ``novelty_streak``; the
    emergency dream before death as ``emotional_load``. ``urgency`` here is only the fallback:
    an urgency cycle takes the trigger of its heaviest term (``by_urgency_term``)."""
    by_urgency_term: dict[str, BardoTrigger] = msgspec.field(default_factory=_bardo_by_term)
    """Bardo's trigger for each term of ``dream_urgency`` (Bardo); an urgency cycle takes the
    name whose terms weigh most together. Novelty pressure and epistemic drift read as
    ``novelty_streak``, emotional load and threat exposure as ``emotional_load``, consolidation debt
    and time since the last dream as ``time``."""

    def of(self, trigger: DreamTrigger, urgency_terms: Mapping[str, float] | None = None) -> BardoTrigger:
        """Bardo's name for ``trigger``; for urgency, the name whose terms weigh most together."""
        if trigger == "urgency" and urgency_terms:
            weight: dict[BardoTrigger, float] = {}
            for term, value in urgency_terms.items():
                name = self.by_urgency_term.get(term)
                if name is not None:
                    weight[name] = weight.get(name, 0.0) + value
            if weight:
                return max(sorted(weight), key=lambda name: weight[name])
        return self.by_trigger.get(trigger, "time")


class ScheduleSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """When to dream. Gates (silence, cooldown, circadian, daily cap, pending messages) hold back the
    idle, window, daily, interval, urgency and voluntary triggers; the owner directive and forced
    fatigue skip them. The four hard preconditions hold back every trigger."""

    enabled: bool = False
    """Scheduled dreaming is opt-in everywhere (Bumblebee ``enabled: false``, Bardo,
    Dense-Mem ``DREAMING_ENABLED``, Ethos ``dreaming.enable``). An owner directive still
    runs while it is off, as Dense-Mem's manual runs do."""
    timezone: Zone = "UTC"
    """IANA zone of "local" time for the circadian gate, the calendar day and the daily start
    (Dense-Mem ``APP_TIMEZONE``; Bumblebee uses the host's local time)."""
    mode: ScheduleMode = "hybrid"
    """owner: windows only; autonomous: urgency only; hybrid: both (Bardo, recommended)."""
    idle_trigger: bool = True
    """Dream once silence and the other gates allow (Bumblebee, Ethos)."""
    silence_seconds: Seconds = 3600.0
    """Idle time required since the last activity or the last cycle's end, 0 for none (Bumblebee
    ``min_silence_seconds``; Ethos ``idleMinutes`` is 120 min)."""
    cooldown_seconds: Seconds = 14400.0
    """Minimum gap between cycles (Bumblebee ``min_gap_seconds``)."""
    dream_hours: tuple[Hour, ...] = (0, 1, 2, 3, 4, 5)
    """Local hours in which dreaming may start (Bumblebee ``dream_hours``)."""
    max_per_day: Count = 2
    """Cycles per local calendar day, 0 for no cap (Bumblebee ``max_cycles_per_day``; Ethos
    ``maxPerDay`` is 3)."""
    require_no_pending_messages: bool = True
    """Idle means no pending messages too (Ethos)."""
    windows: tuple[SleepWindow, ...] = ()
    """Owner sleep windows; inside one, the window is the permission (Bardo)."""
    window_is_permission: bool = True
    """Inside a sleep window the window itself is the permission: a window-triggered cycle is not
    held back by the silence, cooldown or circadian gates (Bardo: "fires unconditionally when
    a configured window is active [...] The window itself is the permission"). The hard
    preconditions, the window's own cycle cap, the daily cap and held messages still apply. False
    holds window cycles to the silence and cooldown gates too."""
    max_cycles_per_window: PhaseValues = PhaseValues(thriving=4, stable=3, conservation=2, declining=1, terminal=0)
    """Max cycles per window by behavioral phase, the top of Bardo's [HARDENED] ranges."""
    urgency: UrgencySettings = UrgencySettings()
    preconditions: PreconditionSettings = PreconditionSettings()
    interval: IntervalSettings = IntervalSettings()
    fatigue: FatigueSettings = FatigueSettings()
    voluntary: VoluntarySleepSettings = VoluntarySleepSettings()
    daily: DailySettings = DailySettings()
    intensity: IntensitySettings = IntensitySettings()
    deep_sleep_every: Count = 10
    """Every 10th dream is a deep sleep (OpenSeed DEEP_SLEEP_EVERY); 0 turns it off."""
    emergency_dream: bool = True
    """One compressed cycle before death when the golem can still dream (Bardo)."""
    bardo_triggers: BardoTriggerSettings = BardoTriggerSettings()


class MicroConsolidationSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Bardo's micro-consolidation fiber: between full dreams, a waking pass of the newest
    episodes against the most retrieved insights. It never writes the playbook (or the staging
    buffer): it only strengthens insights, tags episodes and adds urgency, each as an event."""

    enabled: bool = True
    every_seconds: Annotated[float, msgspec.Meta(gt=0.0)] = 60.0
    """A pass every 60 seconds of waking (Bardo: "runs every 60 seconds during waking ticks")."""
    recent_episodes: Annotated[int, msgspec.Meta(ge=1)] = 5
    """Episodes compared per pass: "the last 5 episodes" (Bardo)."""
    top_insights: Annotated[int, msgspec.Meta(ge=1)] = 10
    """Insights compared: "the top-10 Grimoire insights by retrieval frequency" (Bardo). An
    insight is a staged novel insight or confirmed pattern; each match by the fiber is a retrieval,
    and ties go to the newest."""
    match_similarity: Unit = 0.8
    """An episode this similar to an insight's pattern (strictly above) strengthens it: "cosine
    similarity > 0.8" (Bardo). The pattern is the insight's source episodes: the similarity is
    the best over them (the insight's own text for an insight drawn from none)."""
    strength_delta: Annotated[float, msgspec.Meta(ge=0.0)] = 0.1
    """Strength added to a matched insight: "the insight's strength gets +0.1" (Bardo)."""
    anomaly_similarity: Unit = 0.7
    """An episode this similar (strictly above) whose outcome went the other way from the insight's
    source is tagged ``dream_priority: high`` for the next dream (Bardo: "cosine similarity >
    0.7 but outcome diverges")."""
    urgency_delta: Unit = 0.02
    """Added to dream urgency by each pass that finds unresolved patterns, tagged episodes not yet
    dreamt about (Bardo: "contributes 0.02 to dream urgency")."""


class DaemonSettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The heartbeat loop of ``oneiros run``."""

    tick_seconds: Annotated[float, msgspec.Meta(gt=0.0)] = 60.0
    """Heartbeat period: Bardo counts 1 tick a minute; Dense-Mem checks once a minute."""
    deep_sleep_pause_seconds: Seconds = 300.0
    """DEEP_SLEEP_PAUSE: forced downtime after a deep sleep, messages still held (OpenSeed)."""
    shutdown_grace_seconds: Seconds = 30.0
    """On SIGTERM, how long a running cycle may finish before it is recorded as interrupted."""
    follow: bool = True
    """Keep the validation sweep, the health alarms and the projections up with the log on a thread
    of the daemon, so outcomes promote and alarms reach observers with nobody reading. Off when a
    separate follower (``oneiros follow``, a server with ``server.follow``) does it; running both is
    safe, only redundant."""
    wake_interrupts: WakeInterruptSettings = WakeInterruptSettings()
    micro: MicroConsolidationSettings = MicroConsolidationSettings()
    apply_intensity: bool = False
    """Set each cycle's replay batch and temperature from Bardo's dream intensity (the
    ``bardo`` preset turns it on; the others keep their engines' own settings)."""

"""``should_dream``: every trigger and gate of the source documents, in one pure evaluation.

Three kinds of check, in this order of precedence:

* **hard preconditions** (Bardo 001_*): enough episodes, LLM credit >= 15%, not Terminal, no
  pending ActionPermit, and the economic clock not in its last hours. Every trigger obeys them.
* **gates**: the master switch, silence (Bumblebee 000_*, Ethos 003_* idle), cooldown, circadian
  hours, the daily cap and no pending messages (Ethos). The owner directive, forced fatigue and
  voluntary sleep skip them; a sleep window skips only the circadian hours, since inside a window
  "the window is the permission" (Bardo 001_*).
* **triggers**, first that fires wins: owner directive, fatigue (OpenSeed 004_*), sleep window,
  daily start time (Dense-Mem 002_*), voluntary sleep (OpenSeed), urgency (Bardo), the tick
  interval (Bardo [CORE]) and idle (Bumblebee, Ethos).

The function reads no clock and writes nothing: the caller passes ``now`` and records the decision.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import TYPE_CHECKING

import msgspec

from oneiros.events import DreamTrigger
from oneiros.fsm._gates import Check, cycles_since, hhmm, local_day_start, seconds, window_start, zone
from oneiros.fsm._schedule_state import ScheduleState
from oneiros.fsm._urgency import Intensity, Signals, dream_intensity, dream_urgency

if TYPE_CHECKING:  # config imports the workers, which import fsm: a runtime import would be circular
    from oneiros.config import ScheduleSettings

__all__ = ["Decision", "should_dream"]

_NO_SIGNALS = Signals()


class Decision(msgspec.Struct, frozen=True, kw_only=True):
    """Whether to dream now, which trigger fired, and every check with the values it compared."""

    dream: bool
    trigger: DreamTrigger | None = None
    checks: tuple[Check, ...] = ()
    urgency: float = 0.0
    """The effective urgency: the fresh score or the carried one, whichever is higher."""
    threshold: float = 0.0
    carried_urgency: float = 0.0
    """What urgency carries into the next tick (Bardo 001_*: decays by 0.1 while blocked)."""
    deep: bool = False
    intensity: Intensity | None = None

    @property
    def blocked_by(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.checks if not c.passed)

    def reasons(self) -> tuple[str, ...]:
        return tuple(c.reason() for c in self.checks)

    def check(self, name: str) -> Check | None:
        return next((c for c in self.checks if c.name == name), None)


def _ge(passed: bool) -> str:
    return ">=" if passed else "<"


def _preconditions(settings: ScheduleSettings, state: ScheduleState, sig: Signals) -> list[Check]:
    pre = settings.preconditions
    phase = state.behavioral_phase
    need = int(pre.first_dream_episodes.of(phase))
    episodes_ok = state.episodes >= need
    credit_ok = sig.credit_remaining >= pre.min_credit
    terminal_ok = not (pre.block_terminal and phase == "terminal")
    permit_ok = not (pre.block_on_permit and sig.permit_pending)
    cease = settings.intensity.cease_below_hours
    life_ok = sig.projected_life_hours >= cease
    return [
        Check("episodes", episodes_ok, f"{state.episodes} {_ge(episodes_ok)} {need} for a {phase} golem"),
        Check("credit", credit_ok, f"{sig.credit_remaining:.0%} {_ge(credit_ok)} {pre.min_credit:.0%} of LLM credit left"),
        Check("not_terminal", terminal_ok, f"behavioral phase {phase}"),
        Check("no_permit", permit_ok, "an ActionPermit is pending" if sig.permit_pending else "no ActionPermit pending"),
        Check("economic_clock", life_ok, f"{sig.projected_life_hours:g} h {_ge(life_ok)} {cease:g} h of projected life"),
    ]


def _gates(settings: ScheduleSettings, state: ScheduleState, now: datetime, local: datetime) -> tuple[list[Check], float]:
    idle_since = state.last_activity or state.created_at or now
    silence = (now - idle_since).total_seconds()
    silence_ok = silence >= settings.silence_seconds
    since_dream = (now - state.last_dream_end).total_seconds() if state.last_dream_end else math.inf
    cooldown_ok = since_dream >= settings.cooldown_seconds
    hour_ok = local.hour in settings.dream_hours
    cap = settings.max_per_day
    today = cycles_since(state.recent_starts, local_day_start(local)) if cap else 0
    cap_ok = not cap or today < cap
    held = len(state.held)
    pending_ok = not (settings.require_no_pending_messages and held)
    since_text = f"{seconds(since_dream)} since the last cycle" if since_dream != math.inf else "no cycle yet"
    return [
        Check("enabled", settings.enabled, f"schedule.enabled = {str(settings.enabled).lower()}"),
        Check("silence", silence_ok, f"{seconds(silence)} {_ge(silence_ok)} {seconds(settings.silence_seconds)} idle"),
        Check("cooldown", cooldown_ok, f"{since_text} {_ge(cooldown_ok)} {seconds(settings.cooldown_seconds)}"),
        Check("circadian", hour_ok, f"local hour {local.hour:02d} ({settings.timezone}) {'in' if hour_ok else 'not in'} {_hours(settings.dream_hours)}"),
        Check("daily_cap", cap_ok, f"{today} cycles today {'<' if cap_ok else '>='} {cap}" if cap else "no daily cap"),
        Check("no_pending_messages", pending_ok, f"{held} held messages"),
    ], since_dream


def _hours(hours: tuple[int, ...]) -> str:
    if hours and list(hours) == list(range(hours[0], hours[-1] + 1)):
        return f"{hours[0]}-{hours[-1]}"
    return ",".join(map(str, hours)) or "no hours"


def _window(settings: ScheduleSettings, state: ScheduleState, now: datetime) -> Check:
    cap = int(settings.max_cycles_per_window.of(state.behavioral_phase))
    for window in settings.windows:
        opened = window_start(now, window.start, window.end, window.timezone)
        if opened is not None:
            done = cycles_since(state.recent_starts, opened)
            ok = done < cap
            return Check("window", ok, f"inside {window.start}-{window.end} {window.timezone}, {done} of {cap} cycles run")
    names = ", ".join(f"{w.start}-{w.end} {w.timezone}" for w in settings.windows)
    return Check("window", False, f"outside {names}")


def should_dream(
    settings: ScheduleSettings,
    state: ScheduleState,
    now: datetime,
    *,
    tick: int = 0,
    tick_seconds: float = 60.0,
    signals: Signals | None = None,
) -> Decision:
    """Decide whether ``state``'s golem dreams at ``now`` (aware), on heartbeat ``tick``."""
    if state.mode != "Waking":
        return Decision(dream=False, checks=(Check("awake", False, f"mode is {state.mode}"),), carried_urgency=state.carried_urgency)
    sig = signals or _NO_SIGNALS
    phase = state.behavioral_phase
    local = now.astimezone(zone(settings.timezone))
    pre = _preconditions(settings, state, sig)
    pre_ok = all(c.passed for c in pre)
    gates, since_dream = _gates(settings, state, now, local)
    enabled, silence, cooldown, circadian, cap, pending = (c.passed for c in gates)
    soft_ok = enabled and silence and cooldown and cap and pending
    checks = [*pre, *gates]
    fired: DreamTrigger | None = None

    if state.directive is not None:
        checks.append(Check("directive", True, f"owner: {state.directive}"))
        fired = fired or ("owner" if pre_ok else None)
    fatigue = settings.fatigue
    if fatigue.enabled:
        tired = state.actions >= fatigue.limit_actions
        checks.append(Check("fatigue", tired, f"{state.actions} actions {_ge(tired)} {fatigue.limit_actions}"))
        fired = fired or ("fatigue" if tired and enabled and pre_ok else None)
    if settings.mode != "autonomous" and settings.windows:
        window = _window(settings, state, now)
        checks.append(window)
        fired = fired or ("window" if window.passed and soft_ok and pre_ok else None)
    daily = settings.daily
    if daily.enabled:
        day_start = local_day_start(local)
        due = local.hour * 60 + local.minute >= hhmm(daily.start_time)
        done = cycles_since(state.recent_starts, day_start, "daily")
        ok = due and not done
        text = f"local {local:%H:%M} {'>=' if due else '<'} {daily.start_time}, {done} daily cycles today"
        checks.append(Check("daily", ok, text))
        fired = fired or ("daily" if ok and soft_ok and circadian and pre_ok else None)
    voluntary = settings.voluntary
    if voluntary.enabled and state.sleep_request is not None:
        long_enough = state.sleep_request >= voluntary.min_seconds
        rested = since_dream >= voluntary.min_since_last_dream_seconds
        since_text = seconds(since_dream) if since_dream != math.inf else "no dream yet"
        text = (
            f"sleep {seconds(state.sleep_request)} {_ge(long_enough)} {seconds(voluntary.min_seconds)}, "
            f"{since_text} since the last dream {_ge(rested)} {seconds(voluntary.min_since_last_dream_seconds)}"
        )
        checks.append(Check("voluntary", long_enough and rested, text))
        fired = fired or ("voluntary" if long_enough and rested and enabled and pre_ok else None)

    urgency = threshold = 0.0
    wants_urgency = False
    if settings.mode != "owner":
        u = settings.urgency
        origin = state.last_dream_end or state.created_at or now
        raw = dream_urgency(
            u,
            phase,
            novelty=sig.recent_surprise if sig.recent_surprise is not None else state.mean_surprise(),
            unreplayed_episodes=state.unreplayed,
            emotional=sig.unresolved_arousal if sig.unresolved_arousal is not None else state.mean_arousal(),
            threat=sig.recent_losses if sig.recent_losses is not None else state.loss_rate(),
            prediction_accuracy=sig.prediction_accuracy if sig.prediction_accuracy is not None else state.prediction_accuracy(),
            ticks_since_last_dream=(now - origin).total_seconds() / tick_seconds,
        )
        urgency = max(raw, state.carried_urgency)
        adapting = sig.adapting or phase in u.adapting_phases
        threshold = u.adapting_threshold if adapting else u.threshold
        wants_urgency = urgency >= threshold
        carried = " (carried)" if state.carried_urgency > raw else ""
        checks.append(Check("urgency", wants_urgency, f"{urgency:.2f}{carried} {_ge(wants_urgency)} {threshold:.2f}"))
        fired = fired or ("urgency" if wants_urgency and soft_ok and circadian and pre_ok else None)
    interval = settings.interval
    if interval.enabled:
        every = interval.every_ticks
        if sig.projected_life_hours < settings.intensity.double_rate_below_hours:
            every = max(1, every // 2)  # Bardo 001_*: under 72 h of life, twice the dream frequency
        due = tick > 0 and tick % every == 0
        checks.append(Check("interval", due, f"tick {tick} {'is' if due else 'is not'} a multiple of {every}"))
        fired = fired or ("interval" if due and soft_ok and circadian and pre_ok else None)
    if settings.idle_trigger:
        fired = fired or ("idle" if soft_ok and circadian and pre_ok else None)

    dream = fired is not None
    if dream:
        carry = 0.0
    elif wants_urgency:
        carry = max(0.0, urgency - settings.urgency.decay_per_tick)
    else:
        carry = max(0.0, state.carried_urgency - settings.urgency.decay_per_tick)
    intensity = None
    if dream:
        accuracy = sig.prediction_accuracy if sig.prediction_accuracy is not None else state.prediction_accuracy()
        intensity = dream_intensity(
            settings.intensity,
            fitness=sig.epistemic_fitness if sig.epistemic_fitness is not None else accuracy,
            accuracy=accuracy,
            life_hours=sig.projected_life_hours,
            hayflick=sig.hayflick_ratio,
        )
    every_deep = settings.deep_sleep_every
    return Decision(
        dream=dream,
        trigger=fired,
        checks=tuple(checks),
        urgency=round(urgency, 6),
        threshold=threshold,
        carried_urgency=round(carry, 6),
        deep=dream and every_deep > 0 and (state.cycles_started + 1) % every_deep == 0,
        intensity=intensity,
    )

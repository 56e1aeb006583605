"""``should_dream``: every trigger and gate of the source documents, in one pure evaluation.

Three kinds of check, in this order of precedence:

* **hard preconditions** (Bardo): enough episodes, LLM credit >= 15%, not Terminal, no
  pending ActionPermit, and the economic clock not in its last hours. Every trigger obeys them.
* **gates**: the master switch, silence (Bumblebee, Ethos idle), cooldown, circadian
  hours, the daily cap and no pending messages (Ethos). The owner directive, forced fatigue and
  voluntary sleep skip them; a sleep window skips the silence, cooldown and circadian gates, since
  inside a window "the window is the permission" (Bardo, ``window_is_permission``).
* **triggers**, first that fires wins: owner directive, fatigue (OpenSeed), sleep window,
  daily start time (Dense-Mem), voluntary sleep (OpenSeed), urgency (Bardo), the tick
  interval (Bardo [CORE]) and idle (Bumblebee, Ethos).

The function reads no clock and writes nothing: the caller passes ``now`` and records the decision.
"""

from __future__ import annotations

import math
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

import msgspec

from oneiros._text import counted
from oneiros.events._types import BardoTrigger, DreamTrigger
from oneiros.scheduling._gates import Check, cycles_since, hhmm, local_day_start, seconds, window_start, zone
from oneiros.scheduling._schedule_state import ScheduleState
from oneiros.scheduling._urgency import Intensity, Pressures, Signals, dream_intensity, urgency_terms

if TYPE_CHECKING:  # config imports the workers, which import fsm: a runtime import would be circular
    from oneiros.settings._scheduling import ScheduleSettings

__all__ = ["Decision", "should_dream"]

_NO_SIGNALS = Signals()


class Decision(msgspec.Struct, frozen=True, kw_only=True):
    """Whether to dream now, which trigger fired, and every check with the values it compared."""

    dream: bool
    trigger: DreamTrigger | None = None
    bardo_trigger: BardoTrigger | None = None
    """The fired trigger in Bardo's event contract (``ScheduleSettings.bardo_triggers``)."""
    checks: tuple[Check, ...] = ()
    urgency: float = 0.0
    """The effective urgency: the fresh score or the carried one, whichever is higher."""
    threshold: float = 0.0
    carried_urgency: float = 0.0
    """What urgency carries into the next tick (Bardo: decays by 0.1 while blocked)."""
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


def _lt(passed: bool) -> str:
    return "<" if passed else ">="


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
        Check(
            "credit", credit_ok, f"{sig.credit_remaining:.0%} {_ge(credit_ok)} {pre.min_credit:.0%} of LLM credit left"
        ),
        Check("not_terminal", terminal_ok, f"behavioral phase {phase}"),
        Check(
            "no_permit", permit_ok, "an ActionPermit is pending" if sig.permit_pending else "no ActionPermit pending"
        ),
        Check(
            "economic_clock", life_ok, f"{sig.projected_life_hours:g} h {_ge(life_ok)} {cease:g} h of projected life"
        ),
    ]


def _gates(
    settings: ScheduleSettings, state: ScheduleState, now: datetime, local: datetime
) -> tuple[list[Check], float]:
    # A dream restarts the idle clock: an idle golem dreams once per stretch of silence_seconds,
    # not on every tick once the first stretch has passed (Ethos has no cooldown of its own).
    marks = [t for t in (state.last_activity, state.last_dream_end) if t is not None]
    idle_since = max(marks) if marks else (state.created_at or now)
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
    inside, hours = "in" if hour_ok else "not in", _hours(settings.dream_hours)
    since_text = f"{seconds(since_dream)} since the last cycle" if since_dream != math.inf else "no cycle yet"
    return [
        Check("enabled", settings.enabled, f"schedule.enabled = {str(settings.enabled).lower()}"),
        Check("silence", silence_ok, f"{seconds(silence)} {_ge(silence_ok)} {seconds(settings.silence_seconds)} idle"),
        Check("cooldown", cooldown_ok, f"{since_text} {_ge(cooldown_ok)} {seconds(settings.cooldown_seconds)}"),
        Check("circadian", hour_ok, f"local hour {local.hour:02d} ({settings.timezone}) {inside} {hours}"),
        Check("daily_cap", cap_ok, f"{counted(today, 'cycle')} today {_lt(cap_ok)} {cap}" if cap else "no daily cap"),
        Check("no_pending_messages", pending_ok, counted(held, "held message")),
    ], since_dream


@lru_cache(maxsize=64)
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
            return Check(
                "window",
                ok,
                f"inside {window.start}-{window.end} {window.timezone}, {done} of {counted(cap, 'cycle')} run",
            )
    names = ", ".join(f"{w.start}-{w.end} {w.timezone}" for w in settings.windows)
    return Check("window", False, f"outside {names}")


class _When(NamedTuple):
    """When an evaluation is: the instant, on the schedule's clock, the seconds since the last dream,
    and the heartbeat's tick."""

    now: datetime
    local: datetime
    since_dream: float
    tick: int


class _Eval:
    """One evaluation's inputs, and one method per trigger. Each returns its check and whether it
    fires once the gates it obeys are counted (the hard preconditions are applied by the caller)."""

    __slots__ = (
        "circadian",
        "enabled",
        "local",
        "now",
        "settings",
        "sig",
        "since_dream",
        "soft_ok",
        "state",
        "tick",
        "window_ok",
    )

    def __init__(
        self, settings: ScheduleSettings, state: ScheduleState, sig: Signals, when: _When, gates: list[Check]
    ) -> None:
        self.settings, self.state, self.sig = settings, state, sig
        self.now, self.local, self.since_dream, self.tick = when
        enabled, silence, cooldown, circadian, cap, pending = (c.passed for c in gates)
        self.enabled, self.circadian = enabled, circadian
        self.soft_ok = enabled and silence and cooldown and cap and pending
        # Inside a sleep window the window is the permission (Bardo): silence and cooldown
        # do not hold it back; the daily cap and held messages still do.
        self.window_ok = enabled and cap and pending

    def directive(self) -> tuple[Check, bool] | None:
        if self.state.directive is None:
            return None
        return Check("directive", True, f"owner: {self.state.directive}"), True

    def fatigue(self) -> tuple[Check, bool] | None:
        fatigue = self.settings.fatigue
        if not fatigue.enabled:
            return None
        tired = self.state.actions >= fatigue.limit_actions
        return Check("fatigue", tired, f"{self.state.actions} actions {_ge(tired)} {fatigue.limit_actions}"), (
            tired and self.enabled
        )

    def window(self) -> tuple[Check, bool] | None:
        if self.settings.mode == "autonomous" or not self.settings.windows:
            return None
        check = _window(self.settings, self.state, self.now)
        permitted = self.window_ok if self.settings.window_is_permission else self.soft_ok
        return check, check.passed and permitted

    def daily(self) -> tuple[Check, bool] | None:
        daily, local = self.settings.daily, self.local
        if not daily.enabled:
            return None
        due = local.hour * 60 + local.minute >= hhmm(daily.start_time)
        done = cycles_since(self.state.recent_starts, local_day_start(local), "daily")
        clock = f"{local.hour:02d}:{local.minute:02d}"
        text = f"local {clock} {'>=' if due else '<'} {daily.start_time}, {done} daily cycles today"
        ok = due and not done
        return Check("daily", ok, text), ok and self.soft_ok and self.circadian

    def voluntary(self) -> tuple[Check, bool] | None:
        voluntary, request = self.settings.voluntary, self.state.sleep_request
        if not voluntary.enabled or request is None:
            return None
        long_enough = request >= voluntary.min_seconds
        rested = self.since_dream >= voluntary.min_since_last_dream_seconds
        since = seconds(self.since_dream) if self.since_dream != math.inf else "no dream yet"
        text = (
            f"sleep {seconds(request)} {_ge(long_enough)} {seconds(voluntary.min_seconds)}, "
            f"{since} since the last dream {_ge(rested)} {seconds(voluntary.min_since_last_dream_seconds)}"
        )
        ok = long_enough and rested
        return Check("voluntary", ok, text), ok and self.enabled

    def interval(self) -> tuple[Check, bool] | None:
        interval = self.settings.interval
        if not interval.enabled:
            return None
        every = interval.every_ticks
        if self.sig.projected_life_hours < self.settings.intensity.double_rate_below_hours:
            every = max(1, every // 2)  # Bardo: under 72 h of life, twice the dream frequency
        due = self.tick > 0 and self.tick % every == 0
        check = Check("interval", due, f"tick {self.tick} {'is' if due else 'is not'} a multiple of {every}")
        return check, due and self.soft_ok and self.circadian

    def accuracy(self) -> float:
        given = self.sig.prediction_accuracy
        return given if given is not None else self.state.prediction_accuracy()

    def urgency(self, tick_seconds: float) -> tuple[Check, float, float, bool, dict[str, float]] | None:
        """The urgency check, score, threshold, whether it wants a dream, and its weighted terms."""
        if self.settings.mode == "owner":
            return None
        u, state, sig = self.settings.urgency, self.state, self.sig
        origin = state.last_dream_end or state.created_at or self.now
        pressures = Pressures(
            novelty=sig.recent_surprise if sig.recent_surprise is not None else state.mean_surprise(),
            unreplayed_episodes=state.unreplayed,
            emotional=sig.unresolved_arousal if sig.unresolved_arousal is not None else state.mean_arousal(),
            threat=sig.recent_losses if sig.recent_losses is not None else state.loss_rate(),
            prediction_accuracy=self.accuracy(),
            ticks_since_last_dream=(self.now - origin).total_seconds() / tick_seconds,
        )
        terms = urgency_terms(u, state.behavioral_phase, pressures)
        if state.micro_urgency:
            terms["micro_consolidation"] = state.micro_urgency  # Bardo: +0.02 a pass, unresolved
        raw = min(1.0, max(0.0, sum(terms.values())))
        urgency = max(raw, state.carried_urgency)
        adapting = sig.adapting or state.behavioral_phase in u.adapting_phases
        threshold = u.adapting_threshold if adapting else u.threshold
        wants = urgency >= threshold
        carried = " (carried)" if state.carried_urgency > raw else ""
        check = Check("urgency", wants, f"{urgency:.2f}{carried} {_ge(wants)} {threshold:.2f}")
        return check, urgency, threshold, wants, terms


def should_dream(  # noqa: PLR0913 - the heartbeat's tick and its length, and optional signals, keyword-only
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
        awake = Check("awake", False, f"mode is {state.mode}")
        return Decision(dream=False, checks=(awake,), carried_urgency=state.carried_urgency)
    sig = signals or _NO_SIGNALS
    local = now.astimezone(zone(settings.timezone))
    pre = _preconditions(settings, state, sig)
    pre_ok = all(c.passed for c in pre)
    gates, since_dream = _gates(settings, state, now, local)
    ev = _Eval(settings, state, sig, _When(now, local, since_dream, tick), gates)
    checks = [*pre, *gates]
    fired: DreamTrigger | None = None
    ordered: tuple[tuple[DreamTrigger, tuple[Check, bool] | None], ...] = (
        ("owner", ev.directive()),
        ("fatigue", ev.fatigue()),
        ("window", ev.window()),
        ("daily", ev.daily()),
        ("voluntary", ev.voluntary()),
    )
    for trigger, result in ordered:
        if result is not None:
            checks.append(result[0])
            if fired is None and result[1] and pre_ok:
                fired = trigger
    urgency = threshold = 0.0
    wants_urgency = False
    terms: dict[str, float] = {}
    scored = ev.urgency(tick_seconds)
    if scored is not None:
        check, urgency, threshold, wants_urgency, terms = scored
        checks.append(check)
        if fired is None and wants_urgency and ev.soft_ok and ev.circadian and pre_ok:
            fired = "urgency"
    late = ev.interval()
    if late is not None:
        checks.append(late[0])
        fired = fired or ("interval" if late[1] and pre_ok else None)
    if settings.idle_trigger and fired is None and ev.soft_ok and ev.circadian and pre_ok:
        fired = "idle"

    if fired == "owner":
        urgency = 1.0  # Bardo: the directive goes through the gate "with an implicit score of 1.0"
    dream = fired is not None
    decay = settings.urgency.decay_per_tick
    carry = 0.0 if dream else max(0.0, (urgency if wants_urgency else state.carried_urgency) - decay)
    intensity = None
    if dream:
        accuracy = ev.accuracy()
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
        bardo_trigger=settings.bardo_triggers.of(fired, terms) if fired is not None else None,
        checks=tuple(checks),
        urgency=round(urgency, 6),
        threshold=threshold,
        carried_urgency=round(carry, 6),
        deep=dream and every_deep > 0 and (state.cycles_started + 1) % every_deep == 0,
        intensity=intensity,
    )

"""The generator a phase sees: budgeted, recorded, and read back from the log on a re-run.

Before a call it appends a BudgetReserved of the call's worst case (when every cap holds it);
after the call it appends the GenerationRecorded (or GenerationFailed) that settles it. A call the
log already answered, for the same ``call_key`` and the same request hash, is read back and never
made again, so re-runs and replay make no model call; a changed request is asked again. The first
refused call appends BudgetExhausted and ends the phase's generation.

A response is never kept beyond its reservation: text past ``max_tokens`` worth of bytes is cut,
usage and cost are clamped to the worst case reserved, and a BudgetOverrun records what the server
claimed and ends the phase's generation at once.
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from oneiros._errors import GenerationError
from oneiros.events._content import BudgetExhausted, BudgetOverrun, BudgetReserved, GenerationFailed
from oneiros.events._types import DreamPhaseName, Event, GenerationRecorded
from oneiros.fsm._golem import GolemState
from oneiros.fsm._service import Golems
from oneiros.generators._protocol import (
    Generation,
    GenerationRequest,
    Generator,
    RequestShape,
    request_hash,
    request_shape,
)
from oneiros.runtime._budget import BudgetGuard, Charge, Ledger, worst_case_tokens
from oneiros.settings._cycle import CycleBudget, ModelPrice

__all__ = ["MeteredGenerator", "generation_of", "matches"]


class MeteredGenerator:
    """Reserves a call's worst case before making it, records every request and response, and
    reuses a response the log already holds for the same ``call_key`` and request hash."""

    def __init__(  # noqa: PLR0913 - built in one place (run_phase), from what the phase holds
        self,
        golems: Golems,
        state: GolemState,
        cycle_id: str,
        phase: DreamPhaseName,
        generator: Generator,
        *,
        budget: CycleBudget,
        guard: BudgetGuard,
        ledger: Ledger,
        recorded: dict[str, GenerationRecorded | GenerationFailed],
        exhausted: bool,
        suppressed: bool = False,
    ) -> None:
        # The golem's state, moved by every append here, so appends need not re-read the stream.
        self.golems, self.state, self.cycle_id, self.phase = golems, state, cycle_id, phase
        self.generator = generator
        self.budget, self.guard, self.ledger = budget, guard, ledger
        self.recorded = recorded
        self.is_exhausted = exhausted or suppressed
        self.spent = self.calls = self.reused = self.appended = self.failed = 0
        self.spent_usd = 0.0

    @property
    def version(self) -> int:
        return self.state.version

    def exhausted(self) -> bool:
        return self.is_exhausted

    def fits(self, request: GenerationRequest) -> bool:
        """Whether ``request`` would be answered now: recorded already, or its worst case under
        every cap. Asks nothing and records nothing, so an engine can size a step to what is left."""
        shape = request_shape(self.generator, request)
        old = self.recorded.get(request.call_key)
        if old is not None and matches(old, shape, request_hash(shape)):
            return True
        if self.is_exhausted:
            return False
        tokens_in, tokens_out = worst_case_tokens(request, self.budget.overhead_tokens, self.generator)
        usd = self.budget.price(shape.model).cost(tokens_in, tokens_out)
        return self.guard.refusal(tokens_in + tokens_out, usd) is None

    def cycle_spent(self) -> tuple[int, float]:
        total = self.ledger.spent(cycle_id=self.cycle_id)
        return total.tokens, total.usd

    def _append(self, events: list[Event]) -> datetime:
        records = self.golems.record_outputs_on(self.state, events)
        self.appended += len(records)
        return records[-1].meta.time

    def __call__(self, request: GenerationRequest) -> Generation | None:
        shape = request_shape(self.generator, request)
        digest = request_hash(shape)
        old = self.recorded.get(request.call_key)
        if old is not None and not matches(old, shape, digest):
            old = None  # the request changed since it was recorded: ask again, never reuse stale text
        if old is None:
            if self.is_exhausted:
                return None
            old = self._call(request, shape, digest)
            if old is None:
                return None
        else:
            self.reused += 1
        if isinstance(old, GenerationFailed):
            self.failed += 1
            return None
        self.spent += old.tokens_in + old.tokens_out
        self.spent_usd += old.cost_usd
        return generation_of(old)

    def _refuse(self, request: GenerationRequest, tokens: int, usd: float) -> bool:
        refusal = self.guard.refusal(tokens, usd)
        if refusal is None:
            return False
        self.is_exhausted = True
        self._append(
            [
                BudgetExhausted(
                    cycle_id=self.cycle_id,
                    phase=self.phase,
                    cap=refusal.cap,
                    call_key=request.call_key,
                    needed_tokens=tokens,
                    needed_usd=usd,
                    remaining_tokens=refusal.remaining_tokens,
                    remaining_usd=refusal.remaining_usd,
                )
            ]
        )
        return True

    def _call(
        self, request: GenerationRequest, shape: RequestShape, digest: str
    ) -> GenerationRecorded | GenerationFailed | None:
        model = shape.model
        price = self.budget.price(model)
        tokens_in, tokens_out = worst_case_tokens(request, self.budget.overhead_tokens, self.generator)
        worst_usd = price.cost(tokens_in, tokens_out)
        self.ledger.resume(request.call_key)  # an orphan of a killed run must not count twice against the caps
        if self._refuse(request, tokens_in + tokens_out, worst_usd):
            return None
        held_at = self._append(
            [
                BudgetReserved(
                    cycle_id=self.cycle_id,
                    phase=self.phase,
                    call_key=request.call_key,
                    model=model,
                    tokens=tokens_in + tokens_out,
                    cost_usd=worst_usd,
                )
            ]
        )
        worst = Charge(
            time=held_at, cycle_id=self.cycle_id, phase=self.phase, tokens=tokens_in + tokens_out, usd=worst_usd
        )
        self.ledger.reserve(request.call_key, worst)
        self.calls += 1
        settled: GenerationRecorded | GenerationFailed
        events: list[Event] = []
        try:
            generation = self.generator.generate(request)
        except GenerationError as exc:
            settled = GenerationFailed(
                cycle_id=self.cycle_id,
                phase=self.phase,
                call_key=request.call_key,
                model=model,
                reason=str(exc),
                request_hash=digest,
            )
        else:
            kept = _Kept(generation, shape, price, (tokens_in, tokens_out, worst_usd), self.budget)
            settled = GenerationRecorded(
                cycle_id=self.cycle_id,
                phase=request.phase,
                call_key=request.call_key,
                model=generation.model,
                prompt=request.prompt,
                temperature=shape.temperature,
                max_tokens=request.max_tokens,
                text=kept.text,
                tokens_in=kept.tokens_in,
                tokens_out=kept.tokens_out,
                cost_usd=kept.usd,
                request_hash=digest,
                requested_model=model,
                task=request.task,
                system=request.system,
            )
            if kept.overrun is not None:
                events.append(kept.overrun_event(self.cycle_id, self.phase, request.call_key, model))
                self.is_exhausted = True  # a server that lies once is not asked again in this phase
        self._append([settled, *events])
        spent = settled.tokens_in + settled.tokens_out
        self.ledger.settle(request.call_key, msgspec.structs.replace(worst, tokens=spent, usd=settled.cost_usd))
        self.recorded[request.call_key] = settled
        return settled


def generation_of(old: GenerationRecorded, overrun: BudgetOverrun | None = None) -> Generation:
    """A recorded answer as the generator gave it: what was kept, or, for a call whose server
    claimed more (``overrun``), its claims, so the budget sees the same overrun again."""
    if overrun is None:
        return Generation(
            text=old.text, model=old.model, tokens_in=old.tokens_in, tokens_out=old.tokens_out, cost_usd=old.cost_usd
        )
    return Generation(
        text=old.text,
        model=old.model,
        tokens_in=overrun.reported_tokens_in,
        tokens_out=overrun.reported_tokens_out,
        cost_usd=overrun.reported_usd,
        text_bytes=overrun.response_bytes,
    )


def matches(old: GenerationRecorded | GenerationFailed, shape: RequestShape, digest: str) -> bool:
    """Whether a recorded answer answers this request. Records from before request hashes
    (GenerationRecorded v1, lifted with ``request_hash=""``) match on the fields they recorded."""
    if old.request_hash:
        return old.request_hash == digest
    if isinstance(old, GenerationFailed):
        return True
    return (old.prompt, old.temperature, old.max_tokens) == (shape.prompt, shape.temperature, shape.max_tokens)


class _Kept:
    """A response cut to its call's reservation: text to ``max_tokens`` worth of bytes, usage and
    cost to the worst case reserved. ``overrun`` says why it had to be cut, if it had."""

    def __init__(
        self,
        generation: Generation,
        shape: RequestShape,
        price: ModelPrice,
        reserved: tuple[int, int, float],
        budget: CycleBudget,
    ) -> None:
        reserved_in, reserved_out, reserved_usd = reserved
        raw = generation.text.encode("utf-8", "surrogatepass")
        self.response_bytes = generation.text_bytes if generation.text_bytes is not None else len(raw)
        limit = max(0, shape.max_tokens) * budget.response_bytes_per_token
        self.text = raw[:limit].decode("utf-8", "ignore") if len(raw) > limit else generation.text
        self.kept_bytes = len(self.text.encode("utf-8", "surrogatepass"))
        self.reported = (generation.tokens_in, generation.tokens_out)
        self.reported_usd = max(generation.cost_usd, price.cost(generation.tokens_in, generation.tokens_out))
        self.reserved_tokens, self.reserved_usd = reserved_in + reserved_out, reserved_usd
        reasons = []
        if generation.tokens_in > reserved_in:
            reasons.append(f"reported {generation.tokens_in} tokens in, reserved {reserved_in}")
        if generation.tokens_out > reserved_out:
            reasons.append(f"reported {generation.tokens_out} tokens out, max_tokens is {reserved_out}")
        if self.response_bytes > limit:
            reasons.append(f"a completion of {self.response_bytes} bytes, more than max_tokens allows ({limit})")
        if self.reported_usd > reserved_usd + 1e-12:
            reasons.append(f"reported ${self.reported_usd:.6f}, reserved ${reserved_usd:.6f}")
        self.overrun = "; ".join(reasons) or None
        if self.overrun is not None:
            # A call whose server lied is charged its whole reservation: never more (the cap holds
            # whatever it claims), and not what it claimed either, which cannot be trusted.
            self.tokens_in, self.tokens_out, self.usd = reserved_in, reserved_out, reserved_usd
        else:
            # Priced as the model reserved for: servers answer with dated names the table lacks.
            self.tokens_in, self.tokens_out = generation.tokens_in, generation.tokens_out
            self.usd = min(reserved_usd, self.reported_usd)

    def overrun_event(self, cycle_id: str, phase: DreamPhaseName, call_key: str, model: str) -> BudgetOverrun:
        assert self.overrun is not None
        return BudgetOverrun(
            cycle_id=cycle_id,
            phase=phase,
            call_key=call_key,
            model=model,
            reason=self.overrun,
            reserved_tokens=self.reserved_tokens,
            reserved_usd=self.reserved_usd,
            reported_tokens_in=self.reported[0],
            reported_tokens_out=self.reported[1],
            reported_usd=self.reported_usd,
            response_bytes=self.response_bytes,
            kept_bytes=self.kept_bytes,
        )

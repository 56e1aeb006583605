"""The generator a phase sees: budgeted, recorded, and read back from the log on a re-run.

Before a call it appends a BudgetReserved of the call's worst case (when every cap holds it);
after the call it appends the GenerationRecorded (or GenerationFailed) that settles it. A call the
log already answered is read back and never made again, so re-runs and replay make no model call.
The first refused call appends BudgetExhausted and ends the phase's generation.
"""

from __future__ import annotations

from datetime import datetime

from oneiros._errors import GenerationError
from oneiros.events import BudgetExhausted, BudgetReserved, DreamPhaseName, Event, GenerationFailed, GenerationRecorded
from oneiros.fsm import Golems, GolemState
from oneiros.generators import Generation, GenerationRequest, Generator, model_of
from oneiros.settings import CycleBudget
from oneiros.workers._budget import BudgetGuard, Ledger, worst_case_tokens

__all__ = ["MeteredGenerator"]


class MeteredGenerator:
    """Reserves a call's worst case before making it, records every request and response, and
    reuses a response the log already holds for the same ``call_key``."""

    def __init__(
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
        self.spent = self.calls = self.reused = self.appended = 0

    @property
    def version(self) -> int:
        return self.state.version

    def exhausted(self) -> bool:
        return self.is_exhausted

    def cycle_spent(self) -> tuple[int, float]:
        total = self.ledger.spent(cycle_id=self.cycle_id)
        return total.tokens, total.usd

    def _append(self, events: list[Event]) -> datetime:
        records = self.golems.record_outputs_on(self.state, events)
        self.appended += len(records)
        return records[-1].meta.time

    def __call__(self, request: GenerationRequest) -> Generation | None:
        old = self.recorded.get(request.call_key)
        if old is None:
            if self.is_exhausted:
                return None
            old = self._call(request)
            if old is None:
                return None
        else:
            self.reused += 1
        if isinstance(old, GenerationFailed):
            return None
        self.spent += old.tokens_in + old.tokens_out
        return Generation(
            text=old.text, model=old.model, tokens_in=old.tokens_in, tokens_out=old.tokens_out, cost_usd=old.cost_usd
        )

    def _call(self, request: GenerationRequest) -> GenerationRecorded | GenerationFailed | None:
        model = model_of(self.generator, request)
        price = self.budget.price(model)
        tokens_in, tokens_out = worst_case_tokens(request, self.budget.overhead_tokens, self.generator)
        worst_usd = price.cost(tokens_in, tokens_out)
        refusal = self.guard.refusal(tokens_in + tokens_out, worst_usd)
        if refusal is not None:
            self.is_exhausted = True
            self._append(
                [
                    BudgetExhausted(
                        cycle_id=self.cycle_id,
                        phase=self.phase,
                        cap=refusal.cap,
                        call_key=request.call_key,
                        needed_tokens=tokens_in + tokens_out,
                        needed_usd=worst_usd,
                        remaining_tokens=refusal.remaining_tokens,
                        remaining_usd=refusal.remaining_usd,
                    )
                ]
            )
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
        self.ledger.reserve(
            request.call_key,
            time=held_at,
            cycle_id=self.cycle_id,
            phase=self.phase,
            tokens=tokens_in + tokens_out,
            usd=worst_usd,
        )
        self.calls += 1
        settled: GenerationRecorded | GenerationFailed
        try:
            generation = self.generator.generate(request)
        except GenerationError as exc:
            settled = GenerationFailed(
                cycle_id=self.cycle_id, phase=self.phase, call_key=request.call_key, model=model, reason=str(exc)
            )
        else:
            # What the provider reports is what was spent; a byte-level worst case bounds it. It is
            # priced as the model reserved for: servers answer with dated names the table lacks.
            cost = max(generation.cost_usd, price.cost(generation.tokens_in, generation.tokens_out))
            settled = GenerationRecorded(
                cycle_id=self.cycle_id,
                phase=request.phase,
                call_key=request.call_key,
                model=generation.model,
                prompt=request.prompt,
                temperature=request.temperature,
                max_tokens=request.max_tokens,
                text=generation.text,
                tokens_in=generation.tokens_in,
                tokens_out=generation.tokens_out,
                cost_usd=cost,
            )
        self._append([settled])
        self.ledger.settle(
            request.call_key,
            time=held_at,
            cycle_id=self.cycle_id,
            phase=self.phase,
            tokens=settled.tokens_in + settled.tokens_out,
            usd=settled.cost_usd,
        )
        self.recorded[request.call_key] = settled
        return settled

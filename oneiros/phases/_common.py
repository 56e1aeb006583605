"""What every engine shares: asking the generator for a typed result within the budget, and
turning episodes into prompt text."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TypeVar

import msgspec

from oneiros._deps import rng_for
from oneiros._errors import MalformedOutput
from oneiros.events._content import StepFailed
from oneiros.events._lineage import OutputSource, OutputsSourced, output_digest
from oneiros.events._types import Event
from oneiros.generators._lines import episode_line, episode_lines
from oneiros.generators._protocol import GenerationRequest, Task, TaskInputs
from oneiros.generators._results import parse_json
from oneiros.phases._context import PhaseContext

__all__ = ["Steps", "episode_line", "episode_lines", "json_parser"]

_R = TypeVar("_R")
_E = TypeVar("_E", bound=Event)


class Steps:
    """One phase's generation steps: asks for typed results, retries malformed output within the
    budget, records what stayed malformed, and notices when the budget has run out."""

    def __init__(self, ctx: PhaseContext) -> None:
        self.ctx = ctx
        self.failures: list[Event] = []
        self.last_key = ""
        """The call the last parsed result came from."""
        self._sources: list[OutputSource] = []

    def made(self, event: _E, call_key: str | None = None) -> _E:
        """``event`` was made from the result of ``call_key`` (default: the last parsed one): the
        call goes into the phase's ``OutputsSourced``. Returns ``event``."""
        key = self.last_key if call_key is None else call_key
        self._sources.append(OutputSource(output_type=event.type_name, digest=output_digest(event), call_key=key))
        return event

    def sources(self) -> dict[str, str]:
        """The call behind each output made so far in this phase, by ``output_digest``."""
        return {s.digest: s.call_key for s in self._sources}

    def closing(self) -> list[Event]:
        """What every phase ends with besides its outputs: the steps that failed, and the call
        behind each output made from one."""
        sourced: list[Event] = []
        if self._sources:
            sourced.append(
                OutputsSourced(cycle_id=self.ctx.cycle_id, phase=self.ctx.phase, sources=tuple(self._sources))
            )
        return [*self.failures, *sourced]

    @property
    def stopped(self) -> bool:
        """True once the budget refused a call: the phase ends cleanly with what it has."""
        return self.ctx.exhausted()

    def rng(self, *scope: str) -> random.Random:
        return rng_for(self.ctx.seed, self.ctx.cycle_id, self.ctx.phase, *scope)

    def request(  # noqa: PLR0913 - a generation step's shape, keyword-only, as the request names it
        self,
        key: str,
        task: Task,
        *,
        temperature: float,
        max_tokens: int,
        given: TaskInputs | None = None,
        inputs: tuple[str, ...] | None = None,
        **values: object,
    ) -> GenerationRequest:
        """The request of one step (see :meth:`ask`), as it will be sent."""
        ctx = self.ctx
        prompts = ctx.settings.prompts
        given = given if given is not None else TaskInputs()
        return GenerationRequest(
            call_key=f"{ctx.cycle_id}:{ctx.phase}:{key}",
            phase=ctx.phase,
            task=task,
            prompt=prompts.render(task, **(given.stated() | values)),
            fragments=inputs if inputs is not None else tuple(e.said() for e in given.episodes),
            temperature=temperature,
            max_tokens=max_tokens,
            system=prompts.system,
            tier=ctx.tier,
            given=given,
        )

    def fits(self, request: GenerationRequest) -> bool:
        """Whether the budget would take ``request`` now (or the log already answered it)."""
        return self.ctx.fits(request)

    def ask(  # noqa: PLR0913 - a generation step's shape, keyword-only, as the request names it
        self,
        key: str,
        task: Task,
        parse: Callable[[str, str], _R],
        *,
        temperature: float,
        max_tokens: int,
        given: TaskInputs | None = None,
        inputs: tuple[str, ...] | None = None,
        **values: object,
    ) -> _R | None:
        """The parsed result of one step, or None if the budget, the generator or the parser said no.

        ``given`` is what the step works from as data (its episodes and figures; the figures also
        fill the prompt template), ``inputs`` the raw texts (the request's ``fragments``: by default
        the episodes' summaries), ``values`` the rest of the template: the episodes as prompt lines.
        """
        request = self.request(
            key, task, temperature=temperature, max_tokens=max_tokens, given=given, inputs=inputs, **values
        )
        return self.ask_request(request, parse)

    def ask_request(self, request: GenerationRequest, parse: Callable[[str, str], _R]) -> _R | None:
        """:meth:`ask` for a request already made with :meth:`request`."""
        ctx = self.ctx
        keys: list[str] = []
        reason = ""
        for attempt in range(ctx.settings.malformed_retries + 1):
            call = (
                request
                if attempt == 0
                else msgspec.structs.replace(request, call_key=f"{request.call_key}/retry{attempt}")
            )
            generation = ctx.generate(call)
            if generation is None:
                break
            keys.append(call.call_key)
            try:
                parsed = parse(call.call_key, generation.text)
            except MalformedOutput as exc:
                reason = exc.reason
            else:
                self.last_key = call.call_key
                return parsed
        if keys:
            failed = StepFailed(
                cycle_id=ctx.cycle_id, phase=ctx.phase, task=request.task, call_keys=tuple(keys), reason=reason
            )
            self.failures.append(failed)
        return None


def json_parser(task: str, result: type[_R]) -> Callable[[str, str], _R]:
    """A parser for steps whose output is one JSON object of ``result``'s shape."""

    def parse(call_key: str, text: str) -> _R:
        return parse_json(call_key, task, text, result)

    return parse

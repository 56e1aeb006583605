"""Insight and the lab: the dreaming-health alarms, a staged entry's exact lineage, and re-running,
forking and comparing recorded cycles (docs/insight.md, docs/dream-cycle.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import msgspec

from oneiros._deps import rng_for
from oneiros._errors import InputError, masked_url
from oneiros.app._concerns import use_case
from oneiros.app._core import Core
from oneiros.app._shapes import EntryLineage, Health, HealthMetrics, LogEvent
from oneiros.health._health import health_metrics, health_report
from oneiros.projections._lineage import entry_lineage
from oneiros.settings._cycle import CycleSettings, EngineSettings
from oneiros.store._store import EventStore, open_store

if TYPE_CHECKING:  # the lab loads the runtime (NumPy): on first use only
    from oneiros.lab._diff import CycleDiff
    from oneiros.lab._rerun import RerunReport

__all__ = ["Lab", "Pair", "Pairs"]


class Pair(msgspec.Struct, frozen=True, kw_only=True):
    """Two memories a dream would draw together: their ticks, their summaries, and how alike their
    vectors are (None without an embedder)."""

    first: int
    second: int
    first_summary: str
    second_summary: str
    similarity: float | None


class Pairs(msgspec.Struct, frozen=True, kw_only=True):
    """The distant memory pairs a dream would draw now (Bumblebee's selection); ``fallback`` when
    the draw fell back to random temporal pairs."""

    fallback: bool
    pairs: list[Pair]


class Lab:
    """The use cases of insight and the lab."""

    def __init__(self, core: Core) -> None:
        self.core = core

    # -- insight ------------------------------------------------------------------------------

    def health(self, golem_id: str | None = None, *, metrics: bool = True) -> list[Health]:
        """The dreaming health of ``golem_id`` (every golem's if None): the alarms raised now, and
        every one raised and cleared, with ``metrics`` what the health process holds of each (the
        cycles, the empty run, cycles and cost since a promotion, the hit rate)."""
        if golem_id is not None and not self.core.store.stream_version(golem_id):
            # Else a mistyped golem showed a healthy row, and a monitoring check passed it every time.
            raise self.core.unknown(golem_id)
        process = self.core.health_process() if self.core.catch_up or metrics or golem_id is None else None
        names = [golem_id] if golem_id is not None else sorted(process.golems if process is not None else ())
        out: list[Health] = []
        for name in names:
            report = health_report(self.core.store, name)
            known = process.golems.get(name) if process is not None else None
            out.append(
                Health(
                    golem_id=name,
                    metrics=HealthMetrics(**health_metrics(known)) if known is not None and metrics else None,
                    alarms=list(report.alarms),
                    history=[LogEvent(**row) for row in report.history],
                )
            )
        return out

    def lineage(self, entry_id: str, golem_id: str | None = None) -> EntryLineage:
        """Where a staged entry came from, exactly: its source episodes, the output and generator
        call it came from, the prompt template, model, tokens and cost, and every move since."""
        if self.core.catch_up:
            self.core.health_process()
        if golem_id is not None and not self.core.store.stream_version(golem_id):
            raise self.core.unknown(golem_id)
        return entry_lineage(self.core.store, entry_id, golem_id)

    @use_case(golem="created")
    def pairs(self, golem_id: str, *, seed: int = 0, embedder: Literal["hashing", "none"] = "hashing") -> Pairs:
        """The distant memory pairs a dream of ``golem_id`` would draw now, with seed ``seed``."""
        import numpy as np  # noqa: PLC0415 - NumPy, on first use

        from oneiros.episodes._vectors import make_embedder  # noqa: PLC0415
        from oneiros.phases._pairs import select_distant_pairs  # noqa: PLC0415

        # The fold a cycle reads (from the latest snapshot), embedding only the memories drawn.
        memory = self.core.logs().read(golem_id).memory
        episodes = memory.columns()
        vectors = memory.vectors(make_embedder(embedder), embedder)
        rng = np.random.default_rng(rng_for(seed, golem_id, "pairs").getrandbits(64))
        draw = select_distant_pairs(episodes.seconds, episodes.significance, vectors, EngineSettings().rem.pairs, rng)

        def similarity(a: int, b: int) -> float | None:
            if vectors is None:
                return None
            if isinstance(vectors, np.ndarray):
                return round(float(vectors[a] @ vectors[b]), 4)
            return round(float(vectors.row(a) @ vectors.row(b)), 4)

        return Pairs(
            fallback=draw.fallback,
            pairs=[
                Pair(
                    first=episodes[a].tick,
                    second=episodes[b].tick,
                    first_summary=episodes[a].said(),
                    second_summary=episodes[b].said(),
                    similarity=similarity(a, b),
                )
                for a, b in draw.pairs
            ],
        )

    # -- the lab ------------------------------------------------------------------------------

    def rerun(self, cycle_id: str, settings: CycleSettings | None = None, *, seed: int = 0) -> RerunReport:
        """Re-execute a past cycle from its starting position in a scratch copy, every generator
        response read from the log (no model is called, the live golem is never written): identical,
        or exactly where and why it diverges. Without ``settings`` it runs with those it recorded."""
        from oneiros.generators._factory import make_generator  # noqa: PLC0415
        from oneiros.lab._rerun import rerun_cycle  # noqa: PLC0415

        # Never called: it only says which model and temperature each request goes out with.
        shape_of = make_generator(settings.generator, seed=seed, env={}) if settings is not None else None
        return rerun_cycle(self.core.store, cycle_id, settings, shape_of=shape_of, seed=seed)

    def fork(self, cycle_id: str, into: str, settings: CycleSettings, *, seed: int = 0) -> RerunReport:
        """Re-run a cycle with other ``settings`` in the new, empty branch store ``into``: recorded
        answers are reused where the request is unchanged, the model is called only where it
        differs, and this store is only read."""
        from oneiros.generators._factory import check_api_key, make_generator  # noqa: PLC0415
        from oneiros.lab._rerun import fork_cycle  # noqa: PLC0415

        # Else every changed call records a fallback: a fork that looks done and compares nothing.
        check_api_key(settings.generator, "fork")
        live = make_generator(settings.generator, seed=seed)
        branch = open_store(into)
        try:
            _check_branch(self.core.store, branch)
            return fork_cycle(self.core.store, cycle_id, settings, generator=live, into=branch, seed=seed)
        finally:
            branch.close()

    def diff(self, a: str, b: str, *, other: EventStore | None = None) -> CycleDiff:
        """Two cycles side by side (``b`` in ``other``, a fork's branch, if given): what each
        produced that the other did not, and quality, tokens, cost, calls and models."""
        from oneiros.lab._diff import diff_cycles, summarize_cycle  # noqa: PLC0415

        return diff_cycles(summarize_cycle(self.core.store, a), summarize_cycle(other or self.core.store, b))


def _check_branch(live: EventStore, branch: EventStore) -> None:
    """InputError unless ``branch`` is a store other than ``live`` with no event yet, saying which."""
    if branch.url == live.url and not branch.url.startswith("memory:"):
        raise InputError(f"--into {masked_url(branch.url)} is the live store; name a new, empty store for the branch")
    if branch.head():
        raise InputError(
            f"the branch store {masked_url(branch.url)} already holds events (an earlier fork?); "
            "name a new, empty store"
        )

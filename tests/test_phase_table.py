"""One table of phases: the machine, the engines, the budget shares and the docs reference all read
it, so a sixth phase is one table entry plus its engine, passed in (no registry)."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oneiros import ConfigError, Deps, FixedClock, Golems, InProcessExecutor, Observers, SequentialIds, open_store
from oneiros import replay as replay_log
from oneiros.episodes._episodes import load_episodes, sample_episodes_path
from oneiros.events._types import DreamInsight, DreamPhase, Event, GenerationRecorded
from oneiros.fsm._machine import MACHINE, Machine
from oneiros.generators._protocol import GenerationRequest
from oneiros.phases._context import PhaseContext
from oneiros.phases._engines import ENGINES
from oneiros.settings._cycle import CycleSettings
from oneiros.settings._phases import PHASES, PhaseSpec, PhaseTable
from oneiros.settings._scheduling import PhaseValues
from oneiros.settings._vocabulary import BEHAVIORAL_PHASES

_REM = PHASES.spec("rem")
LUCID = PhaseSpec(
    name="lucid",
    state="Lucid",
    stream="lucid",
    label="Lucid",
    description="Notices it is dreaming and asks the dream what it knows.",
    shares=PhaseValues(**dict.fromkeys(BEHAVIORAL_PHASES, 0.05)),
)
# The sixth phase, between REM and integration; REM gives it 5 points of its share, so each
# behavioral phase's shares still add up to the whole cycle.
SIX = PhaseTable(
    (
        *PHASES.phases[:2],
        msgspec.structs.replace(
            _REM, shares=PhaseValues(**{b: round(_REM.shares.of(b) - 0.05, 2) for b in BEHAVIORAL_PHASES})
        ),
        LUCID,
        *PHASES.phases[3:],
    )
)


def lucid(ctx: PhaseContext) -> list[Event]:
    """The sixth phase's engine: one budgeted generator call, one insight."""
    request = GenerationRequest(
        call_key=f"{ctx.cycle_id}:lucid:0", phase=ctx.phase, task="insight", prompt="What did the dream know?"
    )
    answer = ctx.generate(request)
    return [DreamInsight(cycle_id=ctx.cycle_id, insight=(answer.text if answer else "") or "nothing")]


def _golems(phases: PhaseTable = SIX) -> Golems:
    store = open_store("memory://")
    deps = Deps(clock=FixedClock(datetime(2026, 11, 3, 2, tzinfo=UTC)), ids=SequentialIds("six"), seed=3)
    golems = Golems(store, deps=deps, phases=phases, observers=Observers(phases))
    golems.create("g1")
    golems.record_episodes("g1", load_episodes(sample_episodes_path())[:40])
    return golems


def test_a_sixth_phase_is_one_table_entry_plus_its_engine() -> None:
    """A cycle of a table with a sixth phase runs through it in the table's order: the machine
    advances REM to Lucid to Integration, each phase enters with its share of the cycle's tokens
    (the sixth phase's from its own entry), its generator call is metered as that phase's,
    observers see the golem enter it, DreamComplete and the wake follow, and replaying the log
    gives the same state."""
    golems = _golems()
    entered: list[str] = []
    golems.observers.on_enter("lucid", lambda t: entered.append(t.state))

    result = InProcessExecutor(golems, engines={**ENGINES, "lucid": lucid}).run_cycle("g1")

    assert (None, None) == (result.interrupted, result.empty)
    assert result.complete is not None
    assert list(SIX.names) == [p.phase for p in result.phases]
    history = [r.event for r in golems.history("g1")]
    behavioral, cycle_tokens = golems.state("g1").behavioral_phase, CycleSettings().budget.tokens()
    assert [(p.name, p.state, int(cycle_tokens * p.shares.of(behavioral))) for p in SIX] == [
        (e.phase, e.bardo_phase, e.budget_tokens) for e in history if isinstance(e, DreamPhase)
    ]
    assert 600 == next(e.budget_tokens for e in history if isinstance(e, DreamPhase) and e.phase == "lucid")
    assert ["lucid"] == [
        e.phase for e in history if isinstance(e, GenerationRecorded) and e.call_key.endswith(":lucid:0")
    ]
    assert ["Dreaming_Lucid"] == entered
    assert "Waking" == golems.state("g1").machine_state
    assert golems.state("g1") == replay_log(golems.store)["g1"]


def test_the_machine_follows_the_table() -> None:
    """The sixth phase is a child of Dreaming between REM and Integration: advance leads into it and
    out of it, complete stays on integration and wake on the return."""
    machine = Machine(SIX)
    assert ["Dreaming_NREM", "Dreaming_REM", "Dreaming_Lucid", "Dreaming_Integration"] == [
        machine.destination(machine.phase_state(p), "advance") for p in ("hypnagogic_onset", "nrem", "rem", "lucid")
    ]
    assert ("lucid", "integration") == (machine.next_phase("rem"), machine.next_phase("lucid"))
    assert None is machine.destination("Dreaming_Lucid", "complete")
    assert "Dreaming_HypnopompicReturn" == machine.destination("Dreaming_Integration", "complete")
    assert "Dreaming_Lucid" in machine.states
    assert "Dreaming_Lucid" not in MACHINE.states


def test_the_docs_reference_follows_the_table() -> None:
    """The reference page is the table rendered (tests/test_docs.py checks the built site has the
    canonical one): a table with a sixth phase lists it in its place, with its label and shares,
    and the shares REM gave it."""
    rows = [line for line in SIX.reference().splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert ["hypnagogic_onset", "nrem", "rem", "lucid", "integration", "hypnopompic_return"] == [
        row.split(" | ")[1].strip("`") for row in rows
    ]
    assert (
        "| 4 | `lucid` | `Dreaming_Lucid` | `lucid` | Lucid | Notices it is dreaming and asks the dream what it knows. "
        "| 5% | 5% | 5% | 5% | 5% |"
    ) == rows[3]
    assert "| 3 | `rem` | `Dreaming_REM` | `rem` | REM |" in rows[2]
    assert rows[2].endswith("| 25% | 25% | 15% | 11% | 7% |")


def test_a_table_without_its_engine_is_refused_before_the_cycle() -> None:
    """An executor given a table whose phase has no engine refuses in one line and writes nothing."""
    golems = _golems()
    head = golems.store.head()
    with pytest.raises(ConfigError) as refused:
        InProcessExecutor(golems)
    assert "no engine for phase 'lucid'; pass one in engines" == str(refused.value)
    assert head == golems.store.head()


def test_a_table_that_promises_more_than_the_cycle_is_refused() -> None:
    """Adding a phase without taking its share from another would promise more than the whole
    cycle: the table refuses it, naming the behavioral phase and the total."""
    with pytest.raises(ConfigError) as refused:
        PhaseTable((*PHASES.phases[:3], LUCID, *PHASES.phases[3:]))
    assert "the phases' thriving shares add up to 1.05; at most 1 (the whole cycle)" == str(refused.value)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"name": "Lucid Dream"},
         "phase name 'Lucid Dream' must be lower-case letters, digits and _, starting with a letter, at most 64"),
        ({"state": "lucid"}, "phase state 'lucid' must be letters and digits, starting with a letter, at most 64"),
        ({"name": "rem"}, "phase name 'rem' appears twice in the phase table"),
        ({"stream": "onset"}, "phase stream 'onset' appears twice in the phase table"),
        ({"shares": PhaseValues(**dict.fromkeys(BEHAVIORAL_PHASES, -0.1))},
         "phase 'lucid' has share -0.1; a share is between 0 and 1"),
    ],
)  # fmt: skip
def test_a_bad_table_is_refused_in_one_line(change: dict[str, object], message: str) -> None:
    """Names that events cannot carry, a name or stream name twice, a share outside 0-1:
    each is refused when the table is made, in one line naming it."""
    bad = msgspec.structs.replace(LUCID, **change)
    with pytest.raises(ConfigError) as refused:
        PhaseTable((*SIX.phases[:3], bad, *SIX.phases[4:]))
    assert message == str(refused.value)


_NAMES = st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True)


@settings(max_examples=60, deadline=None)
@given(st.lists(_NAMES, min_size=2, max_size=8, unique=True))
def test_any_table_gives_a_machine_that_runs_its_phases_in_order(names: list[str]) -> None:
    """For any table of two or more phases, fall_asleep enters the first, advance and complete
    visit every phase once in the table's order, complete is legal only in the one before the last
    and wake only in the last."""
    table = PhaseTable(
        tuple(
            PhaseSpec(
                name=n,
                state=n.capitalize(),
                stream=n,
                label=n,
                description="",
                shares=PhaseValues(**dict.fromkeys(BEHAVIORAL_PHASES, 1 / len(names) - 1e-12)),
            )
            for n in names
        )
    )
    machine = Machine(table)
    assert machine.phase_state(names[0]) == machine.destination("Waking", "fall_asleep")
    order = [names[0]]
    while (following := machine.next_phase(order[-1])) is not None:
        order.append(following)
    assert names == order
    completes = [n for n in names if machine.destination(machine.phase_state(n), "complete") is not None]
    wakes = [n for n in names if machine.destination(machine.phase_state(n), "wake") is not None]
    assert ([names[-2]], [names[-1]]) == (completes, wakes)

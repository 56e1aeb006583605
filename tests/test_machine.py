"""The GolemMode/DreamPhase machine: legal moves, typed refusals, and replay equal to live state."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oneiros import Deps, FixedClock, Golems, IllegalCommand, OneirosError, SequentialIds, open_store, replay
from oneiros.events._types import DreamHypothesis, Episode, ReplayBatch
from oneiros.fsm._machine import MACHINE_STATES, destination, transition_path

LEGAL = [
    ("Waking", "fall_asleep", "Dreaming_HypnagogicOnset"),
    ("Dreaming_HypnagogicOnset", "advance", "Dreaming_NREM"),
    ("Dreaming_NREM", "advance", "Dreaming_REM"),
    ("Dreaming_REM", "advance", "Dreaming_Integration"),
    ("Dreaming_Integration", "complete", "Dreaming_HypnopompicReturn"),
    ("Dreaming_HypnopompicReturn", "wake", "Waking"),
    ("Dreaming_REM", "interrupt", "Waking"),
    ("Dreaming_NREM", "die", "Dying"),
    ("Waking", "die", "Dying"),
    ("Waking", "record_episode", "Waking"),
    ("Dreaming_REM", "record", "Dreaming_REM"),
    ("Dreaming_NREM", "record_output", "Dreaming_NREM"),
]
ILLEGAL = [
    ("Waking", "advance"),
    ("Waking", "wake"),
    ("Waking", "interrupt"),
    ("Waking", "record_output"),
    ("Dreaming_NREM", "fall_asleep"),
    ("Dreaming_Integration", "advance"),
    ("Dreaming_REM", "complete"),
    ("Dreaming_REM", "wake"),
    ("Dying", "fall_asleep"),
    ("Dying", "die"),
    ("Dying", "record_episode"),
    ("Dying", "record"),
]


@pytest.mark.parametrize(("state", "trigger", "dest"), LEGAL)
def test_legal_moves(state: str, trigger: str, dest: str) -> None:
    """Each legal trigger leads where the Bardo state diagram says."""
    assert dest == destination(state, trigger)


@pytest.mark.parametrize(("state", "trigger"), ILLEGAL)
def test_illegal_moves(state: str, trigger: str) -> None:
    """Triggers the machine does not allow in a state have no destination."""
    assert destination(state, trigger) is None


def test_hierarchy_paths() -> None:
    """Leaving a dream exits the phase then Dreaming; falling asleep enters Dreaming then the onset phase."""
    assert (["Dreaming_HypnopompicReturn", "Dreaming"], ["Waking"]) == transition_path(
        "Dreaming_HypnopompicReturn", "Waking"
    )
    assert (["Waking"], ["Dreaming", "Dreaming_HypnagogicOnset"]) == transition_path(
        "Waking", "Dreaming_HypnagogicOnset"
    )
    assert (["Dreaming_NREM"], ["Dreaming_REM"]) == transition_path("Dreaming_NREM", "Dreaming_REM")
    assert 8 == len(MACHINE_STATES)


def _golems() -> Golems:
    deps = Deps(clock=FixedClock(datetime(2026, 3, 1, tzinfo=UTC)), ids=SequentialIds("t"))
    return Golems(open_store("memory://"), deps=deps)


def test_an_illegal_command_names_state_and_trigger_and_appends_nothing() -> None:
    """Waking a golem that is awake raises IllegalCommand with typed attributes; the log is unchanged."""
    golems = _golems()
    golems.create("g1")
    head = golems.store.head()
    with pytest.raises(IllegalCommand) as caught:
        golems.wake("g1")
    assert ("g1", "Waking", "wake") == (caught.value.golem_id, caught.value.state, caught.value.trigger)
    assert "golem 'g1' cannot 'wake' in state 'Waking'" == str(caught.value)
    assert head == golems.store.head()


def test_outputs_must_belong_to_the_current_cycle() -> None:
    """A dream output tagged with another cycle's id is refused."""
    golems = _golems()
    golems.create("g1")
    golems.fall_asleep("g1", "owner", budget_tokens=10, cycle_id="c1")
    with pytest.raises(IllegalCommand) as caught:
        golems.record_outputs("g1", [DreamHypothesis(cycle_id="c0", hypothesis="h", seed_episode_tick=1)])
    assert (
        "golem 'g1' cannot 'record_output' in state 'Dreaming_HypnagogicOnset': "
        "output for cycle 'c0', current cycle is 'c1'"
    ) == str(caught.value)


def test_death_during_a_dream_ends_the_cycle_interrupted_and_keeps_its_outputs() -> None:
    """Dying mid-REM records the interruption with its phase; the hypothesis made before stays in the log."""
    golems = _golems()
    golems.create("g1")
    golems.record_episodes("g1", [Episode(tick=1, summary="s")])
    golems.fall_asleep("g1", "owner", budget_tokens=10, cycle_id="c1")
    golems.advance("g1", budget_tokens=10, outputs=[ReplayBatch(cycle_id="c1", episode_ticks=(1,), pattern="p")])
    golems.advance("g1", budget_tokens=10)
    golems.record_outputs("g1", [DreamHypothesis(cycle_id="c1", hypothesis="h", seed_episode_tick=1)])
    golems.die("g1", "credit exhausted")
    state = golems.state("g1")
    assert ("Dying", 1, 0) == (state.mode, state.cycles_interrupted, state.cycles_completed)
    types = [r.event.type_name for r in golems.history("g1")][-3:]
    assert ["DreamHypothesis", "DreamInterrupted", "ModeChanged"] == types
    interrupted = golems.history("g1")[-2].event
    assert ("death", "rem", "credit exhausted") == (interrupted.source, interrupted.phase, interrupted.reason)
    with pytest.raises(IllegalCommand):
        golems.fall_asleep("g1", "owner", budget_tokens=10)


COMMANDS = st.sampled_from(["create", "episode", "sleep", "advance", "complete", "wake", "interrupt", "die", "output"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["g1", "g2"]), COMMANDS), max_size=40))
def test_any_command_sequence_replays_to_the_live_state(  # noqa: PLR0912 - one branch per command
    commands: list[tuple[str, str]],
) -> None:
    """Whatever commands are tried, legal or not: illegal ones append nothing, and replaying the log
    (whole, or per stream) gives exactly the states the live service reached."""
    golems = _golems()
    for golem_id, command in commands:
        head = golems.store.head()
        try:
            if command == "create":
                golems.create(golem_id)
            elif command == "episode":
                golems.record_episodes(golem_id, [Episode(tick=head, summary=f"episode {head}")])
            elif command == "sleep":
                golems.fall_asleep(golem_id, "window", budget_tokens=100)
            elif command == "advance":
                golems.advance(golem_id, budget_tokens=50)
            elif command == "complete":
                golems.complete(golem_id, budget_tokens=5)
            elif command == "wake":
                golems.wake(golem_id)
            elif command == "interrupt":
                golems.interrupt(golem_id, "owner", "needed")
            elif command == "die":
                golems.die(golem_id)
            else:
                state = golems.state(golem_id)
                golems.record_outputs(
                    golem_id, [DreamHypothesis(cycle_id=state.cycle_id or "none", hypothesis="h", seed_episode_tick=0)]
                )
        except OneirosError:
            assert head == golems.store.head()
    rebuilt = replay(golems.store)
    for golem_id, state in rebuilt.items():
        assert golems.state(golem_id) == state
    # As of any earlier position too: the per-stream fold and the global replay agree.
    head = golems.store.head()
    for until in range(0, head + 1, max(1, head // 5)):
        partial = replay(golems.store, until=until)
        for golem_id, state in partial.items():
            assert state == golems.state(golem_id, until=until)


@pytest.mark.parametrize("phases", ["canonical", "six"])
def test_destination_agrees_with_running_the_declared_machine(phases: str) -> None:
    """For every state a golem can be in and every trigger, the declaration gives what running
    transitions does: for the canonical machine and for one with a sixth phase."""
    from transitions.core import MachineError
    from transitions.extensions import HierarchicalMachine

    from oneiros.fsm._machine import MACHINE, Machine
    from tests.test_phase_table import SIX

    machine = MACHINE if phases == "canonical" else Machine(SIX)
    declared_states, declared_transitions = machine.declaration

    class Model:
        state = "Waking"

    for state in machine.states:
        for trigger in machine.triggers:
            model = Model()
            HierarchicalMachine(
                model=model,
                states=declared_states,
                transitions=declared_transitions,
                initial=state,
                auto_transitions=False,
            )
            if model.state != state:  # a compound state (Dreaming) is never rested in: it enters its child
                continue
            try:
                ran = getattr(model, trigger)()
            except MachineError:
                ran = False
            expected = model.state if ran else None
            assert (state, trigger, expected) == (state, trigger, machine.destination(state, trigger))


def test_the_phase_order_is_the_machines() -> None:
    """Following ``next_phase`` from Dreaming's initial child visits every dream phase once, in order."""
    from oneiros.fsm._machine import destination, next_phase
    from oneiros.settings._phases import PHASES

    first = destination("Waking", "fall_asleep")
    assert "Dreaming_HypnagogicOnset" == first
    order = ["hypnagogic_onset"]
    while (following := next_phase(order[-1])) is not None:
        order.append(following)
    assert list(PHASES.names) == order

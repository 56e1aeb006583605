"""The public surface is deliberate: these names are what users may import."""

from __future__ import annotations

import importlib
import re

import pytest

PUBLIC = {
    "oneiros": [
        "ConfigError", "CorruptEvent", "CycleResult", "CycleSettings", "Deps", "Episode", "EpisodeFileError",
        "EventError", "EventStore", "FixedClock", "GolemError", "GolemExists", "GolemNotFound", "GolemState",
        "Golems", "IllegalCommand", "InProcessExecutor", "InputError", "InvalidStoreURL", "Observers",
        "InvalidSetting", "UnknownPreset",
        "OfflineGenerator", "OneirosError", "Outcome", "Recorded", "SequentialIds", "StoreError", "StreamConflict",
        "UnknownEventType", "load_episodes", "open_store", "replay",
        # issue 4: projections, staging and review
        "EntryNotFound", "IllegalReview", "ProjectionConflict", "ProjectionError", "StagingError",
        "UnknownProjection",
        # issue 13: the server
        "AccessError", "CycleNotFound", "Forbidden", "Unauthenticated",
    ],
    "oneiros.fsm": [
        "MACHINE_STATES", "TRIGGERS", "CycleCounts", "GolemState", "Golems", "Observers", "Transition",
        "cycle_outputs", "destination", "fold", "follow_log", "phase_state", "register_cycle_output", "replay",
        "transition_path",
        "Check", "Decision", "Intensity", "ScheduleState", "Signals", "clock_urgency", "dream_intensity",
        "dream_urgency", "fold_schedule", "should_dream",
    ],
}  # fmt: skip


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_public_names_are_pinned(module: str) -> None:
    """A name added to or dropped from a public ``__all__`` must be a deliberate change here too."""
    assert sorted(PUBLIC[module]) == sorted(importlib.import_module(module).__all__)


@pytest.mark.parametrize(
    "module",
    [
        "oneiros",
        "oneiros.events",
        "oneiros.fsm",
        "oneiros.workers",
        "oneiros.generators",
        "oneiros.memory",
        "oneiros.engines",
        "oneiros.projections",
    ],
)
def test_every_exported_name_exists(module: str) -> None:
    """Everything in ``__all__`` imports."""
    mod = importlib.import_module(module)
    for name in mod.__all__:
        assert hasattr(mod, name), name


def test_every_error_derives_from_the_root() -> None:
    """Every exception class oneiros exports is an OneirosError."""
    import oneiros

    errors = [
        getattr(oneiros, n)
        for n in oneiros.__all__
        if n.endswith(("Error", "Conflict", "Exists", "NotFound", "Command", "URL", "Event", "Type"))
    ]
    errors = [e for e in errors if isinstance(e, type) and issubclass(e, Exception)]
    assert len(errors) >= 14
    assert all(issubclass(e, oneiros.OneirosError) for e in errors)


def test_the_documented_error_tree_names_every_error() -> None:
    """docs/errors.md and the tree in oneiros/_errors.py list every OneirosError subclass there is."""
    from pathlib import Path

    import oneiros
    from oneiros import _errors

    def subclasses(cls: type) -> set[type]:
        found = set(cls.__subclasses__())
        for sub in list(found):
            found |= subclasses(sub)
        return found

    names = {cls.__name__ for cls in subclasses(oneiros.OneirosError)}
    docs = (Path(__file__).parent.parent / "docs" / "errors.md").read_text()
    tree = _errors.__doc__ or ""
    assert set() == {n for n in names if not re.search(rf"── {n}\b", docs)}
    assert set() == {n for n in names if not re.search(rf"── {n}\b", tree)}

"""Read models built from the log: the dream journal, the staging buffer, and the output sinks; the
runner that keeps them exactly-once and rebuildable on eventsourcing's tracking recorders and
subscriptions.

Read models only: what appends events (the validation sweep, review decisions) is
:mod:`oneiros.validation`. The golem states themselves are rebuilt by :func:`oneiros.fsm.replay`.
"""

from oneiros.projections._db import ProjectionDB, default_projection_url, open_projection_db
from oneiros.projections._follow import LogConsumer, follow_log
from oneiros.projections._journal import JournalEntry, JournalProjection, JournalSettings, journal_markdown
from oneiros.projections._runner import Projection, ProjectionRunner, Rows, RunnerSettings, wait_for
from oneiros.projections._service import Projections, ProjectionSettings, VerifyResult, make_projections
from oneiros.projections._sinks import (
    Belief,
    MemoryVersion,
    Observation,
    SinkSettings,
    memory_diff,
    memory_version,
    write_memory_file,
)
from oneiros.projections._staging import ACTIVE, STAGING_EVENTS, StagedEntry, StagingProjection, apply_staging_event

__all__ = [
    "ACTIVE",
    "STAGING_EVENTS",
    "Belief",
    "JournalEntry",
    "JournalProjection",
    "JournalSettings",
    "LogConsumer",
    "MemoryVersion",
    "Observation",
    "Projection",
    "ProjectionDB",
    "ProjectionRunner",
    "ProjectionSettings",
    "Projections",
    "Rows",
    "RunnerSettings",
    "SinkSettings",
    "StagedEntry",
    "StagingProjection",
    "VerifyResult",
    "apply_staging_event",
    "default_projection_url",
    "follow_log",
    "journal_markdown",
    "make_projections",
    "memory_diff",
    "memory_version",
    "open_projection_db",
    "wait_for",
    "write_memory_file",
]

"""Read models built from the log: the dream journal, the staging buffer, and the output sinks; the
runner that keeps them exactly-once and rebuildable on eventsourcing's tracking recorders and
subscriptions.

Read models only: what appends events (the validation sweep, review decisions) is
:mod:`oneiros.validation`. The golem states themselves are rebuilt by :func:`oneiros.fsm.replay`.
"""

from oneiros.projections._db import ProjectionDB, default_projection_url, open_projection_db
from oneiros.projections._follow import LogConsumer, follow_log
from oneiros.projections._golems import GolemsProjection
from oneiros.projections._index import (
    PENDING,
    GolemIndex,
    entry_golem,
    golem_dreams,
    golem_runs,
    journal_entries,
    journal_entry,
    pending_count,
    staged_entries,
    staged_entry,
)
from oneiros.projections._journal import (
    JournalEntry,
    JournalProjection,
    JournalSettings,
    dream_reports,
    journal_markdown,
)
from oneiros.projections._lineage import (
    ConfidenceMove,
    EntryLineage,
    GenerationLink,
    PromptTemplate,
    entry_lineage,
    find_entry,
)
from oneiros.projections._recall import RecallIndex, RecallItem, RecallResult, RecallSettings, recall
from oneiros.projections._runner import (
    BatchingProjection,
    Projection,
    ProjectionRunner,
    Rows,
    RunnerSettings,
    TallyingProjection,
    wait_for,
)
from oneiros.projections._schedule import ScheduleProjection
from oneiros.projections._service import Projections, ProjectionSettings, VerifyResult, make_projections
from oneiros.projections._sinks import (
    Belief,
    MemoryVersion,
    NoiseFragment,
    Observation,
    SinkSettings,
    beliefs,
    memory_diff,
    memory_version,
    memory_versions,
    noise_fragments,
    observations,
    write_memory_file,
)
from oneiros.projections._staging import ACTIVE, STAGING_EVENTS, StagedEntry, StagingProjection, apply_staging_event

__all__ = [
    "ACTIVE",
    "PENDING",
    "STAGING_EVENTS",
    "BatchingProjection",
    "Belief",
    "ConfidenceMove",
    "EntryLineage",
    "GenerationLink",
    "GolemIndex",
    "GolemsProjection",
    "JournalEntry",
    "JournalProjection",
    "JournalSettings",
    "LogConsumer",
    "MemoryVersion",
    "NoiseFragment",
    "Observation",
    "Projection",
    "ProjectionDB",
    "ProjectionRunner",
    "ProjectionSettings",
    "Projections",
    "PromptTemplate",
    "RecallIndex",
    "RecallItem",
    "RecallResult",
    "RecallSettings",
    "Rows",
    "RunnerSettings",
    "ScheduleProjection",
    "SinkSettings",
    "StagedEntry",
    "StagingProjection",
    "TallyingProjection",
    "VerifyResult",
    "apply_staging_event",
    "beliefs",
    "default_projection_url",
    "dream_reports",
    "entry_golem",
    "entry_lineage",
    "find_entry",
    "follow_log",
    "golem_dreams",
    "golem_runs",
    "journal_entries",
    "journal_entry",
    "journal_markdown",
    "make_projections",
    "memory_diff",
    "memory_version",
    "memory_versions",
    "noise_fragments",
    "observations",
    "open_projection_db",
    "pending_count",
    "recall",
    "staged_entries",
    "staged_entry",
    "wait_for",
    "write_memory_file",
]

"""Read models built from the log: the dream journal, the staging buffer and its validation sweep,
review, and the output sinks; the runner that keeps them exactly-once and rebuildable.

The golem states themselves are rebuilt by :func:`oneiros.fsm.replay`.
"""

from oneiros.projections._db import ProjectionDB, default_projection_url, open_projection_db
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
from oneiros.projections._recall import RecallIndex, RecallItem, RecallResult, RecallSettings, recall, record_recall
from oneiros.projections._review import Feedback, OutcomeInput, register_episode_removal
from oneiros.projections._runner import LogWaiter, Projection, ProjectionRunner, Rows, RunnerSettings
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
from oneiros.projections._staging import (
    ACTIVE,
    StagedEntry,
    StagedOutput,
    StagingProjection,
    StagingSettings,
    register_staged_output,
)
from oneiros.projections._validation import REVIEW_MOVES, StagingProcess, matches, review_status

__all__ = [
    "ACTIVE",
    "PENDING",
    "REVIEW_MOVES",
    "Belief",
    "Feedback",
    "GolemIndex",
    "GolemsProjection",
    "JournalEntry",
    "JournalProjection",
    "JournalSettings",
    "LogWaiter",
    "MemoryVersion",
    "NoiseFragment",
    "Observation",
    "OutcomeInput",
    "Projection",
    "ProjectionDB",
    "ProjectionRunner",
    "ProjectionSettings",
    "Projections",
    "RecallIndex",
    "RecallItem",
    "RecallResult",
    "RecallSettings",
    "Rows",
    "RunnerSettings",
    "SinkSettings",
    "StagedEntry",
    "StagedOutput",
    "StagingProcess",
    "StagingProjection",
    "StagingSettings",
    "VerifyResult",
    "beliefs",
    "default_projection_url",
    "dream_reports",
    "entry_golem",
    "golem_dreams",
    "golem_runs",
    "journal_entries",
    "journal_entry",
    "journal_markdown",
    "make_projections",
    "matches",
    "memory_diff",
    "memory_version",
    "memory_versions",
    "noise_fragments",
    "observations",
    "open_projection_db",
    "pending_count",
    "recall",
    "record_recall",
    "register_episode_removal",
    "register_staged_output",
    "review_status",
    "staged_entries",
    "staged_entry",
    "write_memory_file",
]

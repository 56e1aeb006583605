"""The validation sweep that promotes or refutes staged hypotheses against later outcomes, and
review decisions.

Everything here appends events: the staging process admits dream outputs to the buffer and moves
them on waking outcomes (Bardo 001_*); :class:`Feedback` records outcomes, review decisions
(Dense-Mem 002_*), re-evaluation and MEMORY.md rollbacks. The read models of what they decide
(the ``staging`` projection, the journal, the sinks) are in :mod:`oneiros.projections`.
"""

from oneiros.validation._health import GolemHealth, HealthProcess, HealthReport, health_metrics, health_report
from oneiros.validation._recall_policy import RecallScore, RecallStats, recall_score
from oneiros.validation._recalls import record_recall
from oneiros.validation._review import Feedback, OutcomeInput, episode_removals, register_episode_removal
from oneiros.validation._service import follow, update
from oneiros.validation._staged import StagedOutput, StagingSettings, register_staged_output, staged_outputs
from oneiros.validation._sweep import REVIEW_MOVES, StagingProcess, matches, review_status
from oneiros.validation._trust import instruction_flags, quarantine_for

__all__ = [
    "REVIEW_MOVES",
    "Feedback",
    "GolemHealth",
    "HealthProcess",
    "HealthReport",
    "OutcomeInput",
    "RecallScore",
    "RecallStats",
    "StagedOutput",
    "StagingProcess",
    "StagingSettings",
    "episode_removals",
    "follow",
    "health_metrics",
    "health_report",
    "instruction_flags",
    "matches",
    "quarantine_for",
    "recall_score",
    "record_recall",
    "register_episode_removal",
    "register_staged_output",
    "review_status",
    "staged_outputs",
    "update",
]

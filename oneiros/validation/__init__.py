"""The validation sweep that promotes or refutes staged hypotheses against later outcomes, and review
decisions."""

from oneiros.validation._recall_policy import RecallScore, RecallStats, recall_score
from oneiros.validation._recalls import record_recall
from oneiros.validation._review import Feedback, OutcomeInput, removed_ticks
from oneiros.validation._staged import StagedOutput, StagingSettings, staged_output
from oneiros.validation._sweep import REVIEW_MOVES, StagingProcess, matches, review_status
from oneiros.validation._trust import instruction_flags, quarantine_for

__all__ = [
    "REVIEW_MOVES",
    "Feedback",
    "OutcomeInput",
    "RecallScore",
    "RecallStats",
    "StagedOutput",
    "StagingProcess",
    "StagingSettings",
    "instruction_flags",
    "matches",
    "quarantine_for",
    "recall_score",
    "record_recall",
    "removed_ticks",
    "review_status",
    "staged_output",
]

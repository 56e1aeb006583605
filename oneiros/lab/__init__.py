"""The dream lab: re-run, fork and diff recorded cycles, and the offline A/B of a recorded timeline."""

from oneiros.lab._ab import ABReport, Arm, ArmReport, TimelineStep, load_timeline, run_ab, run_arm
from oneiros.lab._diff import CycleDiff, CycleSummary, diff_cycles, summarize_cycle
from oneiros.lab._rerun import Divergence, RecordedGenerator, RerunReport, fork_cycle, rerun_cycle

__all__ = [
    "ABReport",
    "Arm",
    "ArmReport",
    "CycleDiff",
    "CycleSummary",
    "Divergence",
    "RecordedGenerator",
    "RerunReport",
    "TimelineStep",
    "diff_cycles",
    "fork_cycle",
    "load_timeline",
    "rerun_cycle",
    "run_ab",
    "run_arm",
    "summarize_cycle",
]

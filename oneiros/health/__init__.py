"""Dreaming health: the process that raises and clears alarms after each cycle and decision, and reports."""

from oneiros.health._health import GolemHealth, HealthProcess, HealthReport, health_metrics, health_report

__all__ = [
    "GolemHealth",
    "HealthProcess",
    "HealthReport",
    "health_metrics",
    "health_report",
]

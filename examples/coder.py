"""The agent of the examples: a coding agent working through a day of tasks, offline and
deterministic. Each example records what it does through a different door (Python, HTTP, MCP);
this module is only the agent's side: its tasks, how it goes about them, and what happens.

A task done carefully (a canary, focused tests, asking the owner first) goes well; a risky task
done in a hurry breaks. The agent alternates, so its week has both kinds for a dream to compare.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

GOLEM = "coder"
START = datetime(2026, 10, 5, 9, 0, tzinfo=UTC)
"""Monday 09:00 UTC: the agent's day starts here, one task every 20 minutes."""
TASK_MINUTES = 20
NIGHT = START.replace(hour=3) + timedelta(days=1)
"""03:00 the next night: hours of silence, inside Bumblebee's circadian window (00-05)."""
RECALL_QUERY = "deploy canary"


class Task(NamedTuple):
    what: str
    tags: tuple[str, ...]
    risky: bool
    careful_way: str
    hurried_way: str


TASKS = (
    Task("deploy the billing service", ("deploy",), True, "behind a 5% canary", "straight to every host"),
    Task("fix the flaky login test", ("tests",), False, "running only its module", "rerunning the whole suite"),
    Task("drop the old audit table", ("data",), True, "after asking the owner", "without asking anyone"),
    Task("bump the HTTP client library", ("dependencies",), True, "with the lock file pinned", "to the latest"),
    Task("deploy the search service", ("deploy",), True, "behind a 5% canary", "straight to every host"),
    Task("rename a config key", ("config",), True, "with a fallback for the old name", "in one commit"),
    Task("review a teammate's refactor", ("review",), False, "line by line", "skimming the diff"),
    Task("deploy the billing service again", ("deploy",), True, "behind a 5% canary", "straight to every host"),
)


def act(tick: int, task: Task, careful: bool) -> dict[str, Any]:
    """Do ``task`` (simulated) and return what happened as an episode (the JSON an agent records)."""
    ok = careful or not task.risky
    way = task.careful_way if careful else task.hurried_way
    result = "it went cleanly" if ok else "it broke and had to be rolled back"
    return {
        "tick": tick,
        "time": (START + timedelta(minutes=TASK_MINUTES * (tick - 1))).isoformat(),
        "summary": f"Had to {task.what}; did it {way}, and {result}",
        "tags": [*task.tags, "careful" if careful else "hurried"],
        "regime": "routine" if ok else "incident",
        "significance": 0.5 if ok else 0.9,
        "arousal": 0.2 if ok else 0.8,
        "outcome": {"pnl": 0.03 if ok else -0.05, "surprise": 0.2 if ok else 0.7},
        "prediction_error": 0.1 if ok else 0.6,
    }


def work_day(rounds: int = 2) -> list[dict[str, Any]]:
    """The day's episodes in order: every task ``rounds`` times, careful on every other one."""
    todo = [task for _ in range(rounds) for task in TASKS]
    return [act(tick, task, careful=tick % 2 == 0) for tick, task in enumerate(todo, start=1)]


def next_morning_outcome(tick: int) -> dict[str, Any]:
    """The next morning's deploy, done the way the dreams proposed: with a canary, cleanly."""
    return {
        "tick": tick,
        "verdict": "confirms",
        "summary": "deployed the billing service behind a canary; it went cleanly",
        "tags": ["deploy", "careful"],
    }

"""What ``oneiros --help`` lists, declared once: each top-level command's name, the module that
registers it, and its one-line summary, in the order the help shows them.

The root group (:mod:`oneiros.cli._app`) lists commands from this table and imports a command's
module only when that command runs or shows its own help, and ``oneiros --help`` renders it before
Typer is imported at all (:mod:`oneiros.cli._help`). ``tests/test_cli_startup.py`` holds the table to
the commands the modules register and to each one's help, so a new command is a new row here.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["COMMANDS", "GOLEM_RULE", "ROOT_HELP", "ROOT_OPTIONS", "Listed"]


class Listed(NamedTuple):
    """One top-level command: its name, the module of this package that registers it, its summary."""

    name: str
    module: str
    summary: str


# One rule for which golem a command covers (README, "Using it"): --golem names one golem for any
# command. Without it, a command that lists (status, events, journal, staging, replay, health)
# covers every golem, each row naming its own, and every other command works on the config's golem.
GOLEM_RULE = (
    "--golem G confines any command to golem G. Without it, a command that lists (status, events, "
    "journal, staging, replay, health) shows every golem, each row naming its own; every other "
    "command works on the config's golem (oneiros.toml's `golem`, $ONEIROS_GOLEM, else 'golem')."
)
ROOT_HELP = f"An event-sourced dream state for autonomous agents. {GOLEM_RULE}"
ROOT_OPTIONS = (("--version", "Print the version and exit."), ("--help", "Show this message and exit."))

COMMANDS = tuple(
    Listed(*row)
    for row in [
        ("dream", "_commands", "Run one dream cycle now, or hand it to `oneiros worker` when a queue is configured."),
        ("replay", "_commands", "Rebuild every golem's state (or --golem's) from the log, with no side effects."),
        ("events", "_commands", "List the log (the first --limit events after --after)."),
        (
            "status",
            "_commands",
            "Each golem's mode, phase and stream version (or --golem's), the log's global position, and the "
            "cycles under way with their phase, the worker running it and their age.",
        ),
        (
            "report",
            "_content",
            "The DreamReport and wake-up summary of a golem's latest (or a given) cycle; --cycle alone names its "
            "golem.",
        ),
        (
            "budget",
            "_content",
            "What dreaming has spent against each cap, as of the golem's latest event: the caps its last cycle "
            "ran with (recorded in its DreamStart), or with --config, or before any cycle, the config's "
            "(oneiros.toml, ONEIROS_*); --tier shows those caps at another tier (a cap someone set holds there; "
            "the ones the tier gave follow it).",
        ),
        ("pairs", "_content", "The distant memory pairs a dream would draw now (Bumblebee's selection)."),
        (
            "import",
            "_import",
            "Record a conversation as episodes: every turn with its speaker, time and own id (LoCoMo's D3:12, a "
            "message's id, a session event's uuid), checked whole before anything is written; run again, it "
            "records only the turns the golem does not have yet.",
        ),
        (
            "health",
            "_insight",
            "Each golem's dreaming health (or --golem's): cycles that staged nothing, cycles without a promotion,"
            " the validation hit rate, cost without yield and budget overruns, with the alarms raised now.",
        ),
        (
            "lineage",
            "_insight",
            "Where a staged entry came from, exactly: its source episodes, the output and the generator call "
            "(call key and request hash) it came from, the prompt template and its version, the model, tokens and"
            " cost, and every move: its quarantine, each outcome or review that moved its confidence, each recall"
            " that returned it, and how it was promoted (sweep, review or recalls).",
        ),
        (
            "ab",
            "_insight",
            "Offline A/B: replay a recorded timeline twice, each arm in its own throwaway store (arm a: dreaming "
            "with this directory's config; arm b: not dreaming), and compare insights promoted, their precision, "
            "the sweep's hit rate, tokens and cost.",
        ),
        (
            "rerun",
            "_lab",
            "Re-execute past cycles from their starting position in a scratch copy, every generator response read"
            " from the log (no model is called, the live golem is never written), and say whether each is "
            "identical or exactly where and why it diverges. Exit 1 if any diverges.",
        ),
        (
            "fork",
            "_lab",
            "Re-run CYCLE with another model, prompts or settings in the branch store --into: recorded answers "
            "are reused where the request is unchanged, the model is called only where it differs, and the live "
            "store is only read. Then compare with `oneiros diff CYCLE CYCLE --other INTO`.",
        ),
        (
            "diff",
            "_lab",
            "Two cycles side by side: hypotheses, counterfactuals and staged entries only one has, and quality, "
            "tokens, cost, calls and models where they differ.",
        ),
        (
            "journal",
            "_projections",
            "One entry per dream cycle (the latest --limit): phases, counts, cost, duration and quality.",
        ),
        (
            "staging",
            "_projections",
            "The staging buffer (the first --limit entries): every dream output with its confidence, status and "
            "criterion.",
        ),
        (
            "outcome",
            "_projections",
            "Record a waking outcome and run the validation sweep on it: it moves the active entries it is "
            "relevant to (staging.min_relevance).",
        ),
        (
            "review",
            "_projections",
            "Decide on a staged entry (Dense-Mem's feedback decisions), or revoke a promoted one: MEMORY.md's "
            "next version drops its line, with who and why kept in its history.",
        ),
        (
            "reevaluate",
            "_projections",
            "Dense-Mem's re_evaluate: stale entries whose source episodes are gone, reinforce intact ones.",
        ),
        (
            "follow",
            "_projections",
            "Keep the staging and health processes and every projection up with the log until interrupted.",
        ),
        (
            "rebuild",
            "_projections",
            "Drop a projection (or all) and build it again from the log, to the head or as of a position.",
        ),
        (
            "memory",
            "_projections",
            "MEMORY.md as dream promotions wrote it (Ethos): the newest version, a diff, a file, a rollback; or "
            "the observations page: the facts dreams drew from the episodes; or the user's profile.",
        ),
        (
            "recall",
            "_recall",
            "What a golem knows that matches QUERY, in recall's one ranking: results and related dreams "
            "(hypotheses), with the turns each stands for and when. Records no recall; --json is the REST "
            "answer's shape.",
        ),
        ("recover", "_recover", "Find golems dreaming in a phase that nothing runs, and resume it or end the cycle."),
        (
            "interrupt",
            "_recover",
            "End the golem's dream cycle now, interrupted by its owner with --reason (kept in the log).",
        ),
        (
            "run",
            "_schedule",
            "Run the heartbeat daemon: record activity, decide each tick, dream when the config says.",
        ),
        (
            "should-dream",
            "_schedule",
            "Explain whether a golem would dream now: every gate and trigger with its values.",
        ),
        (
            "serve",
            "_server",
            "Serve the REST API (/api/v1), live events (/api/v1/events), MCP (/mcp) and /openapi.json.",
        ),
        ("mcp", "_server", "Serve the MCP tools over stdio, for a local agent that launches this command itself."),
        ("worker", "_workers", "Run RQ workers that execute dream phases from the queue."),
        (
            "trace",
            "_workers",
            "Draw one cycle's spans, across every worker that ran it, with durations, tokens and cost.",
        ),
        ("eval", "_eval", "Measure what dreaming changes in recall, on a benchmark or your own transcripts."),
        ("golem", "_golem", "Create a golem (every other command takes only one that exists)."),
        ("config", "_schedule", "The effective configuration."),
        ("token", "_server", "Bearer tokens of `oneiros serve`, kept hashed in server.tokens_file."),
    ]
)

"""Made by ``python -m oneiros.cli._help``: do not edit. The top-level help as the app registers it."""

# ruff: noqa: E501

from oneiros.cli._help import HelpIndex

# fmt: off
INDEX = HelpIndex(
    digest='49a09a082e4c194cb612daf37aa04be7',
    usage='oneiros [OPTIONS] COMMAND [ARGS]...',
    text='An event-sourced dream state for autonomous agents.',
    options=(
        ('--version', 'Print the version and exit.'),
        ('--help', 'Show this message and exit.'),
    ),
    commands=(
        ('dream', 'Run one dream cycle now, or hand it to `oneiros worker` when a queue is configured.'),
        ('replay', "Rebuild every golem's state from the log, with no side effects."),
        ('events', 'List the log (the first --limit events after --after).'),
        ('status', "Each golem's mode, phase and stream version, the log's global position, and the cycles under way with their phase, the worker running it and their age."),
        ('report', "The DreamReport and wake-up summary of a golem's latest (or a given) cycle; --cycle alone names its golem."),
        ('budget', "What dreaming has spent against each cap, as of the golem's latest event: the caps its last cycle ran with (recorded in its DreamStart), or with --config, or before any cycle, the config's (oneiros.toml, ONEIROS_*); --tier shows those caps at another tier (a cap someone set holds there; the ones the tier gave follow it)."),
        ('pairs', "The distant memory pairs a dream would draw now (Bumblebee's selection)."),
        ('import', "Record a conversation as episodes: every turn with its speaker, time and own id (LoCoMo's D3:12, a message's id), checked whole before anything is written; run again, it records only the turns the golem does not have yet."),
        ('health', "A golem's dreaming health: cycles that staged nothing, cycles without a promotion, the validation hit rate, cost without yield and budget overruns, with the alarms raised now."),
        ('lineage', 'Where a staged entry came from, exactly: its source episodes, the output and the generator call (call key and request hash) it came from, the prompt template and its version, the model, tokens and cost, and every move: its quarantine, each outcome or review that moved its confidence, each recall that returned it, and how it was promoted (sweep, review or recalls).'),
        ('ab', "Offline A/B: replay a recorded timeline twice, each arm in its own throwaway store (arm a: dreaming with this directory's config; arm b: not dreaming), and compare insights promoted, their precision, the sweep's hit rate, tokens and cost."),
        ('rerun', 'Re-execute past cycles from their starting position in a scratch copy, every generator response read from the log (no model is called, the live golem is never written), and say whether each is identical or exactly where and why it diverges. Exit 1 if any diverges.'),
        ('fork', 'Re-run CYCLE with another model, prompts or settings in the branch store --into: recorded answers are reused where the request is unchanged, the model is called only where it differs, and the live store is only read. Then compare with `oneiros diff CYCLE CYCLE --other INTO`.'),
        ('diff', 'Two cycles side by side: hypotheses, counterfactuals and staged entries only one has, and quality, tokens, cost, calls and models where they differ.'),
        ('journal', 'One entry per dream cycle (the latest --limit): phases, counts, cost, duration and quality.'),
        ('staging', 'The staging buffer (the first --limit entries): every dream output with its confidence, status and criterion.'),
        ('outcome', 'Record a waking outcome and run the validation sweep on it: it moves the active entries it is relevant to (staging.min_relevance).'),
        ('review', "Decide on a staged entry (Dense-Mem's feedback decisions), or revoke a promoted one: MEMORY.md's next version drops its line, with who and why kept in its history."),
        ('reevaluate', "Dense-Mem's re_evaluate: stale entries whose source episodes are gone, reinforce intact ones."),
        ('follow', 'Keep the staging and health processes and every projection up with the log until interrupted.'),
        ('rebuild', 'Drop a projection (or all) and build it again from the log, to the head or as of a position.'),
        ('memory', 'MEMORY.md as dream promotions wrote it (Ethos): the newest version, a diff, a file, a rollback; or the observations page: the facts dreams drew from the episodes.'),
        ('recover', 'Find golems dreaming in a phase that nothing runs, and resume it or end the cycle.'),
        ('interrupt', "End the golem's dream cycle now, interrupted by its owner with --reason (kept in the log)."),
        ('run', 'Run the heartbeat daemon: record activity, decide each tick, dream when the config says.'),
        ('should-dream', 'Explain whether a golem would dream now: every gate and trigger with its values.'),
        ('serve', 'Serve the REST API (/api/v1), live events (/api/v1/events), MCP (/mcp) and /openapi.json.'),
        ('mcp', 'Serve the MCP tools over stdio, for a local agent that launches this command itself.'),
        ('worker', 'Run RQ workers that execute dream phases from the queue.'),
        ('trace', "Draw one cycle's spans, across every worker that ran it, with durations, tokens and cost."),
        ('eval', 'Measure what dreaming changes in recall, on a benchmark or your own transcripts.'),
        ('golem', 'Create a golem (every other command takes only one that exists).'),
        ('config', 'The effective configuration.'),
        ('token', 'Bearer tokens of `oneiros serve`, kept hashed in server.tokens_file.'),
    ),
)

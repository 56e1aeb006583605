"""``oneiros worker`` (RQ phase workers), ``oneiros trace`` (a cycle's spans) and the enqueueing
half of ``oneiros dream --queue``."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Sequence
from types import FrameType
from typing import TYPE_CHECKING, Annotated, Any

import typer

from oneiros._errors import ConfigError
from oneiros.cli._common import JsonOpt, StoreOpt, console, emit_json, err_console
from oneiros.settings import DEFAULT_SPANS_PATH, CycleSettings, RqSettings, TracingSettings

if TYPE_CHECKING:  # annotations only: the commands import these on first use
    from redis import Redis
    from rich.tree import Tree

    from oneiros.fsm import Golems
    from oneiros.workers import SpanRecord

__all__ = ["enqueue_cycle", "register"]

QueueOpt = Annotated[
    str, typer.Option("--queue", envvar="ONEIROS_QUEUE", help="Redis URL of the job queue, as in redis://host:6379/0.")
]
RqSettingsOpt = Annotated[
    str | None,
    typer.Option(
        "--rq-settings",
        envvar="ONEIROS_RQ_SETTINGS",
        help='RqSettings as a JSON object, e.g. \'{"queue": "dreams", "retries": 5}\'.',
    ),
]
SpansOpt = Annotated[
    str | None,
    typer.Option("--spans", envvar="ONEIROS_SPANS", help=f"Span file (default {DEFAULT_SPANS_PATH}; 'off' for none)."),
]


def rq_settings(text: str | None) -> RqSettings:
    """RqSettings from a JSON object; a bad field is a ConfigError naming it."""
    import msgspec

    if not text:
        return RqSettings()
    try:
        return msgspec.json.decode(text, type=RqSettings)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ConfigError(f"--rq-settings: {exc}") from None


def _redis(url: str) -> Redis:
    from redis import Redis

    try:
        return Redis.from_url(url)
    except ValueError as exc:
        raise ConfigError(f"--queue {url!r}: {exc}") from None


def _fail(exc: Exception) -> typer.Exit:
    err_console.print(f"[red]error:[/red] {exc}")
    return typer.Exit(2)


def worker(
    queue: QueueOpt,
    *,
    store: StoreOpt = None,
    burst: Annotated[bool, typer.Option("--burst", help="Quit when the queue is empty.")] = False,
    max_jobs: Annotated[int | None, typer.Option("--max-jobs", min=1, help="Quit after this many jobs.")] = None,
    count: Annotated[int, typer.Option("--count", min=1, help="Worker processes to run.")] = 1,
    generator: Annotated[
        str,
        typer.Option("--generator", help="offline, openai, sleep:SECONDS (simulated model latency) or module:factory."),
    ] = "offline",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the offline generator.")] = 0,
    spans: SpansOpt = None,
    settings: RqSettingsOpt = None,
    log_level: Annotated[str, typer.Option("--log-level", help="RQ's logging level.")] = "WARNING",
) -> None:
    """Run RQ workers that execute dream phases from the queue."""
    from oneiros.events import DEFAULT_STORE_URL
    from oneiros.workers import WorkerConfig, load_generator, make_worker

    try:
        config = WorkerConfig(
            store_url=store or DEFAULT_STORE_URL,
            generator=generator,
            seed=seed,
            rq=rq_settings(settings),
            tracing=TracingSettings.from_env(spans),
        )
        load_generator(generator, seed)  # refuse a bad spec here, not in every job
        connection = _redis(queue)
    except ConfigError as exc:
        raise _fail(exc) from None
    if count > 1:
        raise typer.Exit(_supervise(count, sys.argv[1:]))
    worked = make_worker(config, connection).work(burst=burst, max_jobs=max_jobs, logging_level=log_level.upper())
    if burst and not worked:
        err_console.print("no phase job was waiting")


def _supervise(count: int, argv: Sequence[str]) -> int:
    """Run ``count`` single workers as child processes and pass termination signals on to them."""
    args: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--count":
            skip = True  # its value is the next argument
        elif not arg.startswith("--count="):
            args.append(arg)
    children = [subprocess.Popen([sys.executable, "-m", "oneiros", *args, "--count", "1"]) for _ in range(count)]

    def forward(signum: int, _frame: FrameType | None) -> None:
        for child in children:
            if child.poll() is None:
                child.send_signal(signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    return max(child.wait() for child in children)


def enqueue_cycle(
    golems: Golems,
    golem_id: str,
    queue: str,
    settings: str | None = None,
    cycle_settings: CycleSettings | None = None,
) -> dict[str, Any]:
    """Start a cycle whose phases run on the workers of ``queue``; returns what to report."""
    from oneiros.workers import RqExecutor

    connection = _redis(queue)
    executor = RqExecutor(golems, connection, rq_settings(settings), cycle_settings)
    cycle_id = executor.start_cycle(golem_id)
    return {
        "cycle_id": cycle_id,
        "golem_id": golem_id,
        "queue": queue,
        "rq_queue": executor.settings.queue,
        "enqueued": True,
    }


def _totals(spans: Sequence[SpanRecord]) -> tuple[int, float]:
    tokens = cost = 0.0
    for span in spans:
        if span.name == "generate":
            tokens += float(span.attributes.get("gen_ai.usage.input_tokens", 0)) + float(
                span.attributes.get("gen_ai.usage.output_tokens", 0)
            )
            cost += float(span.attributes.get("oneiros.cost_usd", 0.0))
    return int(tokens), cost


def _label(span: SpanRecord, below: Sequence[SpanRecord]) -> str:
    a = span.attributes
    text = f"[bold]{span.name}[/bold] {span.duration_ms:.1f} ms"
    if span.name == "generate":
        tokens_in, tokens_out = a.get("gen_ai.usage.input_tokens", 0), a.get("gen_ai.usage.output_tokens", 0)
        text += f" · {a.get('gen_ai.response.model', '?')} · {tokens_in}+{tokens_out} tokens"
        text += f" · ${float(a.get('oneiros.cost_usd', 0.0)):.6f}"
    elif span.name == "store.append":
        text += f" · v{int(a.get('oneiros.expected_version', 0)) + 1} · {', '.join(a.get('oneiros.event_types', []))}"
    else:
        tokens, cost = _totals(below)
        if tokens:
            text += f" · {tokens} tokens · ${cost:.6f}"
        if "rq.attempt" in a:
            text += f" · attempt {a['rq.attempt']} · {a.get('host.name', '?')} pid {span.pid}"
    if span.status == "ERROR":
        text += " [red](error)[/red]"
    return text


def draw_trace(spans: Sequence[SpanRecord], cycle_id: str) -> Tree:
    """The cycle's spans as a tree; spans whose parent is missing hang under the root line."""
    from rich.tree import Tree

    ids = {s.span_id for s in spans}
    children: dict[str | None, list[SpanRecord]] = {}
    for span in spans:
        parent = span.parent_id if span.parent_id in ids else None
        children.setdefault(parent, []).append(span)

    def descendants(span: SpanRecord) -> list[SpanRecord]:
        out: list[SpanRecord] = []
        for child in children.get(span.span_id, []):
            out.extend([child, *descendants(child)])
        return out

    tokens, cost = _totals(spans)
    tree = Tree(f"cycle {cycle_id} · trace {spans[0].trace_id} · {len(spans)} spans · {tokens} tokens · ${cost:.6f}")

    def add(node: Tree, span: SpanRecord) -> None:
        branch = node.add(_label(span, descendants(span)))
        for child in children.get(span.span_id, []):
            add(branch, child)

    for root in children.get(None, []):
        add(tree, root)
    return tree


def trace_cmd(
    cycle_id: Annotated[str, typer.Argument(help="The cycle whose trace to draw.")],
    spans: SpansOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Draw one cycle's spans, across every worker that ran it, with durations, tokens and cost."""
    import msgspec

    from oneiros.workers import cycle_spans, read_spans

    path = spans or DEFAULT_SPANS_PATH
    found = cycle_spans(read_spans(path), cycle_id)
    if not found:
        raise _fail(ConfigError(f"no spans for cycle {cycle_id!r} in {path}"))
    if as_json:
        emit_json([msgspec.to_builtins(s) for s in found])
        return
    console.print(draw_trace(found, cycle_id))


def register(app: typer.Typer) -> None:
    app.command("worker")(worker)
    app.command("trace")(trace_cmd)

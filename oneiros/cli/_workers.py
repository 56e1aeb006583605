"""``oneiros worker`` (RQ phase workers), ``oneiros trace`` (a cycle's spans) and the executor
behind ``dream --queue`` and ``run`` with a queue configured."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated, Any

import msgspec
import typer
from rich.markup import escape

from oneiros._errors import ConfigError, InputError, masked_url
from oneiros._text import counted
from oneiros.cli._common import (
    JsonOpt,
    StoreOpt,
    console,
    emit_json,
    err_console,
    one_line_errors,
    print_error,
    resolve_id,
)
from oneiros.cli._config import ConfigOpt, PresetOpt, QueueOpt, RqSettingsOpt, SpansOpt, fail, flag, load, rq_flag

if TYPE_CHECKING:  # annotations only: the commands import these on first use
    from redis import Redis
    from rich.tree import Tree

    from oneiros.telemetry._spanfile import SpanRecord

__all__ = ["check_queue", "redis_at", "register"]

_STORE_POLL_SECONDS = 2.0  # how often a worker started before its store looks for it again
_QUEUE_CONNECT_TIMEOUT_S = 5.0
"""How long a command waits for Redis before saying it cannot reach it (not from the source
documents: the same bound as a PostgreSQL store's default ``connect_timeout``)."""


def redis_at(url: str) -> Redis:
    """A client of the queue at ``url`` (:func:`oneiros.workers._connect.redis_at`, loaded on first use)."""
    from oneiros.workers._connect import redis_at as connect

    return connect(url)


def check_queue(connection: Redis, url: str) -> None:
    """One line and exit 2 when the queue does not answer within its connect timeout (5 s unless the
    URL's ``socket_connect_timeout`` says otherwise); the password is never shown."""
    from redis.exceptions import RedisError

    kwargs = connection.connection_pool.connection_kwargs
    if kwargs.get("socket_connect_timeout") is None:
        kwargs["socket_connect_timeout"] = _QUEUE_CONNECT_TIMEOUT_S
    try:
        connection.ping()
    except RedisError as exc:
        where = f"{kwargs.get('host', '?')}:{kwargs.get('port', '?')}/{kwargs.get('db', 0)}"
        if "path" in kwargs:
            where = str(kwargs["path"])
        reason = str(exc).replace(url, where)
        print_error(f"cannot reach the queue at redis {where}: {reason}")
        raise typer.Exit(2) from None


def worker(
    queue: QueueOpt = None,
    *,
    store: StoreOpt = None,
    config: ConfigOpt = None,
    preset: PresetOpt = None,
    burst: Annotated[bool, typer.Option("--burst", help="Quit when the queue is empty.")] = False,
    max_jobs: Annotated[int | None, typer.Option("--max-jobs", min=1, help="Quit after this many jobs.")] = None,
    count: Annotated[int, typer.Option("--count", min=1, help="Worker processes to run.")] = 1,
    spans: SpansOpt = None,
    settings: RqSettingsOpt = None,
    log_level: Annotated[str | None, typer.Option("--log-level", help="oneiros's log level (log.level).")] = None,
    log_format: Annotated[str | None, typer.Option("--log-format", help="text or json (log.format).")] = None,
) -> None:
    """Run RQ workers that execute dream phases from the queue.

    A worker needs the store, the queue and the secrets (API keys in its environment): each phase
    runs with the settings its cycle recorded when it started, whatever this worker's config says.
    Every worker also reconciles: it resumes phases nothing runs any more (`oneiros recover`)."""
    from oneiros._deps import Deps
    from oneiros.app._factory import Factory
    from oneiros.telemetry._logging import configure_logging
    from oneiros.workers._rq import make_worker, reconciling

    flags: dict[str, tuple[Any, str]] = {}
    flag(flags, "queue", queue, "--queue")
    flag(flags, "store", store, "--store")
    flag(flags, "tracing.spans_path", spans, "--spans")
    flag(flags, "log.level", log_level.upper() if log_level else None, "--log-level")
    flag(flags, "log.format", log_format, "--log-format")
    rq_flag(flags, settings)
    effective = load(config, preset, flags)
    if not effective.queue and effective.server.queue:
        # A file that names only the queue `oneiros serve` hands its cycles to: that is the queue
        # its workers serve (the worker refused it, found walking a server with workers).
        effective = msgspec.structs.replace(effective, queue=effective.server.queue)
    if not effective.queue:
        raise fail(ConfigError("no queue configured: set --queue, ONEIROS_QUEUE or `queue` in oneiros.toml"))
    try:
        worker_config = Factory(effective, Deps()).worker_config()
        connection = redis_at(effective.queue)
    except ConfigError as exc:
        raise fail(exc) from None
    check_queue(connection, effective.queue)
    if count > 1:
        raise typer.Exit(_supervise(count, sys.argv[1:]))
    configure_logging(effective.log)
    rq_worker = make_worker(worker_config, connection)
    with one_line_errors():  # before any job is taken: a worker on the wrong store takes none
        missing = _store_checked(connection, wait=not burst)
    if missing:
        raise fail(
            ConfigError(
                f"phase jobs on queue {effective.rq.queue!r} are for golems that store "
                f"{masked_url(worker_config.store_url)} does not have ({', '.join(missing)}): "
                "point --store at the store their cycles started on"
            )
        )
    with reconciling(connection):
        worked = rq_worker.work(burst=burst, max_jobs=max_jobs, logging_level=effective.log.rq_level)
    if burst and not worked:
        err_console.print("no phase job was waiting")
    failed = _failed_jobs(rq_worker)
    if failed:
        print_error(f"{counted(failed, 'phase job')} failed; the log says why")
        raise typer.Exit(1)


def _failed_jobs(rq_worker: Any) -> int:
    """The failed job attempts of a worker that has stopped. RQ counts them only in the worker's
    Redis hash (kept a minute after it stops), never in the object, which always said 0."""
    from redis.exceptions import RedisError

    try:
        rq_worker.refresh()
    except RedisError:
        return 0  # the queue went away; the log has each failure
    return int(rq_worker.failed_job_count)


def _store_checked(connection: Redis, *, wait: bool) -> list[str]:
    """The golems of waiting jobs that the worker's store lacks (see ``check_worker_store``). A
    long-running worker may start before anything created the store (compose starts workers with
    the daemon), so it waits for it, saying so once; a ``--burst`` worker fails at once."""
    from oneiros._errors import NoStore
    from oneiros.workers._rq import check_worker_store

    said = False
    while True:
        try:
            return check_worker_store(connection)
        except NoStore as exc:
            if not wait:
                raise
            if not said:
                err_console.print(escape(f"{exc}; waiting for it to be created (by `oneiros dream`, `run` or `serve`)"))
                said = True
            time.sleep(_STORE_POLL_SECONDS)


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
    parent = os.getpid()
    children = [
        # The supervisor has started no thread, which is what makes a preexec_fn safe.
        subprocess.Popen([sys.executable, "-m", "oneiros", *args, "--count", "1"], preexec_fn=_die_with(parent))  # noqa: PLW1509
        for _ in range(count)
    ]

    def forward(signum: int, _frame: FrameType | None) -> None:
        for child in children:
            if child.poll() is None:
                child.send_signal(signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    return max(child.wait() for child in children)


def _die_with(parent: int) -> Callable[[], None] | None:
    """What a worker child runs before its program: on Linux, ask for SIGTERM when the supervisor
    dies. A supervisor killed with SIGKILL cannot forward a signal, and its children went on taking
    jobs as orphans nobody stops; SIGTERM lets each finish its phase (RQ's warm shutdown)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    # Looked up before the fork: the child only calls it (no import or allocation after fork).
    prctl = ctypes.CDLL(None).prctl
    pr_set_pdeathsig = 1

    def arm() -> None:
        prctl(pr_set_pdeathsig, signal.SIGTERM)
        if os.getppid() != parent:  # it died before the request was made
            os.kill(os.getpid(), signal.SIGTERM)

    return arm


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
            text += f" · {counted(tokens, 'token')} · ${cost:.6f}"
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
    tree = Tree(
        f"cycle {cycle_id} · trace {spans[0].trace_id} · {counted(len(spans), 'span')} · {counted(tokens, 'token')} "
        f"· ${cost:.6f}"
    )

    def add(node: Tree, span: SpanRecord) -> None:
        branch = node.add(_label(span, descendants(span)))
        for child in children.get(span.span_id, []):
            add(branch, child)

    for root in children.get(None, []):
        add(tree, root)
    return tree


def trace_cmd(
    cycle_id: Annotated[str, typer.Argument(help="The cycle whose trace to draw (its id or a unique prefix).")],
    spans: SpansOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Draw one cycle's spans, across every worker that ran it, with durations, tokens and cost."""
    import msgspec

    from oneiros.telemetry._spanfile import cycle_spans, read_spans

    flags: dict[str, tuple[Any, str]] = {}
    flag(flags, "tracing.spans_path", spans, "--spans")
    path = load(config, None, flags).tracing.spans_path
    if path is None:  # the default file would hold only spans written before tracing was turned off
        raise fail(InputError("tracing.spans_path is off, so no span file is written: name one with --spans FILE"))
    if not Path(path).exists():  # read_spans takes a missing file for an empty one; here it is a mistake
        raise fail(InputError(f"no span file {path!r}: no traced cycle has written there yet"))
    if not Path(path).is_file():
        raise fail(InputError(f"span file {path!r} is not a regular file"))
    try:
        every = read_spans(path)
    except OSError as exc:
        raise fail(InputError(f"cannot read span file {path!r}: {exc.strerror or type(exc).__name__}")) from None
    traced = [str(s.attributes["oneiros.cycle_id"]) for s in every if "oneiros.cycle_id" in s.attributes]
    with one_line_errors():
        cycle_id = resolve_id(cycle_id, traced, "cycle", f"the spans at {path}") if traced else cycle_id
    found = cycle_spans(every, cycle_id)
    if not found:
        raise fail(ConfigError(f"no spans for cycle {cycle_id!r} in {path}"))
    if as_json:
        emit_json([msgspec.to_builtins(s) for s in found])
        return
    console.print(draw_trace(found, cycle_id))


def register(app: typer.Typer) -> None:
    app.command("worker")(worker)
    app.command("trace")(trace_cmd)

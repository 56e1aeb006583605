"""Run an ``oneiros`` command in this process, the way ``subprocess.run([python, "-m", "oneiros", ...])``
would in a fresh one, and answer with the same ``CompletedProcess``.

A fresh interpreter costs about a second per command (imports and the Typer app), many more under load;
most CLI tests check what a command prints, exits with and writes, which this runner shows the same.
Tests whose point is the process itself (start-up time, signals, crashes, the ``--help`` fast path
before the app is built, a server that must be killed) keep real subprocesses.

What a fresh process would have and this runner gives it: the environment given (and only it, as
``subprocess.run(env=...)`` does), the working directory, a terminal width from ``COLUMNS`` (the
command line's consoles are built once at import, so their width is set per run), and an uncaught
exception's traceback on stderr with exit code 1.
"""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import traceback
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

__all__ = ["run_cli"]


@contextmanager
def _environment(env: Mapping[str, str] | None, cwd: Path | str | None) -> Iterator[None]:
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        yield
    finally:
        os.chdir(saved_cwd)
        if env is not None:
            os.environ.clear()
            os.environ.update(saved_env)


@contextmanager
def _console_width() -> Iterator[None]:
    from oneiros.cli._common import console, err_console

    columns = os.environ.get("COLUMNS", "")
    saved = [(c, c._width) for c in (console, err_console)]  # rich has no public "unset" width
    try:
        for c, _ in saved:
            # What a fresh process's console would read at import: COLUMNS, else 80 off a terminal.
            c.width = int(columns) if columns.isdigit() else 80
        yield
    finally:
        for c, width in saved:
            c._width = width  # as it was (None: read COLUMNS at every print), which the setter cannot say


@contextmanager
def _signals_back(handlers: Mapping[signal.Signals, Any]) -> Iterator[None]:
    try:
        yield
    finally:
        for sig, handler in handlers.items():
            if handler is not None:  # None: set outside Python, nothing this process can put back
                signal.signal(sig, handler)


def run_cli(
    args: Sequence[str],
    *,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    input: str | None = None,  # named as subprocess.run names it
    check: bool = False,
) -> subprocess.CompletedProcess[str]:
    """``oneiros ARGS`` in this process: its exit code, stdout and stderr as a subprocess would give them."""
    from oneiros.cli import app
    from oneiros.cli._common import console  # noqa: F401 - built now, not under the command's COLUMNS

    argv = [str(a) for a in args]
    # Long-running commands (run, recover --watch) take SIGINT and SIGTERM for themselves; this
    # process keeps its own handlers once the command is done.
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    with _environment(env, cwd), _console_width(), _signals_back(handlers):
        result = CliRunner().invoke(app, argv, input=input, prog_name="oneiros", catch_exceptions=True)
        # A process's exit closes what it left open (an SQLite connection checkpoints its
        # write-ahead log when the last one closes); here, collecting does.
        gc.collect()
    code, err = result.exit_code, result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        err += "".join(traceback.format_exception(result.exception))
        code = 1
    done = subprocess.CompletedProcess(["oneiros", *argv], code, result.stdout, err)
    if check:
        done.check_returncode()
    return done

"""How soon everyday commands answer: ``--help``, ``status``, ``staging``, ``journal``, ``budget``,
``token list`` and ``token add``, each a fresh ``oneiros`` process as a person runs it, on a store
with one golem and on one of 100k events; and ``serve``: the time until it says "serving", and
until it reports a port another process holds.

Each figure is the median wall time over ``--runs`` rounds, every round running each command once
in turn with the baseline, a bare ``python -c pass`` from the same interpreter, so a burst of load
on a shared machine falls on both (``*_vs_python`` is the command's time over the baseline's). The
projections are brought up to the log once before timing: a command after the first reads
projections that are already there. Prints progress to stderr and, on its last line, one JSON object.

    python benchmarks/cli.py                  # one golem, and 100k events
    python benchmarks/cli.py --sizes 0        # one golem only
"""

from __future__ import annotations

import argparse
import os
import selectors
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks._common import emit
from benchmarks.scale import _child

_EXE = Path(sys.executable)
_CLI = shutil.which("oneiros", path=str(_EXE.parent)) or "oneiros"
_GOALS = {"one_golem_s": 0.3, "100k_s": 1.0, "serving_s": 2.0}

COMMANDS: dict[str, list[str]] = {
    "help": ["--help"],
    "status": ["status"],
    "staging": ["staging", "--golem", "g"],
    "journal": ["journal", "--golem", "g"],
    "budget": ["budget", "--golem", "g"],
    "token_list": ["token", "list"],
}


def _env(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode cached after the first run
    env |= {"ONEIROS_STORE": f"sqlite:///{folder}/events.db", "ONEIROS_SERVER__TOKENS_FILE": f"{folder}/tokens"}
    return env


def _once(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def _serving(env: dict[str, str], cwd: Path) -> float:
    """Seconds from starting `oneiros serve` on a free port until it says "serving"."""
    started = time.perf_counter()
    server = subprocess.Popen(
        [_CLI, "serve", "--port", "0", "--insecure-local"], env=env, cwd=cwd, stderr=subprocess.PIPE, text=True
    )
    try:
        assert server.stderr is not None
        with selectors.DefaultSelector() as waiting:
            waiting.register(server.stderr, selectors.EVENT_READ)
            while waiting.select(timeout=60):
                line = server.stderr.readline()
                if not line:
                    raise SystemExit(f"oneiros serve ended before serving (exit {server.wait()})")
                if line.startswith("serving "):
                    return time.perf_counter() - started
        raise SystemExit("oneiros serve said nothing for a minute")
    finally:
        server.terminate()
        server.wait(timeout=30)


def _busy_port(env: dict[str, str], cwd: Path) -> float:
    """Seconds until `oneiros serve` on a port another socket holds exits saying so."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        started = time.perf_counter()
        done = subprocess.run(
            [_CLI, "serve", "--port", str(port)], env=env, cwd=cwd, capture_output=True, text=True, check=False
        )
        elapsed = time.perf_counter() - started
    if done.returncode != 2 or "address" not in done.stderr.lower():
        raise SystemExit(f"a busy port was not reported: exit {done.returncode}: {done.stderr}")
    return elapsed


def _store(folder: Path, n: int) -> None:
    """Golem `g` with the sample episodes and one cycle (n=0), or with n episodes and one cycle."""
    env = _env(folder)
    if n:
        _child("record", folder / "events.db", n)
        _child("cycle", folder / "events.db")
    else:
        dreamt = [_CLI, "dream", "--golem", "g", "--sample", "--json"]
        subprocess.run(dreamt, env=env, cwd=folder, check=True, capture_output=True)
    for argv in COMMANDS.values():  # the projections brought up once, and the bytecode cached
        _once([_CLI, *argv], env, folder)


def measure(folder: Path, runs: int, *, serve: bool) -> dict[str, float]:
    env = _env(folder)
    baseline = [sys.executable, "-c", "pass"]
    samples: dict[str, list[float]] = {name: [] for name in ["python", *COMMANDS, "token_add"]}
    if serve:
        samples |= {"serve_serving": [], "serve_busy_port": []}
    for round_no in range(runs):
        samples["python"].append(_once(baseline, env, folder))
        for name, argv in COMMANDS.items():
            samples[name].append(_once([_CLI, *argv], env, folder))
        add = [_CLI, "token", "add", f"agent-{round_no}", "--scope", "read", "--golem", "g"]
        samples["token_add"].append(_once(add, env, folder))
        if serve:
            samples["serve_serving"].append(_serving(env, folder))
            samples["serve_busy_port"].append(_busy_port(env, folder))
    base = samples["python"]
    figures: dict[str, float] = {}
    for name, values in samples.items():
        figures[f"{name}_s"] = round(statistics.median(values), 3)
        if name != "python":
            figures[f"{name}_vs_python"] = round(statistics.median(v / b for v, b in zip(values, base, strict=True)), 1)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",") if x], default=[100_000])
    args = parser.parse_args()
    figures: dict[str, object] = {"runs": args.runs, "goals": _GOALS, "load_before": os.getloadavg()[0]}
    for n in [0, *(n for n in args.sizes if n)]:
        label = "one_golem" if not n else f"{n // 1000}k_events"
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            print(f"{label}: building the store", file=sys.stderr)
            _store(folder, n)
            print(f"{label}: timing", file=sys.stderr)
            figures[label] = measure(folder, args.runs, serve=not n)
            print(f"  {figures[label]}", file=sys.stderr)
    figures["load_after"] = os.getloadavg()[0]
    emit(figures)


if __name__ == "__main__":
    main()

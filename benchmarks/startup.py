"""Start-up cost: ``oneiros --help``, ``oneiros --version`` and importing the package and the log.

``--help`` and ``--version`` alone answer before Typer is imported (``oneiros/cli/_help.py``);
``build_cli_app`` (importing Typer and building the lazy root, no command module) and ``cli_command_help`` (a
command's own Rich help) show what the full path costs.

Run: ``python benchmarks/startup.py [--runs 15]``. Each figure is the median wall time of a fresh
process, interleaved round by round with the baseline (a bare ``python -c pass`` from the same
interpreter), so machine noise hits both alike. The last stdout line is one JSON object: seconds,
and the ratio of each figure to the baseline.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

_EXE = Path(sys.executable)
_CLI = shutil.which("oneiros", path=str(_EXE.parent)) or "oneiros"

CASES: dict[str, list[str]] = {
    "baseline_python": [sys.executable, "-c", "pass"],
    "import_oneiros": [sys.executable, "-c", "import oneiros"],
    "import_events": [sys.executable, "-c", "import oneiros.events"],
    "import_cli": [sys.executable, "-c", "import oneiros.cli"],
    "build_cli_app": [sys.executable, "-c", "from oneiros.cli import app"],
    "cli_help": [_CLI, "--help"],
    "cli_version": [_CLI, "--version"],
    "cli_command_help": [_CLI, "events", "--help"],
}


def once(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    samples: dict[str, list[float]] = {name: [] for name in CASES}
    for argv in CASES.values():  # warm the page cache and the bytecode cache once
        once(argv)
    for _ in range(args.runs):
        for name, argv in CASES.items():
            samples[name].append(once(argv))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    base = medians["baseline_python"]
    figures: dict[str, float | int] = {f"{name}_s": round(value, 4) for name, value in medians.items()}
    figures |= {
        f"{name}_vs_python": round(value / base, 2) for name, value in medians.items() if name != "baseline_python"
    }
    figures["runs"] = args.runs
    print(json.dumps(figures))


if __name__ == "__main__":
    main()

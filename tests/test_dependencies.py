"""What an in-process dream needs (docs/dependencies.md): it dreams with RQ and Redis impossible to
import, and loads no OpenTelemetry when its spans go nowhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.workers.support import ROOT

# Imported by the interpreter at start-up (it is first on PYTHONPATH): refuses the blocked
# packages as if they were not installed, records every import of them that was tried, and
# writes the top-level packages loaded by the time the process exits.
_SITECUSTOMIZE = """
import atexit, json, os, sys

BLOCKED = set(filter(None, os.environ["BLOCK_IMPORTS"].split(",")))
tried = []


class _NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            tried.append(name)
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _NotInstalled())


@atexit.register
def _report():
    with open(os.environ["IMPORT_REPORT"], "w") as out:
        json.dump({"tried": tried, "loaded": sorted({m.partition(".")[0] for m in sys.modules})}, out)
"""


_Imports = dict[str, list[str]]


def _dream(tmp_path: Path, *, blocked: str, spans: str) -> tuple[subprocess.CompletedProcess[str], _Imports]:
    """``oneiros dream --sample`` in a fresh interpreter with ``blocked`` packages refused."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_SITECUSTOMIZE)
    report = tmp_path / "imports.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ONEIROS_", "OTEL_"))}
    env |= {
        "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]),
        "BLOCK_IMPORTS": blocked,
        "IMPORT_REPORT": str(report),
        "ONEIROS_SPANS": spans,
    }
    done = subprocess.run(
        [sys.executable, "-m", "oneiros", "dream", "--sample", "--json", "--store", f"sqlite:///{tmp_path}/e.db"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    imports: _Imports = json.loads(report.read_text())
    return done, imports


def test_an_in_process_dream_needs_neither_rq_nor_redis(tmp_path: Path) -> None:
    """With ``import rq`` and ``import redis`` failing as if neither were installed, ``oneiros dream``
    completes its cycle, and nothing on its way even tried to import them."""
    done, imports = _dream(tmp_path, blocked="rq,redis", spans=str(tmp_path / "spans.jsonl"))
    assert (0, "") == (done.returncode, done.stderr)
    assert "complete" == json.loads(done.stdout)["status"]
    assert [] == imports["tried"]


@pytest.mark.parametrize("traced", [False, True], ids=["spans-off", "span-file"])
def test_only_a_dream_whose_spans_go_somewhere_loads_opentelemetry(tmp_path: Path, traced: bool) -> None:
    """``tracing.spans_path = "off"`` and no OTLP endpoint: the dream completes without a single
    OpenTelemetry module loaded. With a span file it loads OpenTelemetry and writes the cycle's spans."""
    spans = tmp_path / "spans.jsonl"
    done, imports = _dream(tmp_path, blocked="", spans=str(spans) if traced else "off")
    assert (0, "") == (done.returncode, done.stderr)
    assert "complete" == json.loads(done.stdout)["status"]
    assert (traced, traced) == ("opentelemetry" in imports["loaded"], spans.exists())

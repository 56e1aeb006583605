"""``oneiros worker --log-format json``: every line the worker writes is one JSON object."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
from redis import Redis

from oneiros.settings._cycle import CycleSettings
from oneiros.settings._generator import GeneratorSettings
from oneiros.workers._dispatch import RqExecutor
from tests.workers.support import FAST, ROOT, new_golems

pytestmark = pytest.mark.redis


def test_a_failing_phase_is_json_lines_only(redis_url: str, tmp_path: Path) -> None:
    """A phase job that fails on every attempt is logged, in JSON mode, as JSON lines only, one
    per start, failure and job failure; RQ's own many-line traceback in plain text broke them.
    The --burst worker then exits 1 saying how many attempts failed (it exited 0: RQ counts them
    only in Redis)."""
    store_url = f"sqlite:///{tmp_path}/events.db"
    store, golems, (golem_id,) = new_golems(store_url, 1)
    settings = msgspec.structs.replace(FAST, retries=1)
    failing = CycleSettings(generator=GeneratorSettings(kind="tests.workers.support:failing_generator"))
    RqExecutor(golems, Redis.from_url(redis_url), settings, failing).start_cycle(golem_id)
    store.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONEIROS_")}
    rq_settings = msgspec.json.encode(settings).decode()
    command = ["worker", "--burst", "--queue", redis_url, "--store", store_url, "--log-format", "json"]
    result = subprocess.run(
        [sys.executable, "-m", "oneiros", *command, "--rq-settings", rq_settings, "--spans", "off"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    lines = result.stderr.splitlines()
    said = [json.loads(line)["message"] for line in lines[:-1]]
    assert (1, "error: 2 phase jobs failed; the log says why") == (result.returncode, lines[-1])
    assert ["phase start", "phase failed"] * 2 == [m for m in said if not m.startswith("job ")]
    assert 2 == sum(m.endswith("RuntimeError: model router unavailable for hypnagogic_onset:partial:0") for m in said)
    assert "" == result.stdout

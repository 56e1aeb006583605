"""The documentation site builds from the code with warnings as errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from oneiros.settings._phases import PHASES

ROOT = Path(__file__).parent.parent


def test_the_site_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    """`mkdocs build --strict` succeeds: every page in the nav exists, every link and every
    mkdocstrings reference resolves, and the generated reference pages are written (the phases
    page from the phase table, the Python API from the public surface)."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert 0 == result.returncode, result.stderr[-3000:]
    config = (tmp_path / "site" / "reference" / "config" / "index.html").read_text()
    assert "cycle.budget.cycle_tokens" in config
    assert "(Bardo" in config
    assert 'href="../../sources/"' in config
    cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text()
    assert "oneiros dream" in cli
    phases = (tmp_path / "site" / "reference" / "phases" / "index.html").read_text()
    assert all(f"<code>Dreaming_{p.state}</code>" in phases and p.label in phases for p in PHASES)
    python = (tmp_path / "site" / "reference" / "python" / "index.html").read_text()
    assert all(f'id="{name}"' in python for name in ("oneiros.Oneiros", "oneiros.workers.JsonSerializer"))

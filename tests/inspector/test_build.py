"""The built inspector committed in oneiros/server/static is what its sources in inspector/ build
to, so ``pip install`` ships the inspector without npm and the sources cannot drift from it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from oneiros.server._inspect import static_dir

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "inspector"


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.timeout(600)
def test_the_committed_build_is_what_the_sources_build_to(tmp_path: Path) -> None:
    """``vite build`` of inspector/ (dependencies from package-lock.json) into a scratch directory
    gives byte for byte the files committed in oneiros/server/static; skips without npm."""
    npm = shutil.which("npm")
    if npm is None:
        reason = "npm is not installed: cannot rebuild the inspector to compare"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI must have it")
        pytest.skip(reason)
    if not (SOURCES / "node_modules" / ".bin" / "vite").exists():
        # `npm install` from the lock, not `npm ci`: npm 11's ci refuses a lock without the entries of
        # rollup's optional platform packages for other systems, which install never needs.
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--no-save"], cwd=SOURCES, check=True, capture_output=True
        )
    out = tmp_path / "static"
    subprocess.run(
        [npm, "exec", "--", "vite", "build", "--outDir", str(out), "--emptyOutDir", "--logLevel", "error"],
        cwd=SOURCES,
        check=True,
        capture_output=True,
    )
    built, committed = _files(out), _files(static_dir())
    assert sorted(built) == sorted(committed), "rebuild with `cd inspector && npm run build` and commit"
    stale = [name for name in built if built[name] != committed[name]]
    assert [] == stale, "rebuild with `cd inspector && npm run build` and commit"


def test_the_bundle_stays_small() -> None:
    """The shipped inspector (scripts and styles, uncompressed) stays under 80 kB: Preact, no
    framework runtime, no chart or diagram library."""
    sizes = {name: len(data) for name, data in _files(static_dir()).items()}
    assert {"index.html"} <= set(sizes)
    assert sum(sizes.values()) < 80_000, sizes


def test_the_wheel_ships_the_built_inspector() -> None:
    """The package data globs cover every built file, so an installed wheel serves the same files."""
    import tomllib

    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["oneiros"]
    package = ROOT / "oneiros"
    shipped = {str(p.relative_to(package)) for pattern in globs for p in package.glob(pattern)}
    built = {str(p.relative_to(package)) for p in static_dir().rglob("*") if p.is_file()}
    assert built
    assert set() == built - shipped

"""A cycle's events stay what they were before the read-once, columnar rework."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scale_support import cycle_lines

HISTORIES = Path(__file__).parent / "histories"


@pytest.mark.parametrize("tier", ["core", "hardened"])
def test_cycles_on_a_fixed_log_emit_the_events_recorded_before_the_rework(tier: str) -> None:
    """Two cycles over a fixed log (with episodes recorded between them, replaced ticks, untimed
    episodes, depotentiation feeding the second cycle) give line for line the events that main
    gave before snapshots and columnar episodes (captured in ``histories/cycles_<tier>.jsonl``)."""
    expected = (HISTORIES / f"cycles_{tier}.jsonl").read_text().splitlines()
    assert expected == cycle_lines(tier)

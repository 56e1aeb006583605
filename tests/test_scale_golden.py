"""A cycle's events stay what they were when the engines last changed on purpose."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scale_support import cycle_lines

HISTORIES = Path(__file__).parent / "histories"


@pytest.mark.parametrize("tier", ["core", "hardened"])
def test_cycles_on_a_fixed_log_emit_the_events_recorded_before_the_rework(tier: str) -> None:
    """Two cycles over a fixed log (with episodes recorded between them, replaced ticks, untimed
    episodes, depotentiation feeding the second cycle) give line for line the events captured in
    ``histories/cycles_<tier>.jsonl``: first before snapshots and columnar episodes (which kept them
    to the line), captured again when consolidation and the domain-neutral reasoning changed what
    the engines write (the second cycle consolidates only the episodes recorded since the first),
    when an observe step's key gained its size, and when observations became whole sentences (a
    capital first, a full stop last) and gained a profile ``key`` (null for every other kind)."""
    expected = (HISTORIES / f"cycles_{tier}.jsonl").read_text().splitlines()
    assert expected == cycle_lines(tier)

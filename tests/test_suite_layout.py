"""The suite's own bookkeeping: what ``scripts/test --quick`` leaves out still names real tests."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import SLOW

ROOT = Path(__file__).resolve().parents[1]


def test_every_slow_entry_names_a_test_file_or_function() -> None:
    """Each entry of tests/conftest.py's SLOW is a test file, or a test function in one: a renamed
    test would otherwise move into the quick subset without a word."""
    missing = []
    for entry in SLOW:
        path, _, name = entry.partition("::")
        file = ROOT / path
        if not file.is_file() or (name and not re.search(rf"^def {re.escape(name)}\(", file.read_text(), re.M)):
            missing.append(entry)
    assert [] == missing

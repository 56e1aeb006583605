"""At 80 columns the tables wrap between words instead of cutting them: `report`, `events`,
`journal`, `staging`, `config show` and `status` on README's golem, each line within the width
and every word of what they show whole on some line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.test_cli_coherence import ok

EPISODES = Path(__file__).resolve().parent.parent / "examples" / "episodes.jsonl"


@pytest.fixture(scope="module")
def readme(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder whose store holds README's golem g1 after its first dream."""
    home = tmp_path_factory.mktemp("tables")
    ok(home, "dream", "--golem", "g1", "--episodes", str(EPISODES), "--json")
    return home


def _tokens(text: str) -> set[str]:
    return set(re.split(r"[\s│┃]+", text))


def _words(*texts: str) -> set[str]:
    return {word for text in texts for word in text.split()}


def _shown(home: Path, *args: str) -> tuple[str, set[str]]:
    """The command's output at 80 columns (every line checked to fit), and its words."""
    out = ok(home, *args).stdout
    assert [] == [line for line in out.splitlines() if len(line) > 80]
    return out, _tokens(out)


def test_report_keeps_every_word_of_its_outputs_whole(readme: Path) -> None:
    """Each staged output's kind, content and criterion are wrapped, not cut (the criterion's
    heading was `validation criteri`)."""
    report = json.loads(ok(readme, "report", "--golem", "g1", "--json").stdout)
    _out, tokens = _shown(readme, "report", "--golem", "g1")
    expected = _words("entry kind conf content validation criterion")
    for staged in report["staged"]:
        expected |= _words(staged["kind"], staged["content"], staged["validation_criterion"])
    assert set() == expected - tokens


def test_events_show_each_payload_whole(readme: Path) -> None:
    """Each event's type and every word of its payload are shown whole (a payload was cut at 120
    characters, mid-word)."""
    events = json.loads(ok(readme, "events", "--limit", "12", "--json").stdout)
    _out, tokens = _shown(readme, "events", "--limit", "12")
    assert set() == {e["type"] for e in events} - tokens
    # The payload as the table writes it: each value as JSON.
    full = _words(
        *(
            ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in e["payload"].items() if k != "cycle_id")
            for e in events
        )
    )
    assert set() == full - tokens


def test_journal_status_and_staging_keep_their_words(readme: Path) -> None:
    """The journal's headings and figures, the status table and the staging buffer's sentences
    (a block an entry at 80 columns) are whole."""
    _out, journal = _shown(readme, "journal")
    assert set() == _words("cycle golem status replay hyp/cf/ins staged tokens quality complete") - journal
    _out, status = _shown(readme, "status")
    assert set() == _words("golem state cycle version episodes completed interrupted g1 Waking") - status
    entries = json.loads(ok(readme, "staging", "--json").stdout)
    _out, staging = _shown(readme, "staging")
    assert set() == _words(*(e["text"] for e in entries)) - staging


def test_config_show_never_splits_a_key(readme: Path) -> None:
    """Every key of the effective config is on one line, whole, with its value."""
    rows = json.loads(ok(readme, "config", "show", "--json", "--sources").stdout)
    out, tokens = _shown(readme, "config", "show")
    assert set() == {row["key"] for row in rows} - tokens
    assert 'schedule.mode = "hybrid"' in out

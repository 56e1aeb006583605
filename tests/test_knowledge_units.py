"""Clean knowledge units: the offline rules read an assistant transcript's markdown as structure,
keep code apart as named artifacts, state facts as whole sentences, and resolve first person
and "we" into grammatical text (issue 36)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from oneiros.app._oneiros import Oneiros
from oneiros.events._observations import DreamObservation
from oneiros.events._types import Episode
from oneiros.generators._lines import said_lines
from oneiros.generators._offline import OfflineGenerator
from oneiros.generators._prose import resolve_dates, third_person
from oneiros.generators._protocol import GenerationRequest, Task, TaskInputs
from oneiros.generators._units import units
from oneiros.lab._quality import flaws
from oneiros.settings._prompts import PromptSet

_SPOKEN = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)  # a Monday

_ANSWER = """Sure! Here's how to set it up.

### Step 1: Define the database
We'll use **SQLAlchemy** for the `engine`:

```python
from sqlalchemy import create_engine

def get_db():
    return create_engine("sqlite://")
```

| option | value |
|--------|-------|
| pool   | 5     |

project/
|-- app.py
`-- db.py

- **Caching**: keep the engine in one module
- Use a session per request
1. I'll add the index to the users table.
This is a very long explanation that goes on about every design consideration one might have..."""


def _ask(task: Task, episodes: Sequence[Episode], before: Episode | None = None, **extra: object) -> dict[str, object]:
    inputs = TaskInputs(episodes=tuple(episodes), before=before, salient=0.7, **extra)  # type: ignore[arg-type]
    prompt = PromptSet().render(task, episodes=said_lines(episodes, before), salient=0.7, sources=2, **extra)
    request = GenerationRequest(call_key=f"c:nrem:{task}:0", phase="nrem", task=task, prompt=prompt, given=inputs)
    found: dict[str, object] = json.loads(OfflineGenerator().generate(request).text)
    return found


def _texts(episodes: Sequence[Episode], before: Episode | None = None) -> list[str]:
    observations = _ask("observe", episodes, before)["observations"]
    assert isinstance(observations, list)
    return [str(o["text"]) for o in observations]


def test_markdown_is_read_as_structure_not_words() -> None:
    """Headings, tables and tree drawings give no sentence; emphasis and inline code marks come off
    their words; a list item is a sentence of its own; a code block becomes a one-line artifact
    named by its language and first definition; a sentence trailing off in "..." is dropped."""
    found = units(_ANSWER)
    assert found.artifacts == ("a Python code block defining get_db",)
    assert found.sentences == (
        "Sure!",
        "Here's how to set it up.",
        "Caching: keep the engine in one module.",
        "Use a session per request.",
        "I'll add the index to the users table.",
    )


def test_a_weekday_with_its_own_date_resolves_to_that_date_and_we_reads_as_grammatical_text() -> None:
    """The issue's house move: "on Friday 20 March" names 20 March (not the last Friday before it
    was said followed by the date again), and "we ... ourselves" becomes the speaker and others."""
    text, days, _ = resolve_dates("The move is now on Friday 20 March, and we hired a van ourselves.", _SPOKEN.date())
    assert days == [date(2026, 3, 20)]
    assert third_person(text, "user") == "The move is now on 20 March 2026, and user and others hired a van themselves."


def test_first_person_plural_and_contractions_leave_no_broken_contraction() -> None:
    """ "we'll", "we'd", "I'll", "us" and "our" become words of their own: no "others'll"."""
    said = "We'll ship it, we'd rather test first, I'll review it and tell us about our plan."
    out = third_person(said, "Ann")
    assert out == (
        "Ann and others will ship it, Ann and others would rather test first, Ann will review it and tell "
        "Ann and others about Ann's plan."
    )
    assert "ungrammatical" not in flaws(out)


def test_an_assistant_turn_yields_what_it_committed_to_and_its_code_as_an_artifact() -> None:
    """Answering the user's question, the assistant's tutorial text is not restated: the joined
    answer holds only what it committed to, and its code block is named, never pasted."""
    question = Episode(tick=1, summary="How should I set up the database?", speaker="user", time=_SPOKEN)
    answer = Episode(tick=2, summary=_ANSWER, speaker="assistant", time=_SPOKEN + timedelta(minutes=1))
    texts = _texts([answer], before=question)
    assert texts == [
        "2 March 2026: assistant shared a Python code block defining get_db.",
        "2 March 2026: user asked: How should user set up the database? "
        "assistant answered: Assistant will add the index to the users table.",
    ]


def test_a_thread_clause_too_long_to_keep_whole_is_dropped_not_cut() -> None:
    """A thread joins one whole sentence per episode; one longer than the clause limit is left out
    rather than cut with "...", and a thread with no clause left is not written."""
    short = Episode(tick=1, summary="The billing service moved to Postgres.", speaker="Ann", time=_SPOKEN)
    long = Episode(tick=2, summary="The billing service " + "kept growing and " * 20 + "failed.", speaker="Ann")
    thread = _ask("thread", [short, long], subject="billing")["thread"]
    assert thread == "billing, across days. 2 March 2026: Ann: The billing service moved to Postgres."
    assert _ask("thread", [long], subject="billing")["thread"] == ""


_VOCABULARY = (
    "we I our us ourselves the deploy database cache is was will moved fixed Postgres app yesterday "
    "on Friday 20 March next week Ann went to it and"
)
_WORDS = st.sampled_from(_VOCABULARY.split())
_SENTENCE = st.lists(_WORDS, min_size=1, max_size=12).map(" ".join) | st.text(max_size=40)
_ENDS = st.sampled_from([".", "!", "?", "...", ":", ",", ""])
_PREFIXES = st.sampled_from(["", "### ", "- ", "1. ", "> ", "| ", "|-- ", "**", "`", "    "])
_LINE = st.tuples(_PREFIXES, _SENTENCE, _ENDS, _PREFIXES).map(lambda p: f"{p[0]}{p[1]}{p[2]}{p[3].strip()}")
_BLOCK = st.sampled_from(["```python\ndef f():\n    return 1\n```", "```\nx = 1", "```sql\nSELECT 1;\n```"])
_MESSAGE = st.lists(_LINE | _BLOCK, min_size=1, max_size=8).map("\n".join)


@settings(max_examples=300, deadline=None)
@given(_MESSAGE)
def test_every_unit_is_a_whole_sentence_of_its_sources_words(message: str) -> None:
    """Whatever markdown a message holds, no unit carries markup or a code fence, none ends
    mid-sentence, and every word of a sentence unit is one of the message's own words."""
    found = units(message)
    source = {w.lower() for w in re.findall(r"\w+", message)}
    for unit in (*found.sentences, *found.artifacts):
        assert "```" not in unit
        assert "markup" not in flaws(unit)
    for sentence in found.sentences:
        assert not {"markup", "cut"} & set(flaws(sentence)), sentence  # a word said twice is the speaker's own
        assert {w.lower() for w in re.findall(r"\w+", sentence)} <= source


@settings(max_examples=100, deadline=None)
@given(st.lists(_MESSAGE, min_size=1, max_size=4), st.booleans())
def test_no_observation_or_thread_carries_markup_or_ends_mid_sentence(messages: list[str], assistant: bool) -> None:
    """Over any markdown the turns hold, said by a user or an assistant, every observation and
    thread the offline rules write is free of markup and of cut or broken sentences."""
    speakers = ["user", "assistant"] if assistant else ["Ann", "Bo"]
    episodes = [
        Episode(tick=i + 1, summary=m or "x", speaker=speakers[i % 2], time=_SPOKEN + timedelta(days=i))
        for i, m in enumerate(messages)
    ]
    thread = str(_ask("thread", episodes, subject="deploy")["thread"])
    for text in [*_texts(episodes), *([thread] if thread else [])]:
        assert not {"markup", "cut"} & set(flaws(text)), text


def test_a_later_value_supersedes_the_earlier_in_recall_and_both_stay_in_the_log(tmp_path: Path) -> None:
    """A turn that gives a new value with an update cue ("now") becomes a fact keyed by what it is
    about; a later one on the same thing supersedes it, so recall ranks the newest value's turn
    above the outdated ones, while the log keeps every fact."""
    with Oneiros(f"sqlite:///{tmp_path}/events.db") as app:
        app.create_golem("g")
        said = [
            "The dashboard API averages 300 ms per request on the staging cluster today.",
            "The dashboard API now averages 280 ms after the cache change.",
            "Lunch was good, the cluster is quiet.",
            "The dashboard API now averages 250 ms after the index change.",
        ]
        app.record_episodes(
            "g", [Episode(tick=i + 1, summary=t, speaker="user", time=_SPOKEN) for i, t in enumerate(said)]
        )
        app.dream("g")
        keyed = [
            r.event
            for r in app.store.read_stream("g", types=(DreamObservation,))
            if isinstance(r.event, DreamObservation) and r.event.key
        ]
        assert [(o.key, o.source_episode_ticks) for o in keyed] == [
            ("value:dashboard api", (2,)),
            ("value:dashboard api", (4,)),
        ]
        ranked = app.recall("g", "what does the dashboard API average?", record=False).ranking()
        ticks = [i.source_ticks[0] for i in ranked if i.source_ticks]
        assert ticks[0] == 4
        assert ticks.index(4) < ticks.index(2)

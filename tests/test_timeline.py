"""Timelines per subject (issue 36): what the user brought up about a subject they keep coming back
to, in order with dates, found by rule offline (or by a model through the ``timeline`` prompt),
written again each night and superseding the earlier one, and ranked by recall for ordering and
progress questions without taking the place of the turns it names."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from oneiros import Deps, FixedClock, Golems, InProcessExecutor, SequentialIds, open_store
from oneiros._text import FUNCTION_WORDS, topics
from oneiros.app._oneiros import Oneiros
from oneiros.episodes._mentions import TOPIC_KEPT, Mentions
from oneiros.events._observations import DreamObservation
from oneiros.events._types import Episode
from oneiros.generators._timeline import clause_of
from oneiros.lab._quality import flaws
from oneiros.phases._timeline import spread
from tests.chat_server import HARDENED, ChatServer
from tests.test_content_openai import _generator

_DAY = datetime(2024, 3, 15, 9, 0, tzinfo=UTC)


def _turn(tick: int, text: str, speaker: str = "user", day: int = 0) -> Episode:
    return Episode(
        tick=tick, summary=text, speaker=speaker, ref=str(tick), time=_DAY + timedelta(days=day, minutes=tick)
    )


def _chat() -> list[Episode]:
    """A user's budget tracker over three days, with the assistant's replies and an unrelated turn."""
    return [
        _turn(1, "I'm building my personal budget tracker with Flask, can you help?", day=0),
        _turn(2, "Sure, start with the models.", "assistant", day=0),
        _turn(3, "I'm adding transaction error handling to my budget tracker this week.", day=4),
        _turn(4, "Catch IntegrityError around the insert.", "assistant", day=4),
        _turn(5, "My cat knocked over my coffee.", day=6),
        _turn(6, "Oh no!", "assistant", day=6),
        _turn(7, "I'm hardening security of the budget tracker before the launch.", day=9),
        _turn(8, "Add rate limiting to the login.", "assistant", day=9),
    ]


def test_topics_are_what_a_turn_names_as_its_own_keyed_by_their_last_two_words() -> None:
    """ "my personal budget tracker project" and "the city autocomplete feature" are subjects; a
    word that only says which version or part ("my current code", "my app") is none."""
    assert topics("Sure, let's break it down for my personal budget tracker project.") == ["budget tracker"]
    assert topics("I'm trying to implement the city autocomplete feature now") == ["autocomplete feature"]
    assert topics("my current code and my app") == []
    assert topics("deployment of my weather app and my resume needs work") == ["weather app", "resume"]


@given(
    st.lists(st.sampled_from(["My", "my", "the", "project", "feature", "Budget", "tracker", "of", "x"]), max_size=20)
)
def test_a_topic_key_is_lower_case_words_never_a_function_word(said: list[str]) -> None:
    """Whatever the text, each key is one or two lower-case words, none of them a function word."""
    for key in topics(" ".join(said)):
        words = key.split()
        assert 1 <= len(words) <= 2
        assert key == key.lower()
        assert not set(words) & FUNCTION_WORDS


@given(st.lists(st.integers(), max_size=60), st.integers(min_value=2, max_value=12))
def test_spread_keeps_the_first_and_the_last_in_order_and_at_most_as_many_as_asked(items: list[int], most: int) -> None:
    """An even spread: never more than ``most``, the first and last always kept, order unchanged."""
    kept = spread(items, most)
    assert len(kept) == min(len(items), most)
    if items:
        assert kept[0] == items[0]
        assert kept[-1] == items[-1]
    positions = [items.index(k) for k in kept] if len(set(items)) == len(items) else None
    if positions is not None:
        assert positions == sorted(positions)


@given(st.integers(min_value=TOPIC_KEPT + 1, max_value=200))
def test_the_topics_index_keeps_a_span_of_the_users_turns_never_the_assistants(turns: int) -> None:
    """Past ``TOPIC_KEPT`` turns on a subject, every second gives way: the first and the latest
    stay; an assistant's turn naming it counts for nothing."""
    episodes = [_turn(2 * n + 1, "Working on my budget tracker again.", day=n) for n in range(turns)]
    episodes.append(_turn(10_000, "Your budget tracker looks fine.", "assistant"))
    mentions = Mentions()
    mentions.add(episodes, len(episodes))
    ticks = mentions.topics["budget tracker"]
    assert len(ticks) <= TOPIC_KEPT
    assert ticks[0] == 1
    assert ticks[-1] == episodes[-2].tick
    assert 10_000 not in ticks


def test_a_clause_is_one_whole_short_third_person_statement_never_a_bare_question() -> None:
    """The sentence naming the subject (its first clause when long), in the third person; a
    question gives none."""
    said = clause_of(
        "Hi! I'm trying to add charts to my budget tracker, and I want them fast.", "budget tracker", "user"
    )
    assert said == "User is trying to add charts to user's budget tracker, and user wants them fast"
    assert clause_of("Can you help me with my budget tracker?", "budget tracker", "user") is None


def _timelines(app: Oneiros) -> list[DreamObservation]:
    return [
        r.event
        for r in app.store.read_stream("g", types=(DreamObservation,))
        if isinstance(r.event, DreamObservation) and r.event.kind == "timeline"
    ]


def test_each_night_writes_the_subjects_timeline_again_and_recall_finds_the_current_one(tmp_path: Path) -> None:
    """Dreamt a day at a time, the budget tracker's timeline grows a dated entry per day, each
    naming its turn and the reply; the latest supersedes the earlier (recall finds only it), its
    turns are not outdated, it never takes a turn's place, and an ordering question ranks it first."""
    with Oneiros(f"sqlite:///{tmp_path}/events.db") as app:
        app.create_golem("g")
        chat = _chat()
        for start in range(0, len(chat), 2):
            app.record_episodes("g", chat[start : start + 2])
            app.dream("g")
        made = _timelines(app)
        assert [t.source_episode_ticks for t in made] == [(1, 2, 3, 4), (1, 2, 3, 4, 7, 8)]
        last = made[-1]
        assert last.key == "timeline:budget tracker"
        assert last.text == (
            "Budget tracker: what user brought up about it, in order: "
            "15 March 2024: User is building user's personal budget tracker with Flask (turns 1, 2); "
            "19 March 2024: User is adding transaction error handling to user's budget tracker this week (turns 3, 4); "
            "24 March 2024: User is hardening security of the budget tracker before the launch (turns 7, 8)."
        )
        assert not flaws(last.text)
        ranked = app.recall("g", "In what order did I bring up parts of my budget tracker?", record=False).ranking()
        texts = [i.text for i in ranked]
        assert texts[0] == last.text
        assert made[0].text not in texts
        # The turns it names still rank on their own: a timeline is no fuller form of a turn.
        turns = app.recall("g", "transaction error handling IntegrityError", record=False).ranking()
        assert any(i.kind == "episode" and i.source_ticks == (3,) for i in turns)


def test_a_models_timeline_comes_through_the_versioned_prompt(chat_server: ChatServer) -> None:
    """With a model, the user's turns on the subject go to the timeline prompt, and its entries
    become the timeline, naming only turns it was shown, dated by the phase."""
    golems = Golems(
        open_store("memory://"),
        deps=Deps(clock=FixedClock(datetime(2024, 4, 1, tzinfo=UTC)), ids=SequentialIds(), seed=3),
    )
    golems.create("g")
    golems.record_episodes("g", _chat())
    entries = [{"tick": 1, "text": "The user started the budget tracker"}, {"tick": 7, "text": "hardened it"}]
    entries.append({"tick": 99, "text": "never shown"})
    chat_server.replies = {"what the user brought up about the subject": json.dumps({"timeline": entries})}
    InProcessExecutor(golems, _generator(chat_server), settings=HARDENED).run_cycle("g")
    prompts = [r["messages"][-1]["content"] for r in chat_server.requests]
    asked = [p for p in prompts if "what the user brought up about the subject" in p]
    assert asked
    assert "Subject: budget tracker" in asked[0]
    made = [
        r.event
        for r in golems.store.read_stream("g", types=(DreamObservation,))
        if isinstance(r.event, DreamObservation) and r.event.kind == "timeline"
    ]
    assert made
    assert made[0].text.startswith("Budget tracker: what user brought up about it, in order: 15 March 2024: ")
    assert 99 not in made[0].source_episode_ticks

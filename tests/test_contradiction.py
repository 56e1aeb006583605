"""Contradictions (issue 36): a user's "I've never ..." and another of their turns that says they
did it are named together in one dream item, keyed by the never-statement, found by the offline
rule in either order and across nights, or by a model through the versioned ``contradiction``
prompt; recall shows the item in place of its two turns."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from oneiros import Deps, FixedClock, Golems, InProcessExecutor, SequentialIds, open_store
from oneiros.app._oneiros import Oneiros
from oneiros.events._observations import DreamObservation
from oneiros.events._types import Episode
from oneiros.generators._lines import said_lines
from oneiros.generators._offline import OfflineGenerator
from oneiros.generators._protocol import GenerationRequest, TaskInputs
from oneiros.lab._quality import flaws
from oneiros.settings._prompts import PromptSet
from tests.chat_server import HARDENED, ChatServer
from tests.test_content_openai import _generator

_DAY = datetime(2024, 3, 2, 9, 0, tzinfo=UTC)
_NEVER = "I've never used any citation management software, like Zotero, so can you explain how it works?"
_DID = "I just downloaded Zotero this morning and set up my first library."


def _turn(tick: int, text: str, speaker: str = "user", day: int = 0) -> Episode:
    return Episode(tick=tick, summary=text, speaker=speaker, time=_DAY + timedelta(days=day, minutes=tick))


def _offline(episodes: list[Episode]) -> list[dict[str, object]]:
    prompt = PromptSet().render("contradiction", episodes=said_lines(episodes))
    request = GenerationRequest(
        call_key="c:nrem:contradiction:0",
        phase="nrem",
        task="contradiction",
        prompt=prompt,
        given=TaskInputs(episodes=tuple(episodes)),
    )
    found: list[dict[str, object]] = json.loads(OfflineGenerator().generate(request).text)["contradictions"]
    return found


def test_a_never_statement_and_an_earlier_turn_that_did_it_are_named_together() -> None:
    """The user downloaded Zotero on 2 March and said a week later they never used such software:
    one item naming both turns, never-statement first, in a whole sentence with both days."""
    found = _offline([_turn(52, _NEVER, day=7), _turn(38, _DID)])
    assert found == [
        {
            "text": 'On 9 March 2024 the user said "I\'ve never used any citation management software, like Zotero", '
            'but on 2 March 2024 they said "I just downloaded Zotero this morning and set up my first library".',
            "ticks": [52, 38],
        }
    ]
    assert not flaws(str(found[0]["text"]))


@settings(max_examples=30, deadline=None)
@given(never_first=st.booleans(), gap=st.integers(min_value=0, max_value=60))
def test_the_order_and_the_days_between_do_not_matter(never_first: bool, gap: int) -> None:
    """Whichever turn comes first, however many days apart, the never-statement and the turn that
    contradicts it are found, named by both ticks."""
    never = _turn(10 if never_first else 20, _NEVER, day=0 if never_first else gap)
    did = _turn(20 if never_first else 10, _DID, day=gap if never_first else 0)
    found = _offline([never, did])
    assert [f["ticks"] for f in found] == [[never.tick, did.tick]]


def test_no_item_when_the_other_turn_is_negated_a_question_or_about_something_else() -> None:
    """Precision: a second denial, a question about the thing, an assistant's turn and a turn about
    another thing contradict nothing."""
    others = [
        _turn(2, "I still haven't downloaded Zotero, it looked complicated."),
        _turn(3, "How do I import a library into Zotero?"),
        _turn(4, "I downloaded Zotero for you and made a library.", speaker="assistant"),
        _turn(5, "I just downloaded Mendeley and set up my first library."),
    ]
    assert _offline([_turn(1, _NEVER), *others]) == []


def test_a_flask_route_written_and_later_denied() -> None:
    """Two shared words (routes, Flask) tie "I've never written any Flask routes" to the earlier
    work on the homepage route."""
    did = _turn(24, "I'm trying to implement the basic homepage route with Flask, can you check it?")
    never = _turn(58, "I've never written any Flask routes or handled HTTP requests in this project.", day=5)
    assert [f["ticks"] for f in _offline([never, did])] == [[58, 24]]


def _app(tmp_path: Path) -> Oneiros:
    app = Oneiros(f"sqlite:///{tmp_path}/events.db")
    app.create_golem("g")
    return app


def _contradictions(app: Oneiros) -> list[DreamObservation]:
    return [
        r.event
        for r in app.store.read_stream("g", types=(DreamObservation,))
        if isinstance(r.event, DreamObservation) and r.event.kind == "contradiction"
    ]


def test_across_nights_the_item_is_found_and_recall_shows_it_for_both_turns(tmp_path: Path) -> None:
    """Night one holds the download, night three the denial: the third night's dream names both
    (keyed by the denial's tick), and recall of Zotero shows the item in place of its two turns."""
    with _app(tmp_path) as app:
        app.record_episodes("g", [_turn(1, _DID), _turn(2, "Great, Zotero is a good choice.", "assistant")])
        app.dream("g")
        app.record_episodes("g", [_turn(3, "Let's plan my essay outline today.", day=3)])
        app.dream("g")
        assert _contradictions(app) == []
        app.record_episodes("g", [_turn(4, _NEVER, day=7)])
        app.dream("g")
        made = _contradictions(app)
        assert [(o.key, o.source_episode_ticks) for o in made] == [("contradiction:4", (4, 1))]
        ranked = app.recall("g", "did the user use Zotero?", record=False).ranking()
        shown = [i for i in ranked if 1 in i.source_ticks or 4 in i.source_ticks]
        assert shown[0].text == made[0].text


def test_a_models_contradiction_comes_through_the_versioned_prompt(chat_server: ChatServer) -> None:
    """With a model, the never-statement and the turns sharing its rarest word go to the
    contradiction prompt, and its answer becomes one item naming only ticks it was shown."""
    golems = Golems(
        open_store("memory://"),
        deps=Deps(clock=FixedClock(datetime(2024, 3, 20, tzinfo=UTC)), ids=SequentialIds(), seed=3),
    )
    golems.create("g")
    golems.record_episodes("g", [_turn(1, _DID), _turn(2, "Nice.", "assistant"), _turn(3, _NEVER, day=7)])
    said = {"text": "The user said they never used Zotero, yet they downloaded it.", "ticks": [3, 1, 99]}
    chat_server.replies = {"says the user never did something": json.dumps({"contradictions": [said]})}
    InProcessExecutor(golems, _generator(chat_server), settings=HARDENED).run_cycle("g")
    prompts = [r["messages"][-1]["content"] for r in chat_server.requests]
    asked = [p for p in prompts if "says the user never did something" in p]
    assert len(asked) == 1
    assert "Nice." not in asked[0]
    made = [
        r.event
        for r in golems.store.read_stream("g", types=(DreamObservation,))
        if isinstance(r.event, DreamObservation) and r.event.kind == "contradiction"
    ]
    assert [(o.text, o.key, o.source_episode_ticks) for o in made] == [
        ("The user said they never used Zotero, yet they downloaded it.", "contradiction:3", (3, 1))
    ]


def test_a_denial_first_is_named_on_the_night_of_the_later_turn(tmp_path: Path) -> None:
    """The never-statement on night one, the turn that did it on night two: the second night's
    dream finds the clash, keyed by the never-statement's tick, never-statement first."""
    with _app(tmp_path) as app:
        app.record_episodes("g", [_turn(1, _NEVER)])
        app.dream("g")
        assert _contradictions(app) == []
        app.record_episodes("g", [_turn(2, _DID, day=4)])
        app.dream("g")
        assert [(o.key, o.source_episode_ticks) for o in _contradictions(app)] == [("contradiction:1", (1, 2))]


def test_another_speaker_does_not_contradict_the_user() -> None:
    """Two people in a chat each speak for their own: Nate downloading Zotero says nothing against
    Joanna's never having used it."""
    joanna = _turn(1, _NEVER, speaker="Joanna")
    nate = _turn(2, _DID, speaker="Nate")
    assert _offline([joanna, nate]) == []

"""A shared image is a field of the episode (``Episode.shared``, EpisodeRecorded v4), not a marker in
its text: the LoCoMo importer fills it, the offline consolidation reads it, and a v3 log whose
summaries end in the importer's ``[shares ...]`` marker is lifted into it."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oneiros import open_store, replay
from oneiros._errors import EpisodeFileError
from oneiros.episodes._episodes import load_episodes
from oneiros.events._observations import DreamObservation
from oneiros.events._types import Episode, EpisodeRecorded, SharedImage
from oneiros.events._upcasters import _episode_v3_to_v4
from oneiros.generators._lines import said_line
from oneiros.lab._locomo import locomo_samples, locomo_sessions
from oneiros.store._history import import_history
from oneiros.store._store import EventStore
from tests.cli_runner import run_cli

HISTORIES = Path(__file__).parent / "histories"
GOLDEN = HISTORIES / "episodes_v3.jsonl"
CONVERSATION = HISTORIES / "episodes_v3_conversation.json"


def _v3_summaries() -> list[str]:
    """The summaries as the v3 importer wrote them, read from the golden file itself."""
    lines = [json.loads(line) for line in GOLDEN.read_text().splitlines()]
    return [line["state"]["data"]["episode"]["summary"] for line in lines if line["topic"] == "EpisodeRecorded.v3"]


def _episodes(store: EventStore) -> list[Episode]:
    return [r.event.episode for r in store.read_all(types=[EpisodeRecorded]) if isinstance(r.event, EpisodeRecorded)]


def test_the_v3_golden_log_lifts_each_marker_into_the_field_and_says_the_same() -> None:
    """episodes_v3.jsonl was written by the code before v4 (a LoCoMo-format conversation imported,
    then one offline cycle). Lifted, each summary is the turn's own text (empty for a turn that only
    shared an image), the marker is the ``shared`` field (no caption where the v3 text said "an
    image"), and ``said()`` gives back each v3 summary exactly; the log replays to the state it was
    recorded with."""
    store = open_store("memory://")
    assert 80 == import_history(store, GOLDEN)
    episodes = _episodes(store)
    assert [
        ("Hi Teo! I adopted a puppy last weekend.", "a photo of a small brown dog on a sofa"),
        ("What is the puppy's name?", None),
        ("Her name is Biscuit. We walk by the river every morning now.", None),
        ("I started pottery classes yesterday.", ""),
        ("", "a photo of a dog chewing a shoe"),
        ("How is Biscuit doing?", None),
        ("She learned to sit last week. Look at her!", "a photo of a dog sitting on grass"),
        ("My pottery teacher moved the class to Thursdays.", "a photo of a clay vase"),
    ] == [(e.summary, None if e.shared is None else e.shared.caption or "") for e in episodes]
    assert _v3_summaries() == [e.said() for e in episodes]
    state = replay(store)["golden-episodes-v3"]
    assert ("Waking", 80, 8, 1) == (state.mode, state.version, state.episodes, state.cycles_completed)


def test_importing_and_dreaming_today_gives_the_v3_episodes_and_observations(tmp_path: Path) -> None:
    """The same conversation imported and dreamed by today's code: its episodes are the lifted v3
    ones, and the offline consolidation, reading the field, writes the very observations the v3
    code wrote by parsing the marker ("Mara shared a photo of ...", "Teo shared an image.")."""
    url = f"sqlite:///{tmp_path}/e.db"
    golem = ["--store", url, "--golem", "golden-episodes-v3"]
    run_cli(["import", str(CONVERSATION), *golem], check=True)
    run_cli(["dream", *golem, "--seed", "7"], check=True)
    golden = open_store("memory://")
    import_history(golden, GOLDEN)
    with open_store(url) as store:
        assert _episodes(golden) == _episodes(store)
        made = [r.event.text for r in store.read_all(types=[DreamObservation])]
    want = [r.event.text for r in golden.read_all(types=[DreamObservation])]
    assert want == made
    assert "3 March 2026: Teo shared an image." in made


def test_a_locomo_turn_gives_its_text_and_its_image_apart() -> None:
    """A turn with a caption, one with only an image URL and one with only an image: the summary is
    the turn's text as written, the image a field; a turn with neither text nor image is passed over."""
    [sample] = locomo_samples(CONVERSATION)
    [first, _] = locomo_sessions(sample, str(CONVERSATION))
    assert [
        ("Hi Teo! I adopted a puppy last weekend.", SharedImage(caption="a photo of a small brown dog on a sofa")),
        ("What is the puppy's name?", None),
        ("Her name is Biscuit. We walk by the river every morning now.", None),
        ("I started pottery classes yesterday.", SharedImage()),
        ("", SharedImage(caption="a photo of a dog chewing a shoe")),
    ] == [(e.summary, e.shared) for e in first.episodes]
    assert "[tick 4 · 2026-03-03 16:08 · Teo] I started pottery classes yesterday. [shares an image]" == said_line(
        first.episodes[3]
    )


def test_an_episode_says_nothing_only_when_it_shares_nothing(tmp_path: Path) -> None:
    """An empty summary is refused, naming the line and field, unless the episode shared an image."""
    path = tmp_path / "e.jsonl"
    path.write_text(json.dumps({"tick": 1, "summary": "", "shared": {"caption": "a photo of a cat"}}) + "\n")
    [episode] = load_episodes(path)
    assert "[shares a photo of a cat]" == episode.said()
    path.write_text(json.dumps({"tick": 1, "summary": " "}) + "\n")
    with pytest.raises(EpisodeFileError) as caught:
        load_episodes(path)
    assert "character other than whitespace" in str(caught.value)


_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)
_CAPTION = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="]"), min_size=1, max_size=30)


@settings(max_examples=200, deadline=None)
@given(text=_TEXT, caption=st.none() | _CAPTION.filter(lambda c: c.strip() == c and c != "an image"))
def test_any_v3_marker_the_importer_wrote_lifts_to_the_same_text(text: str, caption: str | None) -> None:
    """Whatever a turn said and whatever its caption, the v3 importer's summary (the text, then
    ``[shares <caption or "an image">]``, stripped) lifts to a v4 episode whose ``said()`` is that
    summary and whose ``shared`` is the caption; a summary with no marker is left as it was."""
    v3 = f"{text} [shares {caption or 'an image'}]".strip()
    lifted = _episode_v3_to_v4({"episode": {"tick": 1, "summary": v3}})["episode"]
    episode = msgspec.convert(lifted, Episode)
    assert (v3, SharedImage(caption=caption)) == (episode.said(), episode.shared)
    plain = {"episode": {"tick": 1, "summary": text or "x"}}
    if "[shares " not in (text or "x"):
        assert plain == _episode_v3_to_v4(plain)

"""The evaluation's answer step against a local chat-completions server (tests/chat_server.py), and
`oneiros eval locomo` on LoCoMo-format files missing what the reference arm or a tidy file has:
observations, summaries, turns' text, sessions' turns, evidence that names real turns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oneiros.events._types import SharedImage
from oneiros.lab._answer import answer_prompt_version
from oneiros.lab._locomo import answer_f1, locomo_conversations, locomo_f1
from tests.chat_server import ChatServer
from tests.test_cli import run
from tests.test_eval import _locomo

_REPLIES = {
    "Question: When did Ana start pottery?": "7 May 2023",
    "Question: What is the name of Ben's dog?": "a greyhound named Comet",
    "Question: What did Ana make in pottery?": "a vase, a bowl",
}


def test_answers_come_from_the_model_with_the_first_items_and_are_read_back_from_a_kept_run(
    tmp_path: Path, chat_server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--answer 5: each question with a gold answer is asked of the configured model once per arm,
    with the first 5 items, dated and named, at temperature 0; LoCoMo's token F1 per category
    (multi-hop: the best part of the answer for each part of the gold one) and what answering cost
    are reported apart from dreaming's (the offline dreams cost $0, the answers do not). Scored
    again from the kept run, the answers are read back: the same figures, no request."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    chat_server.replies = dict(_REPLIES)
    path, kept = _locomo(tmp_path), tmp_path / "arms"
    common = ("eval", "locomo", str(path), "--arms", "none,dream", "--answer", "5", "--base-url", chat_server.url)

    first = run(*common, "--keep", str(kept), "--json")
    requests = len(chat_server.requests)
    again = run(*common, "--from", str(kept), "--json")

    assert 0 == first.returncode, first.stderr
    assert 0 == again.returncode, again.stderr
    assert 6 == requests == len(chat_server.requests)
    out, rerun = json.loads(first.stdout)["arms"], json.loads(again.stdout)["arms"]
    for arm in ("none", "dream"):
        answer = out[arm]["answer"]
        assert {"temporal": 1.0, "single-hop": 0.5, "multi-hop": 1.0, "overall": 0.8333} == answer["f1"]
        assert (3, 3, "gpt-4o-mini", answer_prompt_version()) == (
            answer["questions"],
            answer["calls"],
            answer["model"],
            answer["prompt_version"],
        )
        assert answer["tokens"] > 0
        assert answer["usd"] > 0.0
        assert answer | {"calls": 0} == rerun[arm]["answer"]
    assert 0.0 == out["dream"]["usd"]
    assert out["dream"]["tokens"] > 0
    asked = [r for r in chat_server.requests[:3] if "When did Ana start pottery?" in r["messages"][-1]["content"]]
    assert 1 == len(asked)
    assert (0, 64) == (asked[0]["temperature"], asked[0]["max_tokens"])
    assert "- [8 May 2023] Ana: Hi Ben! I started pottery classes yesterday." in asked[0]["messages"][-1]["content"]


def test_answering_without_the_model_key_is_one_line_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--answer with no API key in the environment: exit 2, one line, no arm kept."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    kept = tmp_path / "arms"

    result = run("eval", "locomo", str(_locomo(tmp_path)), "--answer", "5", "--keep", str(kept))

    assert 2 == result.returncode
    assert ["error: cannot answer questions with the openai generator: no API key, $OPENAI_API_KEY is not set"] == (
        result.stderr.strip().splitlines()
    )
    assert not kept.exists()


def test_locomo_f1_scores_each_category_as_locomo_does() -> None:
    """Words are compared by their Porter stems less articles; a multi-hop gold list is scored part
    by part against the answer's best part; an open-domain gold answer counts up to its first ';'."""
    assert (1.0, 0.8) == (answer_f1("The dogs running", "dog run"), answer_f1("the dogs were running", "dog run"))
    assert 0.5 == locomo_f1("pottery", "pottery, painting", "multi-hop")
    assert 1.0 == locomo_f1("painting, pottery", "pottery, painting", "multi-hop")
    assert 1.0 == locomo_f1("likely yes", "Likely yes; she enjoys classical music", "open-domain")
    assert 0.6667 == round(locomo_f1("yes", "yes, likely", "temporal"), 4)


def _ragged(tmp_path: Path) -> Path:
    """A LoCoMo-format file with no observations or summaries; an empty session; a turn sharing an
    image with no caption and no text; a turn with nothing in it; evidence naming a turn that does
    not exist; category 5; and a second conversation whose sessions are all empty."""
    sample = {
        "sample_id": "ragged",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "9:00 am on 2 June, 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "I planted tomatoes in the allotment."},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "", "img_url": ["https://example.org/a.jpg"]},
                {"speaker": "Ben", "dia_id": "D1:3", "text": "  "},
            ],
            "session_2_date_time": "9:00 am on 3 June, 2023",
            "session_2": [],
            "session_3_date_time": "9:00 am on 9 June, 2023",
            "session_3": [
                {
                    "speaker": "Ben",
                    "dia_id": "D3:1",
                    "text": "Look at my kayak!",
                    "img_url": "https://example.org/b.jpg",
                    "blip_caption": "a photo of a red kayak on a lake",
                },
            ],
        },
        "qa": [
            {"question": "What did Ana plant there?", "answer": "tomatoes", "evidence": ["D1:1"], "category": 4},
            {"question": "What colour is Ben's kayak?", "answer": "red", "evidence": ["D3:1", "D9:9"], "category": 1},
            {"question": "What did Ben share an image of?", "evidence": ["D1:2"], "category": 2},
            {"question": "What did Ana plant in the desert?", "adversarial_answer": "cacti", "category": 5},
        ],
    }
    empty = {
        "sample_id": "silent",
        "conversation": {"speaker_a": "Cy", "speaker_b": "Di", "session_1": []},
        "qa": [{"question": "What did Cy say?", "answer": "nothing", "evidence": ["D1:1"], "category": 4}],
    }
    path = tmp_path / "ragged.json"
    path.write_text(json.dumps([sample, empty]))
    return path


def test_a_ragged_locomo_file_is_evaluated_with_the_arms_it_can_have(tmp_path: Path) -> None:
    """The ragged file reads as two conversations, the silent one with no session; the image with
    no caption is a turn that shares an image, the empty turn is passed over. With no --arms the
    reference arm is left out with a note (no observations); evidence naming a missing turn counts
    as a miss; category 5 and the silent conversation's question are left out and counted."""
    path = _ragged(tmp_path)
    ragged, silent = locomo_conversations(path)

    result = run("eval", "locomo", str(path), "--json")

    assert [["D1:1", "D1:2"], ["D3:1"]] == [[e.ref for e in s.episodes] for s in ragged.sessions]
    image_only = ragged.sessions[0].episodes[1]
    assert ("", SharedImage(), "[shares an image]") == (image_only.summary, image_only.shared, image_only.said())
    assert ([], [], 2) == (silent.sessions, silent.questions, ragged.skipped + silent.skipped)
    assert 0 == result.returncode, result.stderr
    assert [f"{path} has no observations of its own: no reference arm"] == result.stderr.strip().splitlines()
    out = json.loads(result.stdout)
    assert (3, 2, ["none", "dream"]) == (out["questions"], out["skipped_questions"], list(out["arms"]))
    for arm in out["arms"].values():
        assert {"single-hop": 1.0, "multi-hop": 0.5, "temporal": 1.0, "overall": 0.8333} == arm["recall@10"]

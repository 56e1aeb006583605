"""BEAM's chats in and what a reader pays for out (issue 36): `oneiros eval beam` reads a chat
folder of BEAM's shape (small files the tests write, never BEAM's text), scores recall at context
budgets in tokens beside recall@k, the order of a knowledge update's current and outdated turns,
and the dream outputs' text quality, the same again from the kept logs with no generator."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oneiros._errors import InputError
from oneiros.episodes._parts import refs_of
from oneiros.lab._answer import memory_line
from oneiros.lab._beam import beam_chat_dirs, beam_conversation
from oneiros.lab._budget_recall import budget_prefix, current_first, token_counter
from oneiros.lab._quality import flaws
from oneiros.projections._recall import RecallItem
from tests.test_cli import run
from tests.test_eval import _locomo

LONG = "Paste of the build log follows.\n\n" + "\n".join(f"step {n}: compiled module_{n}.py" for n in range(1500))


def _message(role: str, mid: int, content: str, **more: object) -> dict[str, object]:
    return {"role": role, "id": mid, "content": content, **more}


def _chat() -> list[dict[str, object]]:
    """Two batches three weeks apart; the first's anchor on its first message, as BEAM writes it."""
    return [
        {
            "batch_number": 1,
            "time_anchor": None,
            "turns": [
                [
                    _message(
                        "user",
                        0,
                        "I'm Dana; yesterday my budget app's API took 300 ms. Can caching help?",
                        time_anchor="March-01-2024",
                    ),
                    _message("assistant", 1, "Caching the dashboard query should bring 300 ms down."),
                ],
                [
                    _message("user", 2, "Always show code with syntax highlighting, please."),
                    _message("assistant", 3, LONG),
                ],
            ],
        },
        {
            "batch_number": 2,
            "time_anchor": "March-22-2024",
            "turns": [
                [
                    _message("user", 4, "After the caching work last week the API now averages 250 ms. Is that fine?"),
                    _message("assistant", 5, "Good: 250 ms is well inside your target."),
                ],
                [
                    _message("user", 6, "I prefer SQLite over Postgres for this app."),
                    _message("assistant", 7, "Noted."),
                ],
            ],
        },
    ]


def _questions() -> dict[str, list[dict[str, object]]]:
    return {
        "knowledge_update": [
            {
                "question": "How fast does the dashboard API answer?",
                "answer": "250 ms",
                "source_chat_ids": {"original_info": [0], "updated_info": [4]},
            },
            {
                "question": "What is the API's speed?",
                "answer": "250 ms",
                "source_chat_ids": {"original_info": [4], "updated_info": [4]},
            },
        ],
        "instruction_following": [{"question": "Show me the login code.", "source_chat_ids": [2]}],
        "event_ordering": [{"question": "In what order did I bring things up?", "source_chat_ids": [[0, 2], 6]}],
        "multi_session_reasoning": [
            {
                "question": "Which database and which speed?",
                "source_chat_ids": [],
                "conversation_references": ["chat_id: 6", "chat_id: 4"],
            }
        ],
        "preference_following": [
            {"question": "Which database should I use?", "source_chat_ids": [], "preference_being_tested": "SQLite"}
        ],
        "abstention": [{"question": "What is my cat called?", "ideal_response": "Not in the chat."}],
        "information_extraction": [{"question": "What did the build log compile?", "source_chat_ids": [3]}],
    }


def _folder(root: Path, name: str = "1", chat: object = None) -> Path:
    folder = root / name
    (folder / "probing_questions").mkdir(parents=True)
    (folder / "chat.json").write_text(json.dumps(_chat() if chat is None else chat))
    (folder / "probing_questions" / "probing_questions.json").write_text(json.dumps(_questions()))
    return folder


def test_a_beam_chat_is_exchanges_spread_over_its_batches_with_evidence_from_each_form(tmp_path: Path) -> None:
    """Each exchange is a session, a batch's spread evenly from its anchor (9:00 UTC) to the next
    batch's, messages a minute apart, speakers user and assistant, ids as refs and a message over
    16 KB in parts <id>#n; evidence is read from a list, nested lists, a dict, else `chat_id: N`
    references; abstention and a question whose evidence is free text only are left out and
    counted; a knowledge update's current and outdated turns are kept unless they are the same."""
    conversation = beam_conversation(_folder(tmp_path))

    starts = [s.when for s in conversation.sessions]
    assert [
        datetime(2024, 3, 1, 9, tzinfo=UTC),
        datetime(2024, 3, 11, 21, tzinfo=UTC),
        datetime(2024, 3, 22, 9, tzinfo=UTC),
        datetime(2024, 4, 1, 21, tzinfo=UTC),
    ] == starts
    first = conversation.sessions[0].episodes
    assert [("user", "0"), ("assistant", "1")] == [(e.speaker, e.ref) for e in first]
    assert [datetime(2024, 3, 1, 9, tzinfo=UTC), datetime(2024, 3, 1, 9, 1, tzinfo=UTC)] == [e.time for e in first]
    long_parts = [e.ref for e in conversation.sessions[1].episodes if e.ref and e.ref.startswith("3")]
    assert len(long_parts) > 1
    assert all(r.startswith("3#") for r in long_parts)
    by_category = {q.category: q for q in conversation.questions}
    assert ("0", "2", "6") == by_category["event_ordering"].evidence
    assert ("6", "4") == by_category["multi_session_reasoning"].evidence
    update, same = (q for q in conversation.questions if q.category == "knowledge_update")
    assert (("4",), ("0",)) == (update.current, update.outdated)
    assert ((), ()) == (same.current, same.outdated)
    assert {"abstention (no evidence by design)": 1, "evidence names no message id": 1} == conversation.left_out
    assert 2 == conversation.skipped


def test_beam_folders_are_found_in_numeric_order_and_bad_ones_are_one_line(tmp_path: Path) -> None:
    """A chats/100K-shaped folder gives its chat folders in numeric order (10 after 2), --chats
    picks some; a folder with none, a chat that is not named, and an undatable anchor are one
    line each naming what was wrong."""
    for name in ("10", "2", "1"):
        _folder(tmp_path, name)
    (tmp_path / "notes").mkdir()

    assert ["1", "2", "10"] == [d.name for d in beam_chat_dirs(tmp_path)]
    assert ["10"] == [d.name for d in beam_chat_dirs(tmp_path, ["10"])]
    assert [tmp_path / "2"] == beam_chat_dirs(tmp_path / "2")
    with pytest.raises(InputError, match="no chat '3' in"):
        beam_chat_dirs(tmp_path, ["3"])
    with pytest.raises(InputError, match=r"holds no chat\.json"):
        beam_chat_dirs(tmp_path / "notes")
    bad = _chat()
    bad[1]["time_anchor"] = "sometime in spring"
    folder = _folder(tmp_path / "bad", chat=bad)
    with pytest.raises(InputError, match=r"batch 2: time_anchor 'sometime in spring' is not a date"):
        beam_conversation(folder)


def test_eval_beam_end_to_end_and_again_from_the_kept_logs(tmp_path: Path) -> None:
    """`oneiros eval beam DIR --json`: recall per ability at k and at each budget, the knowledge
    update's order, the text quality and what was left out; scored again with --from, every figure
    is the same and no generator is called. A bad --budget-tokens or --tokenizer is one line, told
    before any arm is built."""
    _folder(tmp_path / "chats", "1")
    kept = tmp_path / "arms"

    first = run("eval", "beam", str(tmp_path / "chats"), "--keep", str(kept), "--json", "--budget-tokens", "50,4000")
    again = run("eval", "beam", str(tmp_path / "chats"), "--from", str(kept), "--json", "--budget-tokens", "50,4000")
    bad = run("eval", "beam", str(tmp_path / "chats"), "--budget-tokens", "250,lots")
    unknown = run("eval", "beam", str(tmp_path / "chats"), "--tokenizer", "words", "--keep", str(tmp_path / "no"))

    assert 0 == first.returncode, first.stderr
    out, rerun = json.loads(first.stdout), json.loads(again.stdout)
    assert (6, 2) == (out["questions"], out["skipped_questions"])
    assert {"abstention (no evidence by design)": 1, "evidence names no message id": 1} == out["left_out"]
    assert ([50, 4000], "chars/4") == (out["budget_tokens"], out["tokenizer"])
    none, dream = out["arms"]["none"], out["arms"]["dream"]
    assert {"knowledge_update", "event_ordering", "overall"} <= set(none["recall@4000tokens"])
    # 50 tokens hold a short message or two; 4,000 the whole chat but the long build log.
    assert none["items@50tokens"] < none["items@4000tokens"]
    assert none["recall@50tokens"]["overall"] < none["recall@4000tokens"]["overall"]
    assert 1 == none["updates"]
    assert none["current_first"] in (0.0, 1.0)
    assert 0 == none["quality"]["outputs"]
    assert dream["quality"]["outputs"] > 0
    assert dream["generator_calls"] > 0
    for name, arm in out["arms"].items():
        again_arm = rerun["arms"][name]
        for key in ("recall@5", "recall@10", "recall@50tokens", "recall@4000tokens", "current_first", "quality"):
            assert arm[key] == again_arm[key], key
        assert 0 == again_arm["generator_calls"]
    assert 2 == bad.returncode
    assert ["error: --budget-tokens 'lots' is not a whole number of tokens above 0 (e.g. 250,500,1000)"] == (
        bad.stderr.strip().splitlines()
    )
    assert 2 == unknown.returncode
    assert ["error: unknown tokenizer 'words': use chars/4 or tiktoken:<encoding> (cl100k_base)"] == (
        unknown.stderr.strip().splitlines()
    )
    assert not (tmp_path / "no").exists()


def test_budgets_leave_recall_at_k_as_it_was(tmp_path: Path) -> None:
    """The budgets' deeper ranking is asked apart: LoCoMo's recall@k is the same with budgets and
    without, and the JSON carries each budget's recall."""
    path = _locomo(tmp_path)

    plain = json.loads(run("eval", "locomo", str(path), "--arms", "none,dream", "--budget-tokens", "", "--json").stdout)
    budgeted = json.loads(run("eval", "locomo", str(path), "--arms", "none,dream", "--json").stdout)

    for arm in ("none", "dream"):
        assert plain["arms"][arm]["recall@10"] == budgeted["arms"][arm]["recall@10"]
        assert "recall@250tokens" not in plain["arms"][arm]
        assert {"recall@250tokens", "recall@500tokens", "recall@1000tokens"} <= set(budgeted["arms"][arm])


def _item(text: str, *refs: str) -> RecallItem:
    return RecallItem(kind="episode", ref=text[:8], text=text, score=0.0, source_refs=refs)


def test_a_budget_takes_the_ranking_prefix_that_fits_counted_whole() -> None:
    """Items are taken in order while their lines (`- text`, at four characters a token, rounded
    up) fit; the first that does not fit ends the prefix even when a later, shorter one would."""
    count = token_counter(None)
    ranked = [_item("a" * 18, "1"), _item("b" * 78, "2"), _item("c", "3")]  # lines of 5, 20 and 1 tokens

    assert [] == budget_prefix(ranked, 4, count)
    assert ["1"] == [i.source_refs[0] for i in budget_prefix(ranked, 24, count)]
    assert ["1", "2", "3"] == [i.source_refs[0] for i in budget_prefix(ranked, 26, count)]


@given(st.lists(st.text(min_size=1, max_size=60), max_size=12), st.integers(0, 200), st.integers(0, 200))
def test_a_larger_budget_never_holds_less(texts: list[str], small: int, more: int) -> None:
    """A budget's prefix fits it, and a larger budget's prefix starts with the smaller one's."""
    count = token_counter(None)
    ranked = [_item(t, str(n)) for n, t in enumerate(texts)]
    low, high = budget_prefix(ranked, small, count), budget_prefix(ranked, small + more, count)
    assert high[: len(low)] == low
    assert sum(count(memory_line(i, cut=False)) for i in low) <= small


def test_an_unknown_tokenizer_is_one_line() -> None:
    """A tokenizer that is neither chars/4 nor tiktoken:<encoding> is an InputError naming both."""
    with pytest.raises(InputError, match="unknown tokenizer 'words': use chars/4 or tiktoken:<encoding>"):
        token_counter("words")


def test_the_current_fact_must_rank_above_the_outdated_one() -> None:
    """Current above outdated counts; below, or neither ranked, or one item standing for both (the
    reader cannot tell which holds), does not; a part of a long turn (4#2) stands for its turn; a
    current turn ranked where the outdated is not at all counts."""
    new, old, other, both = _item("n", "4#2"), _item("o", "0"), _item("x", "9"), _item("b", "0", "4")

    assert current_first(["4"], ["0"], [other, new, old], refs_of)
    assert not current_first(["4"], ["0"], [old, new], refs_of)
    assert not current_first(["4"], ["0"], [other], refs_of)
    assert not current_first(["4"], ["0"], [both, new], refs_of)
    assert current_first(["4"], ["0"], [new], refs_of)


@pytest.mark.parametrize(
    ("text", "flaw"),
    [
        ("3 July 2023: Maria: But something not so great happened on 2 July 2023...", "cut"),
        ("The deploy moved to Render because the", "cut"),
        ("Dana asked for the schedule of sprint two,", "cut"),
        ("### Step 1: set up the project", "markup"),
        ("Evaluate the decision: ### Pros and cons of each.", "markup"),
        ("The perimeter is \\( a + b + c \\) here.", "markup"),
        ("Use **Caching** for the dashboard.", "markup"),
        ("Run `flask run` to start.", "markup"),
        ("The layout is app/ |-- app.py |-- models.py", "markup"),
        ("| name | value |\n| --- | --- |", "markup"),
        ("Assistant and others'll break down the tasks.", "ungrammatical"),
        ("Dana fixed the the login bug.", "ungrammatical"),
        ("The move is now on 27 February 2026 20 March, and they hired a van.", "ungrammatical"),
    ],
)
def test_each_text_quality_rule_catches_its_flaw(text: str, flaw: str) -> None:
    """Each rule of docs/evaluation.md flags the kind of text it is for, and only its own flaw."""
    assert (flaw,) == flaws(text)


@pytest.mark.parametrize(
    "text",
    [
        "24 November 2026: Rolled back the deploy on 23 November 2026.",
        "eth and btc were never apart — what one night lost, the other was already holding",
        "2 June 2023: Maria: Good to hear. | 12 June 2023: Maria is sorry about Max.",
        "I'll check it, and we've agreed that that plan had had its day.",
        'Dana said "ship it on Friday."',
        "The API answers in 250 ms (after caching)",
        "Dana codes in C# and F# daily; ticket #42 is closed.",
        "The move is in May, and the van is what Dana was working on",
    ],
)
def test_clean_text_has_no_flaw(text: str) -> None:
    """Whole sentences, a thread without a full stop, a thread's `|` between turns, contractions on
    pronouns and idiomatic doubled words are not flagged."""
    assert () == flaws(text)

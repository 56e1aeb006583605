"""The evaluation's answer step: each question answered by a model from the first k items recall
ranked for it, and scored by LoCoMo's token F1 against the gold answer (docs/evaluation.md).

The reader is the configured OpenAI-compatible generator (``cycle.generator.openai``), asked with
the lab's own :data:`ANSWER_PROMPT` (versioned by its hash), at temperature 0; what answering
spends is counted apart from what dreaming spent. Each answer is kept beside the arm's store
(``<arm>.answers.jsonl``) under the hash of the request that asked it, so scoring a kept run again
reads the answers back and calls no model: the same figures, at no cost.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from string import Template
from typing import Final

import msgspec

from oneiros.generators._prose import day_text
from oneiros.generators._protocol import GenerationRequest, Generator, request_hash, request_shape
from oneiros.lab._evidence import Question
from oneiros.lab._locomo import locomo_f1
from oneiros.projections._recall import RecallItem
from oneiros.settings._cycle import CycleBudget

__all__ = [
    "ANSWER_PROMPT",
    "AnswerReport",
    "AnswerSettings",
    "Reader",
    "answer_prompt_version",
    "answers_path",
    "memory_line",
    "memory_lines",
]

ANSWER_PROMPT: Final = (
    "Memories of a conversation, the most relevant first (dated; observations are restatements):\n"
    "$memories\nQuestion: $question\n"
    "Answer with a short phrase, in the memories' own words where you can, and write dates out "
    "(7 May 2023). If the memories do not say, give your best guess."
)
"""The reader's prompt, after LoCoMo's QA prompt, which asks for a short phrase in the context's own
words: ``$memories`` (:func:`memory_lines`) and ``$question``. Not a dream task, so not among the
product's prompts (``PromptSet``)."""


def answer_prompt_version(template: str = ANSWER_PROMPT) -> str:
    """The template's version as the report names it: the first 12 hex digits of its SHA-256, as
    the dream prompts' versions are (``PromptSet.version``)."""
    return hashlib.sha256(template.encode()).hexdigest()[:12]


_ITEM_CHARS = 1_000
"""An item longer than this is cut for the prompt: a thread or a salient episode can run long."""


class AnswerSettings(msgspec.Struct, frozen=True, kw_only=True):
    k: int = 10
    """How many of recall's first items the reader is shown."""
    max_tokens: int = 64
    workers: int = 4
    """Questions asked at once: answers do not depend on each other, and a model call mostly waits."""


class AnswerReport(msgspec.Struct, kw_only=True):
    """One arm's answers: LoCoMo's token F1 per category and overall, and what answering cost."""

    f1: dict[str, float] = {}
    questions: int = 0
    """Questions answered (those with a gold answer)."""
    tokens: int = 0
    usd: float = 0.0
    calls: int = 0
    """Model calls this run made (0 when every answer was read back from a kept run)."""
    model: str = ""
    prompt_version: str = ""


class _Kept(msgspec.Struct, frozen=True, kw_only=True):
    """One answer as kept beside the arm's store."""

    hash: str
    text: str
    model: str
    tokens_in: int
    tokens_out: int
    usd: float


def answers_path(directory: Path, arm: str) -> Path:
    return directory / f"{arm}.answers.jsonl"


def _day(time: str | None) -> str:
    if not time:
        return ""
    try:
        return day_text(datetime.fromisoformat(time).date())
    except ValueError:
        return ""


def memory_line(item: RecallItem, *, cut: bool = True) -> str:
    """One item as the reader sees it: an episode with its day and speaker, a dream output marked
    as one (its text names its own days and people); with ``cut``, a long text is cut for a prompt."""
    text = " ".join(item.text.split())
    if cut and len(text) > _ITEM_CHARS:
        text = text[:_ITEM_CHARS].rsplit(" ", 1)[0] + " ..."
    if item.standing != "fact":
        return f"- (observation) {text}"
    day = _day(item.time)
    said = f"{item.speaker}: {text}" if item.speaker else text
    return f"- [{day}] {said}" if day else f"- {said}"


def memory_lines(items: Sequence[RecallItem]) -> str:
    """The items as the reader sees them, one a line (:func:`memory_line`)."""
    return "\n".join(memory_line(item) for item in items)


class Reader:
    """Answers questions with ``generator`` from the items given, keeping each answer in ``kept``."""

    def __init__(
        self,
        generator: Generator,
        budget: CycleBudget,
        kept: Path,
        settings: AnswerSettings,
        template: str = ANSWER_PROMPT,
    ) -> None:
        self.generator, self.budget, self.settings, self.template = generator, budget, settings, template
        self.kept = kept
        self.known: dict[str, _Kept] = {}
        if kept.exists():
            decoder = msgspec.json.Decoder(_Kept)
            for line in kept.read_bytes().splitlines():
                if line.strip():
                    answer = decoder.decode(line)
                    self.known[answer.hash] = answer
        self.lock = threading.Lock()

    def request(self, key: str, question: Question, items: Sequence[RecallItem]) -> GenerationRequest:
        return GenerationRequest(
            call_key=key,
            phase="answer",
            task="answer",
            prompt=Template(self.template).safe_substitute(memories=memory_lines(items), question=question.question),
            temperature=0.0,
            max_tokens=self.settings.max_tokens,
        )

    def _answer(self, request: GenerationRequest) -> tuple[_Kept, bool]:
        shape = request_shape(self.generator, request)
        digest = request_hash(shape)
        found = self.known.get(digest)
        if found is not None:
            return found, False
        made = self.generator.generate(request)
        usd = self.budget.price(shape.model).cost(made.tokens_in, made.tokens_out)
        kept = _Kept(
            hash=digest,
            text=made.text.strip(),
            model=shape.model,
            tokens_in=made.tokens_in,
            tokens_out=made.tokens_out,
            usd=usd,
        )
        with self.lock:
            self.known[digest] = kept
            with self.kept.open("ab") as out:
                out.write(msgspec.json.encode(kept) + b"\n")
        return kept, True

    def score(self, asked: Sequence[tuple[str, Question, Sequence[RecallItem]]]) -> AnswerReport:
        """Each (call key, question, its ranked items) answered and scored; questions without a
        gold answer are left out."""
        chosen = [(key, q, items[: self.settings.k]) for key, q, items in asked if q.answer is not None]
        requests = [self.request(key, q, items) for key, q, items in chosen]
        with ThreadPoolExecutor(max_workers=max(1, self.settings.workers)) as pool:
            answers = list(pool.map(self._answer, requests))
        report = AnswerReport(prompt_version=answer_prompt_version(self.template))
        sums: dict[str, float] = {}
        counts: dict[str, int] = {}
        for (_key, question, _items), (answer, called) in zip(chosen, answers, strict=True):
            got = locomo_f1(answer.text, question.answer or "", question.category)
            for category in (question.category, "overall"):
                sums[category] = sums.get(category, 0.0) + got
                counts[category] = counts.get(category, 0) + 1
            report.tokens += answer.tokens_in + answer.tokens_out
            report.usd += answer.usd
            report.calls += called
            report.model = report.model or answer.model
        report.f1 = {c: round(v / counts[c], 4) for c, v in sums.items()}
        report.questions = len(chosen)
        report.usd = round(report.usd, 6)
        return report

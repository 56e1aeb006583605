"""``oneiros eval locomo FILE``, ``oneiros eval chat FILE --questions Q`` and ``oneiros eval beam
DIR``: does dreaming help recall find what a question needs, at k items and at a budget of tokens
(docs/evaluation.md)."""

from __future__ import annotations

import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import msgspec
import typer

from oneiros._text import counted
from oneiros.cli._common import JsonOpt, console, emit_json, err_console, one_line_errors, table
from oneiros.cli._config import ConfigOpt, flag, load

if TYPE_CHECKING:  # annotations only: the commands import these on first use
    from collections.abc import Iterator, Sequence

    from oneiros.lab._eval import ArmReport, Progress
    from oneiros.lab._evidence import Conversation

__all__ = ["register"]

eval_app = typer.Typer(help="Measure what dreaming changes in recall, on a benchmark or your own transcripts.")

ArmsOpt = Annotated[
    str | None,
    typer.Option(
        "--arms",
        help="Comma-separated arms: none, dream, reference (reference needs observations). "
        "Default: all three, less reference when the file has no observations.",
        show_default=False,
    ),
]
KeepOpt = Annotated[
    Path | None, typer.Option("--keep", help="Keep each arm's store in this new directory (<arm>.db), to score again.")
]
FromOpt = Annotated[
    Path | None,
    typer.Option("--from", help="Score the arms a run kept here again, from their logs: no dream, no model call."),
]
EvalPresetOpt = Annotated[
    str, typer.Option("--preset", help="The schedule the dream arm sleeps by (default bumblebee: nightly when idle).")
]
GeneratorOpt = Annotated[
    str | None,
    typer.Option("--generator", help="The dream arm's generator: offline (default) or openai (OpenAI-compatible)."),
]
BaseUrlOpt = Annotated[
    str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint (key from $OPENAI_API_KEY).")
]
AnswerOpt = Annotated[
    int,
    typer.Option(
        "--answer",
        min=0,
        help="Answer each question from recall's first N items with the OpenAI-compatible model "
        "(cycle.generator.openai) and report LoCoMo's token F1; 0: no answers.",
    ),
]
BudgetOpt = Annotated[
    str,
    typer.Option(
        "--budget-tokens",
        help="Comma-separated context budgets in tokens: evidence recall of the ranking's prefix that fits each.",
    ),
]
TokenizerOpt = Annotated[
    str | None,
    typer.Option(
        "--tokenizer", help="How budget tokens are counted: chars/4 (default) or tiktoken:<encoding> (needs tiktoken)."
    ),
]


class _Scoring(msgspec.Struct, frozen=True):
    """The scoring options every eval command shares: budgets and how their tokens are counted."""

    budgets: str = "250,500,1000,2000"
    tokenizer: str | None = None


def locomo(
    *,
    file: Annotated[Path, typer.Argument(help="A LoCoMo-format JSON file.", show_default=False)],
    arms: ArmsOpt = None,
    keep: KeepOpt = None,
    from_dir: FromOpt = None,
    as_json: JsonOpt = False,
    preset: EvalPresetOpt = "bumblebee",
    generator: GeneratorOpt = None,
    base_url: BaseUrlOpt = None,
    answer: AnswerOpt = 0,
    budget_tokens: BudgetOpt = "250,500,1000,2000",
    tokenizer: TokenizerOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Evidence recall@5 and @10 per LoCoMo category, each conversation lived by a golem without
    dreams, with the configured dreams, and with LoCoMo's own observations as its dreams."""
    from oneiros.lab._locomo import locomo_conversations

    with one_line_errors():
        conversations = locomo_conversations(file)
    loading = (preset, generator, base_url, config)
    scoring = _Scoring(budget_tokens, tokenizer)
    _run(
        source=str(file),
        conversations=conversations,
        arms=arms,
        keep=keep,
        from_dir=from_dir,
        as_json=as_json,
        loading=loading,
        answer=answer,
        scoring=scoring,
    )


def chat(
    *,
    file: Annotated[Path, typer.Argument(help="A chat transcript: one message a line.", show_default=False)],
    questions: Annotated[
        Path, typer.Option("--questions", help="JSON lines: question, evidence (message ids), optional category.")
    ],
    session_gap: Annotated[
        float, typer.Option("--session-gap", min=0.0, help="Hours of silence that start a new session.")
    ] = 1.0,
    arms: ArmsOpt = "none,dream",
    keep: KeepOpt = None,
    from_dir: FromOpt = None,
    as_json: JsonOpt = False,
    preset: EvalPresetOpt = "bumblebee",
    generator: GeneratorOpt = None,
    base_url: BaseUrlOpt = None,
    answer: AnswerOpt = 0,
    budget_tokens: BudgetOpt = "250,500,1000,2000",
    tokenizer: TokenizerOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Evidence recall@5 and @10 of your own questions over your own transcript, lived by a golem
    without dreams and with the configured dreams."""
    from datetime import timedelta

    from oneiros.lab._evidence import chat_conversation

    with one_line_errors():
        conversation = chat_conversation(file, questions, name=file.stem, gap=timedelta(hours=session_gap))
    loading = (preset, generator, base_url, config)
    scoring = _Scoring(budget_tokens, tokenizer)
    _run(
        source=str(file),
        conversations=[conversation],
        arms=arms,
        keep=keep,
        from_dir=from_dir,
        as_json=as_json,
        loading=loading,
        answer=answer,
        scoring=scoring,
    )


def beam(
    *,
    directory: Annotated[
        Path,
        typer.Argument(help="BEAM's chats/100K (a folder of chat folders) or one chat folder.", show_default=False),
    ],
    chats: Annotated[
        str | None, typer.Option("--chats", help="Comma-separated chat folders to run (1,2,...); default all.")
    ] = None,
    arms: ArmsOpt = "none,dream",
    keep: KeepOpt = None,
    from_dir: FromOpt = None,
    as_json: JsonOpt = False,
    preset: EvalPresetOpt = "bumblebee",
    generator: GeneratorOpt = None,
    base_url: BaseUrlOpt = None,
    answer: AnswerOpt = 0,
    budget_tokens: BudgetOpt = "250,500,1000,2000",
    tokenizer: TokenizerOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Evidence recall per BEAM memory ability (abstention left out), at k items and at budgets of
    tokens, each chat lived by a golem without dreams and with the configured dreams; the share of
    knowledge updates whose current fact ranks above the outdated one; the dreams' text quality."""
    from oneiros.lab._beam import beam_conversations

    picked = [c.strip() for c in chats.split(",") if c.strip()] if chats else None
    with one_line_errors():
        conversations = beam_conversations(directory, picked)
    loading = (preset, generator, base_url, config)
    scoring = _Scoring(budget_tokens, tokenizer)
    _run(
        source=str(directory),
        conversations=conversations,
        arms=arms,
        keep=keep,
        from_dir=from_dir,
        as_json=as_json,
        loading=loading,
        answer=answer,
        scoring=scoring,
    )


def _budgets(text: str) -> tuple[int, ...]:
    from oneiros._errors import InputError

    out: list[int] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if not part.isdigit() or int(part) < 1:
            raise InputError(f"--budget-tokens {part!r} is not a whole number of tokens above 0 (e.g. 250,500,1000)")
        out.append(int(part))
    return tuple(sorted(set(out)))


def _run(
    *,
    source: str,
    conversations: Sequence[Conversation],
    arms: str | None,
    keep: Path | None,
    from_dir: Path | None,
    as_json: bool,
    loading: tuple[str, str | None, str | None, Path | None],
    answer: int = 0,
    scoring: _Scoring | None = None,
) -> None:
    from oneiros._errors import InputError
    from oneiros.generators._factory import check_api_key
    from oneiros.lab._answer import AnswerSettings
    from oneiros.lab._budget_recall import token_counter
    from oneiros.lab._eval import ARMS, EvalSettings, evaluate
    from oneiros.runtime._process import load_generator

    preset, generator, base_url, config = loading
    flags: dict[str, tuple[Any, str]] = {}
    flag(flags, "cycle.generator.kind", generator, "--generator")
    flag(flags, "cycle.generator.openai.base_url", base_url, "--base-url")
    effective = load(config, preset, flags)
    scoring = scoring or _Scoring()
    with one_line_errors():
        budgets = _budgets(scoring.budgets)
        if budgets:
            token_counter(scoring.tokenizer)  # an unknown tokenizer is told before any arm is built
        if arms is None:
            arms = ",".join(ARMS)
            if not any(c.has_reference for c in conversations):
                arms = "none,dream"
                err_console.print(f"{source} has no observations of its own: no reference arm", highlight=False)
        chosen = [a.strip() for a in arms.split(",") if a.strip()]
        unknown = [a for a in chosen if a not in ARMS]
        if unknown or not chosen:
            raise InputError(f"unknown arm {unknown[0] if unknown else arms!r}; use none, dream or reference")
        if "reference" in chosen and not any(c.has_reference for c in conversations):
            raise InputError(f"{source} has no observations of its own: the reference arm needs LoCoMo's")
        if keep is not None and from_dir is not None:
            raise InputError("--keep and --from cannot be given together: --from scores what a --keep kept")
        made = None
        if "dream" in chosen and from_dir is None:
            check_api_key(effective.cycle.generator, "eval")
            made = load_generator(effective.cycle.generator, effective.cycle.seed or 0)
        reader = None
        if answer:
            # The reader is the configured model whatever the dream arm dreams with (offline by default).
            model = msgspec.structs.replace(effective.cycle.generator, kind="openai")
            check_api_key(model, "answer questions")
            reader = load_generator(model)
        with _directory(keep or from_dir) as directory, _progress(quiet=as_json) as progress:
            reports = evaluate(
                conversations,
                directory,
                effective,
                EvalSettings(
                    answer=AnswerSettings(k=answer) if answer else None,
                    budgets=budgets,
                    tokenizer=scoring.tokenizer,
                    recall=effective.recall,
                ),
                chosen,  # type: ignore[arg-type]
                generator=made,
                rescore=from_dir is not None,
                progress=progress,
                reader=reader,
            )
    questions = sum(len(c.questions) for c in conversations)
    skipped = sum(c.skipped for c in conversations)
    left_out: dict[str, int] = {}
    for c in conversations:
        for reason, n in c.left_out.items():
            left_out[reason] = left_out.get(reason, 0) + n
    payload = {
        "file": source,
        "conversations": len(conversations),
        "questions": questions,
        "skipped_questions": skipped,
        "left_out": left_out,
        "budget_tokens": list(budgets),
        "tokenizer": scoring.tokenizer or "chars/4",
        "arms": {arm: _arm_json(r) for arm, r in reports.items()},
    }
    if as_json:
        emit_json(payload)
        return
    _show(source, reports, questions, skipped, left_out)
    _show_reader(reports, scoring.tokenizer or "chars/4")
    _show_answers(reports, answer)


def _arm_json(report: ArmReport) -> dict[str, Any]:
    out: dict[str, Any] = {f"recall@{k}": v for k, v in report.recall.items()}
    out |= {
        "tokens": report.tokens,
        "usd": report.usd,
        "outputs": report.outputs,
        "seconds": report.seconds,
        "cycles": report.cycles,
        "generator_calls": report.generator_calls,
        "questions": report.questions,
    }
    out |= {f"source_turns@{k}": v for k, v in report.source_turns.items()}
    out |= {f"recall@{b}tokens": v for b, v in report.budget_recall.items()}
    out |= {f"items@{b}tokens": v for b, v in report.budget_items.items()}
    out |= {"updates": report.updates, "current_first": report.current_first}
    out["quality"] = msgspec.to_builtins(report.quality)
    if report.answer is not None:
        out["answer"] = msgspec.to_builtins(report.answer)
    return out


_ORDER = ("multi-hop", "temporal", "open-domain", "single-hop")


def _categories(report: ArmReport) -> list[str]:
    return sorted(report.questions, key=lambda c: (c == "overall", _ORDER.index(c) if c in _ORDER else 9, c))


def _heading(category: str) -> str:
    # BEAM's abilities are snake_case: spaced, a narrow terminal folds them between words.
    return category.replace("_", " ")


_WIDE = 6
"""More categories than this (BEAM's ten) are shown a row each, the arms across, to fit 80 columns."""


def _recall_table(
    title: str, categories: list[str], figures: dict[str, dict[str, float]], last: tuple[str, dict[str, str]]
) -> None:
    """One measure per category and arm (``figures``: arm -> category -> value): a row an arm, or a
    row a category when there are many; ``last`` a column (or row) more, its name and each arm's."""
    name, extra = last
    if len(categories) <= _WIDE:
        shown = table(title, "arm", *map(_heading, categories), name, whole=("arm",))
        for arm, by in figures.items():
            shown.add_row(arm, *(f"{by.get(c, 0.0):.3f}" for c in categories), extra[arm])
    else:
        shown = table(title, "category", *figures)
        for c in categories:
            shown.add_row(_heading(c), *(f"{by.get(c, 0.0):.3f}" for by in figures.values()))
        shown.add_row(name, *extra.values())
    console.print(shown)


def _show(source: str, reports: dict[str, ArmReport], questions: int, skipped: int, left_out: dict[str, int]) -> None:
    first = next(iter(reports.values()))
    categories = _categories(first)
    for k in sorted(first.recall):
        turns = {arm: f"{r.source_turns.get(k, 0.0):.2f}" for arm, r in reports.items()}
        figures = {arm: r.recall[k] for arm, r in reports.items()}
        _recall_table(f"evidence recall@{k}: {source}", categories, figures, ("turns", turns))
    spent = table("what dreaming made and cost", "arm", "cycles", "outputs", "tokens", "usd", "seconds", "calls")
    for arm, r in reports.items():
        spent.add_row(
            arm,
            str(r.cycles),
            str(r.outputs),
            f"{r.tokens:,}",
            f"{r.usd:.4f}",
            f"{r.seconds:.1f}",
            str(r.generator_calls),
        )
    console.print(spent)
    counts = ", ".join(f"{c} {n}" for c, n in first.questions.items() if c != "overall")
    why = ", ".join(f"{n} {reason}" for reason, n in left_out.items()) or "another category, or no evidence"
    console.print(
        f"{counted(questions, 'question')} ({counts}); {skipped} left out ({why}); "
        "turns: the mean number of turns an item of the first k stands for"
    )


def _show_reader(reports: dict[str, ArmReport], tokenizer: str) -> None:
    """Recall at each budget, the knowledge updates' order and the dreams' text quality."""
    first = next(iter(reports.values()))
    categories = _categories(first)
    for budget in sorted(first.budget_recall):
        items = {arm: f"{r.budget_items.get(budget, 0.0):.1f}" for arm, r in reports.items()}
        figures = {arm: r.budget_recall[budget] for arm, r in reports.items()}
        _recall_table(f"evidence recall at {budget:,} tokens ({tokenizer})", categories, figures, ("items", items))
    if first.updates:
        order = ", ".join(f"{arm} {r.current_first or 0.0:.3f}" for arm, r in reports.items())
        console.print(f"knowledge updates, current fact ranked above the outdated: {order} (of {first.updates})")
    quality = table("dream outputs' text quality (share)", "arm", "outputs", "cut", "markup", "ungrammatical", "any")
    for arm, r in reports.items():
        q = r.quality
        quality.add_row(
            arm, str(q.outputs), f"{q.cut:.3f}", f"{q.markup:.3f}", f"{q.ungrammatical:.3f}", f"{q.flawed:.3f}"
        )
    console.print(quality)


def _show_answers(reports: dict[str, ArmReport], k: int) -> None:
    answered = {arm: r.answer for arm, r in reports.items() if r.answer is not None}
    if not answered:
        return
    first = next(iter(answered.values()))
    categories = sorted(first.f1, key=lambda c: (c == "overall", _ORDER.index(c) if c in _ORDER else 9, c))
    title = f"answer token-F1 from the first {counted(k, 'item')}: {first.model}, prompt {first.prompt_version}"
    shown = table(title, "arm", *categories, "tokens", "usd", "calls", whole=("arm",))
    for arm, a in answered.items():
        cells = [f"{a.f1.get(c, 0.0):.3f}" for c in categories]
        shown.add_row(arm, *cells, f"{a.tokens:,}", f"{a.usd:.4f}", str(a.calls))
    console.print(shown)


@contextmanager
def _directory(given: Path | None) -> Iterator[Path]:
    if given is not None:
        given.mkdir(parents=True, exist_ok=True)
        yield given
        return
    with tempfile.TemporaryDirectory(prefix="oneiros-eval-") as scratch:
        yield Path(scratch)


@contextmanager
def _progress(*, quiet: bool) -> Iterator[Progress | None]:
    if quiet:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
    ) as bar:
        tasks: dict[tuple[str, str], Any] = {}

        def update(arm: str, what: str, done: int, total: int) -> None:
            stage = what if what in ("asking", "answering") else "living"
            key = (arm, stage)
            if key not in tasks:
                tasks[key] = bar.add_task(f"{arm}: {stage}", total=total)
            bar.update(tasks[key], completed=done, description=f"{arm}: {what}")

        yield update


def register(app: typer.Typer) -> None:
    eval_app.command("locomo")(locomo)
    eval_app.command("chat")(chat)
    eval_app.command("beam")(beam)
    app.add_typer(eval_app, name="eval")

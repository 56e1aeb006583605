"""What importing a coding agent's sessions costs, against the chat-transcript import it sits beside.

Run: ``python benchmarks/sessions.py [--runs 5] [--events 10000]``. A synthetic Claude Code project
folder of 20 sessions, ``--events`` events in all (user and assistant texts, tool calls, tool
results, one in fifty results 40,000 characters long, so it is cut into parts), and the same texts
as a chat-jsonl transcript. Measured round by round in the same run:

- parse: reading and checking the project (``claude_code_golems``) against reading the transcript
  (``chat_batches``), the baseline; both build every episode, parts included.
- rerun: importing the project again into a golem that has it all (by ref: every recorded
  episode's id is read back) against importing the transcript again into a golem that has it (by
  tick), the baseline, on SQLite files.

The last stdout line is one JSON object: medians in seconds and each ratio baseline / ours (1.0:
as fast as the baseline, 0.5: twice as slow).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
from pathlib import Path

from _common import MARKET_WORDS, emit, interleaved, median_ratio

from oneiros import Oneiros
from oneiros.episodes._conversations import chat_batches
from oneiros.episodes._sessions import claude_code_golems, session_files

_SESSIONS = 20


def _write(folder: Path, events: int) -> tuple[Path, Path]:
    """The project folder and the chat transcript of the same texts."""
    draw = random.Random(11)
    project = folder / "project"
    project.mkdir()
    chat = (folder / "chat.jsonl").open("w")
    per = max(events // _SESSIONS, 1)
    n = 0
    for session in range(_SESSIONS):
        with (project / f"s{session:03}.jsonl").open("w") as out:
            for k in range(per):
                when = f"2026-03-{1 + session % 28:02}T{k // 60 % 24:02}:{k % 60:02}:00Z"
                words = " ".join(draw.choice(MARKET_WORDS) for _ in range(20))
                role = "user" if k % 4 in (0, 2) else "assistant"
                if k % 4 == 1:
                    content: object = [{"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": words}}]
                elif k % 4 == 2:
                    said = (words + "\n") * 2_000 if k % 200 == 2 else words
                    content = [{"type": "tool_result", "tool_use_id": f"t{n - 1}", "content": said}]
                else:
                    content = words
                    said = words
                event: dict[str, object] = {
                    "parentUuid": None,
                    "isSidechain": False,
                    "sessionId": f"s{session}",
                    "type": role,
                }
                event |= {"message": {"role": role, "content": content}, "uuid": f"u{n}", "timestamp": when}
                out.write(json.dumps(event) + "\n")
                text = said if k % 4 in (0, 2, 3) else words
                chat.write(json.dumps({"role": role, "content": text, "time": when, "id": f"u{n}"}) + "\n")
                n += 1
    chat.close()
    return project, folder / "chat.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--events", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        project, chat = _write(folder, args.events)
        files = session_files(project)
        (golem,) = claude_code_golems(files, "g")
        messages = [e for batch in chat_batches(chat) for e in batch]
        with Oneiros(f"sqlite:///{folder}/s.db") as sessions, Oneiros(f"sqlite:///{folder}/c.db") as chats:
            sessions.import_episodes("g", [golem.episodes], by_ref=True)
            chats.import_episodes("g", [messages])
            times = interleaved(
                {
                    "parse_chat": (lambda: list(chat_batches(chat)), None),
                    "parse_sessions": (lambda: claude_code_golems(files, "g"), None),
                    "rerun_chat": (lambda: chats.import_episodes("g", chat_batches(chat)), None),
                    "rerun_sessions": (
                        lambda: sessions.import_episodes(
                            "g", [claude_code_golems(files, "g")[0].episodes], by_ref=True
                        ),
                        None,
                    ),
                },
                args.runs,
            )
    medians = {name: round(statistics.median(t), 4) for name, t in times.items()}
    emit(
        {
            "events": args.events,
            "episodes": len(golem.episodes),
            "runs": args.runs,
            **{f"{name}_s": value for name, value in medians.items()},
            "parse_ratio": median_ratio(times["parse_chat"], times["parse_sessions"]),
            "rerun_ratio": median_ratio(times["rerun_chat"], times["rerun_sessions"]),
        }
    )


if __name__ == "__main__":
    main()

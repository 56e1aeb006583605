"""Rule-based text work behind the offline generator's observations: sentences, first person
rewritten to whoever spoke, relative dates made absolute from when they were said, and small talk
told apart from sentences that say something. English only; nothing about any one domain.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta
from typing import Final

from oneiros._text import FUNCTION_WORDS

__all__ = ["CHITCHAT", "day_text", "is_small_talk", "month", "resolve_dates", "sentences", "third_person"]

CHITCHAT: Final = frozenset(
    """hey hi hello bye thanks thank yeah yes yep wow oh ah cool great awesome amazing nice good glad
    happy sounds sound totally really super much lot lots also definitely absolutely sure agree
    know think hope love like feel it's that's i'm you're what's gonna wanna let's things thing
    way always keep going get got well pretty so just even still too ok okay""".split()  # noqa: SIM905 - read as prose
)
"""Words that carry no fact of their own: a sentence of nothing else is small talk."""

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(\[])")
_WORD = re.compile(r"(?u)\b\w[\w'-]*\b")


def sentences(text: str) -> list[str]:
    """``text`` cut after each full stop, question or exclamation mark that a capital follows."""
    return [s.strip() for s in _SENTENCE.split(text.strip()) if s.strip()]


def is_small_talk(sentence: str, names: frozenset[str] = frozenset()) -> bool:
    """Nothing in ``sentence`` but function words, chit-chat and ``names`` (lower case): it says no fact."""
    for word in _WORD.findall(sentence.lower()):
        head = word.split("'", 1)[0]
        said = len(head) > 2 and head not in FUNCTION_WORDS and word not in CHITCHAT and head not in CHITCHAT
        if said and not any(name.startswith(head) for name in names):
            return False
    return True


# --- first person to whoever spoke ---------------------------------------------------------------

_Rule = tuple[re.Pattern[str], str]


def _rules(pairs: tuple[tuple[str, str], ...]) -> tuple[_Rule, ...]:
    return tuple((re.compile(pattern), replacement) for pattern, replacement in pairs)


_ADVERBS = "always|never|usually|really|generally|also|just|still|often|mostly"
_VERBS = "prefer|like|love|want|need|use|work|live|plan|hate|know|keep|write|run|build|mean|ask|think|enjoy"
_FIRST: Final = _rules(
    (
        (r"\bAm I\b", "Is {S}"),
        (r"\bam I\b", "is {S}"),
        (r"\bHave I\b", "Has {S}"),
        (r"\bhave I\b", "has {S}"),
        (r"\bI'm\b", "{S} is"),
        (r"\bI am\b", "{S} is"),
        (r"\bI've\b", "{S} has"),
        (r"\bI have\b", "{S} has"),
        (r"\bI'll\b", "{S} will"),
        (r"\bI'd\b", "{S} would"),
        (r"\bI was\b", "{S} was"),
        (r"\bI don't\b", "{S} doesn't"),
        (r"\bI do not\b", "{S} does not"),
        # A present-tense verb after "I" agrees with the name that replaces it ("Ann prefers").
        (rf"\bI ({_ADVERBS}) ({_VERBS})\b", "{S} \\1 \\2s"),
        (rf"\bI ({_VERBS})\b", "{S} \\1s"),
        (r"\bI\b", "{S}"),
        (r"\b[Mm]yself\b", "themselves"),
        (r"\b[Mm]y\b", "{S}'s"),
        (r"\b[Mm]ine\b", "{S}'s"),
        (r"\b[Mm]e\b", "{S}"),
        (r"\b[Ww]e're\b", "{S} and others are"),
        (r"\b[Ww]e've\b", "{S} and others have"),
        (r"\b[Ww]e'll\b", "{S} and others will"),
        (r"\b[Ww]e'd\b", "{S} and others would"),
        (r"\b[Ww]e\b", "{S} and others"),
        (r"\b[Oo]urselves\b", "themselves"),
        (r"\b[Oo]urs\b", "{S}'s"),
        (r"\b[Oo]ur\b", "{S}'s"),
        (r"\bus\b", "{S} and others"),
    )
)
_SECOND: Final = _rules(
    (
        (r"\bAre you\b", "Is {O}"),
        (r"\bare you\b", "is {O}"),
        (r"\bWere you\b", "Was {O}"),
        (r"\bwere you\b", "was {O}"),
        (r"\bHave you\b", "Has {O}"),
        (r"\bhave you\b", "has {O}"),
        (r"\bDo you\b", "Does {O}"),
        (r"\bdo you\b", "does {O}"),
        (r"\b[Yy]ou are\b", "{O} is"),
        (r"\b[Yy]ou were\b", "{O} was"),
        (r"\b[Yy]ou have\b", "{O} has"),
        (r"\b[Yy]ou're\b", "{O} is"),
        (r"\b[Yy]ou've\b", "{O} has"),
        (r"\b[Yy]ou'll\b", "{O} will"),
        (r"\b[Yy]ourself\b", "{O}"),
        (r"\b[Yy]our\b", "{O}'s"),
        (r"\b[Yy]ou\b", "{O}"),
    )
)
# The golem's own record: "I rolled back the deploy" is a fact about itself, said without a subject.
_OWN_LEAD: Final = re.compile(r"^(?:I(?:'m|'ve|'d|'ll)?|I (?:am|have|had|was|will))\s+(?=\w)")


def third_person(text: str, speaker: str | None, other: str | None = None) -> str:
    """``text`` as a fact about whoever said it: "I went to my class" by Caroline becomes "Caroline
    went to Caroline's class", and "you" the other party when there is exactly one (``other``).
    For the golem's own record (no ``speaker``) a leading "I" is dropped: "I rolled back the
    deploy" becomes "Rolled back the deploy"."""
    out = text.replace("\u2019", "'")
    if speaker is None:
        lead = _OWN_LEAD.match(out)
        if lead:
            rest = out[lead.end() :]
            out = rest[:1].upper() + rest[1:]
        return out
    for pattern, replacement in _FIRST:
        out = pattern.sub(replacement.replace("{S}", speaker), out)
    if other:
        for pattern, replacement in _SECOND:
            out = pattern.sub(replacement.replace("{O}", other), out)
    # A rewrite that opens the text with a lower-case name ("user and others hired ...") still
    # opens a sentence.
    return out[:1].upper() + out[1:] if text[:1].isupper() else out


# --- relative dates ----------------------------------------------------------------------------------

_DAYS: Final = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_COUNTS: Final = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "couple of": 2, "a few": 3, "few": 3, "several": 3,
}  # fmt: skip


def day_text(day: date) -> str:
    """A day as people write it, "23 November 2026": what a question about it names (a month by
    name matches where "2026-11" does not)."""
    return f"{day.day} {day:%B} {day.year}"


def month(day: date) -> str:
    return f"{day:%B} {day.year}"


def _month_shift(day: date, months: int) -> date:
    m = day.month - 1 + months
    return date(day.year + m // 12, m % 12 + 1, 1)


# What a resolved phrase becomes in the sentence, and the day it names when it names one day.
_Resolved = tuple[str, date | None]


def _on(day: date) -> _Resolved:
    return f"on {day_text(day)}", day


def _fixed(today: date) -> dict[str, Callable[[], _Resolved]]:
    return {
        "yesterday": lambda: _on(today - timedelta(days=1)),
        "last night": lambda: _on(today - timedelta(days=1)),
        "the day before yesterday": lambda: _on(today - timedelta(days=2)),
        "today": lambda: _on(today),
        "tonight": lambda: _on(today),
        "this morning": lambda: _on(today),
        "this afternoon": lambda: _on(today),
        "this evening": lambda: _on(today),
        "tomorrow": lambda: _on(today + timedelta(days=1)),
        "last week": lambda: (f"the week before {day_text(today)}", None),
        "this week": lambda: (f"the week of {day_text(today)}", None),
        "next week": lambda: (f"the week after {day_text(today)}", None),
        "last weekend": lambda: (f"the weekend before {day_text(today)}", None),
        "this weekend": lambda: (f"the weekend of {day_text(today)}", None),
        "next weekend": lambda: (f"the weekend after {day_text(today)}", None),
        "last month": lambda: (f"in {month(_month_shift(today, -1))}", None),
        "this month": lambda: (f"in {month(today)}", None),
        "next month": lambda: (f"in {month(_month_shift(today, 1))}", None),
        "last year": lambda: (f"in {today.year - 1}", None),
        "this year": lambda: (f"in {today.year}", None),
        "next year": lambda: (f"in {today.year + 1}", None),
        "recently": lambda: (f"shortly before {day_text(today)}", None),
        "lately": lambda: (f"shortly before {day_text(today)}", None),
    }


_WEEKDAY: Final = re.compile(r"(last|this|next|on) (\w+day)")
_MONTHS: Final = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
    "november", "december",
)  # fmt: skip
_ORDINAL = r"(\d{1,2})(?:st|nd|rd|th)?"
_MONTH_NAME = r"(january|february|march|april|may|june|july|august|september|october|november|december)"
# A weekday the speaker dated themselves ("on Friday 20 March", "next Monday, March 9th, 2026"):
# the date is what it names, so it is resolved to that date rather than to the weekday.
_DATED: Final = rf"(?:,? (?:{_ORDINAL} (?:of )?{_MONTH_NAME}|{_MONTH_NAME} {_ORDINAL})(?:,? (\d{{4}}))?)"
_WEEKDAY_DATED: Final = re.compile(rf"(?:last|this|next|on) \w+day{_DATED}")
_AGO: Final = re.compile(r"(\d+|[a-z]+(?: of)?|a few|a couple of) (day|week|month|year)s? ago")


def _weekday(how: str, name: str, today: date) -> _Resolved | None:
    if name not in _DAYS:
        return None
    wd = _DAYS.index(name)
    if how in ("last", "on"):
        return _on(today - timedelta(days=(today.weekday() - wd) % 7 or 7))
    return _on(today + timedelta(days=(wd - today.weekday()) % 7 or 7))


def _dated(found: re.Match[str], today: date) -> _Resolved | None:
    """The date a weekday phrase names itself; without a year, the one nearest to ``today``."""
    day_of, name_of, name_first, day_first, year = found.groups()
    number, name = (day_of, name_of) if day_of else (day_first, name_first)
    month_number = _MONTHS.index(name) + 1
    years = [int(year)] if year else [today.year - 1, today.year, today.year + 1]
    candidates = []
    for y in years:
        try:
            candidates.append(date(y, month_number, int(number)))
        except ValueError:
            continue
    if not candidates:
        return None
    return _on(min(candidates, key=lambda d: abs((d - today).days)))


def _ago(count: str, unit: str, today: date) -> _Resolved | None:
    n = int(count) if count.isdigit() else _COUNTS.get(count)
    if n is None:
        return None
    by_unit: dict[str, Callable[[int], _Resolved]] = {
        "day": lambda k: _on(today - timedelta(days=k)),
        "week": lambda k: (f"the week of {day_text(today - timedelta(weeks=k))}", None),
        "month": lambda k: (f"in {month(_month_shift(today, -k))}", None),
        "year": lambda k: (f"in {today.year - k}", None),
    }
    return by_unit[unit](n)


def _resolve(phrase: str, today: date) -> _Resolved | None:
    p = " ".join(phrase.lower().split())
    fixed = _fixed(today).get(p)
    if fixed is not None:
        return fixed()
    if dated := _WEEKDAY_DATED.fullmatch(p):
        return _dated(dated, today)
    if weekday := _WEEKDAY.fullmatch(p):
        return _weekday(weekday.group(1), weekday.group(2), today)
    if ago := _AGO.fullmatch(p):
        return _ago(ago.group(1), ago.group(2), today)
    return None


_RELATIVE: Final = re.compile(
    r"\b(the day before yesterday|yesterday|last night|today|tonight|tomorrow|"
    r"this (?:morning|afternoon|evening)|(?:last|this|next) (?:week|weekend|month|year)|"
    r"(?:last|this|next|on) (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
    rf"{_DATED}?|"
    r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|few|a couple of|several) "
    r"(?:day|week|month|year)s? ago|recently|lately)\b",
    re.IGNORECASE,
)
# "on yesterday" never reads well: the preposition before a phrase that brings its own is dropped;
# and a phrase that is the subject ("Yesterday was great") takes none.
_DOUBLED: Final = re.compile(r"\b(?:on|in) (?=(?:on|in) )", re.IGNORECASE)


def resolve_dates(text: str, today: date) -> tuple[str, list[date], int]:
    """Relative time words in ``text`` replaced by absolute ones, as said on ``today``:
    "yesterday" becomes "on 2023-05-07", "last week" "the week before 2023-05-08", "last year"
    "in 2022". Returns the text, the single days it now names, and how many phrases it resolved."""
    days: list[date] = []
    resolved = 0

    def sub(m: re.Match[str]) -> str:
        nonlocal resolved
        found = _resolve(m.group(0), today)
        if found is None:
            return m.group(0)
        resolved += 1
        words, day = found
        if day is not None:
            days.append(day)
        after = text[m.end() :].lstrip()
        if m.start() == 0 and re.match(r"(?:was|is|were|has|had|will)\b", after):
            words = words.split(" ", 1)[1] if words.startswith(("on ", "in ")) else words
        return words[:1].upper() + words[1:] if m.start() == 0 else words

    return _DOUBLED.sub("", _RELATIVE.sub(sub, text)), days, resolved

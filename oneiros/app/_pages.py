"""Cursor pagination: a page of items ordered by a string key, and an opaque cursor to the next.

The cursor is the key of the page's last item, base64url-encoded; the next page starts after it.
Keys never repeat, so a page boundary never drops or repeats an item, even while the list grows.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

import msgspec

from oneiros._errors import InputError

__all__ = ["Page", "decode_cursor", "encode_cursor", "page_of"]

_T = TypeVar("_T")
_R = TypeVar("_R")


class Page(msgspec.Struct, Generic[_T], frozen=True, kw_only=True):
    """One page of a list: its items and the cursor of the next page (null on the last)."""

    items: list[_T]
    next_cursor: str | None = None
    """Pass it back as ``cursor`` for the next page; null when this page is the last."""
    total: int | None = None
    """How many items the whole list holds now (null where counting them would mean reading them all)."""


def encode_cursor(key: str) -> str:
    return base64.urlsafe_b64encode(key.encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> str | None:
    if not cursor:
        return None
    try:
        return base64.b64decode(cursor + "=" * (-len(cursor) % 4), altchars=b"-_", validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise InputError(f"cursor {cursor!r} is not one this server gave out") from None


def page_of(  # noqa: PLR0913 - one pager for every list: items, their order, the page asked for and its rows
    items: Iterable[_T],
    key: Callable[[_T], str],
    limit: int | None,
    cursor: str | None,
    row: Callable[[list[_T]], list[_R]],
    *,
    newest_first: bool = False,
) -> Page[_R]:
    """Up to ``limit`` (every one if None) of ``items`` after ``cursor``, ordered by ``key``; ``row``
    makes the page's rows from its items, in one call (one query where it reads them)."""
    after = decode_cursor(cursor)
    ordered = sorted(((key(i), i) for i in items), key=lambda kv: kv[0], reverse=newest_first)
    total = len(ordered)
    if after is not None:
        ordered = [(k, i) for k, i in ordered if (k < after if newest_first else k > after)]
    chosen = ordered if limit is None else ordered[:limit]
    more = len(ordered) > len(chosen)
    return Page(
        items=row([i for _k, i in chosen]),
        next_cursor=encode_cursor(chosen[-1][0]) if more and chosen else None,
        total=total,
    )

"""Cursor pagination: a page of items ordered by a string key, and an opaque cursor to the next.

The cursor is the key of the page's last item, base64url-encoded; the next page starts after it.
Keys never repeat, so a page boundary never drops or repeats an item, even while the list grows.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from oneiros._errors import InputError

__all__ = ["Page", "decode_cursor", "encode_cursor", "page_of"]

_T = TypeVar("_T")
Page = dict[str, Any]


def encode_cursor(key: str) -> str:
    return base64.urlsafe_b64encode(key.encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> str | None:
    if not cursor:
        return None
    try:
        return base64.b64decode(cursor + "=" * (-len(cursor) % 4), altchars=b"-_", validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise InputError(f"cursor {cursor!r} is not one this server gave out") from None


def page_of(
    items: Iterable[_T],
    key: Callable[[_T], str],
    limit: int,
    cursor: str | None,
    row: Callable[[_T], Any],
    *,
    newest_first: bool = False,
) -> Page:
    """``{"items": [...], "next_cursor": ...}``: up to ``limit`` rows after ``cursor``."""
    after = decode_cursor(cursor)
    ordered = sorted(((key(i), i) for i in items), key=lambda kv: kv[0], reverse=newest_first)
    if after is not None:
        ordered = [(k, i) for k, i in ordered if (k < after if newest_first else k > after)]
    chosen = ordered[:limit]
    more = len(ordered) > limit
    return {
        "items": [row(i) for _k, i in chosen],
        "next_cursor": encode_cursor(chosen[-1][0]) if more and chosen else None,
    }

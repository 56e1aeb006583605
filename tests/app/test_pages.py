"""Cursor pages, as properties: walking a list page by page yields it exactly once, in order, even
while items are added behind the cursor."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from oneiros.app._pages import decode_cursor, encode_cursor, page_of

keys = st.lists(st.text(min_size=1, max_size=12), unique=True, max_size=60)


def _walk(items: list[str], limit: int, newest_first: bool) -> list[str]:
    seen: list[str] = []
    cursor = None
    while True:
        page = page_of(items, lambda k: k, limit, cursor, lambda ks: ks, newest_first=newest_first)
        seen += page.items
        cursor = page.next_cursor
        if cursor is None:
            return seen


@given(items=keys, limit=st.integers(1, 7), newest_first=st.booleans())
def test_walking_the_pages_yields_every_item_once_in_order(items: list[str], limit: int, newest_first: bool) -> None:
    """The concatenated pages are the sorted list: nothing dropped, nothing repeated."""
    assert sorted(items, reverse=newest_first) == _walk(items, limit, newest_first)


@given(items=keys, added=keys, limit=st.integers(1, 7))
def test_items_added_after_the_cursor_do_not_shift_the_next_page(
    items: list[str], added: list[str], limit: int
) -> None:
    """Newest-first pages: items that arrive while a client pages (newer keys) never make an item it
    has not seen yet drop out, and it never sees one twice."""
    ordered = sorted(items, reverse=True)
    first = page_of(ordered, lambda k: k, limit, None, lambda ks: ks, newest_first=True)
    cursor = first.next_cursor
    if cursor is None:
        return
    boundary = decode_cursor(cursor)
    assert boundary is not None
    newer = [k for k in added if k > boundary and k not in items]
    rest = page_of([*items, *newer], lambda k: k, len(items), cursor, lambda ks: ks, newest_first=True).items
    assert sorted((k for k in items if k < boundary), reverse=True) == rest


@given(st.text(max_size=40))
def test_a_cursor_round_trips(key: str) -> None:
    """Any key survives being a cursor."""
    assert key == decode_cursor(encode_cursor(key)) or key == ""

"""What a user sends, before it is read as anything: JSON bytes that are not UTF-8, a lone UTF-16
surrogate, nesting deeper than anything oneiros takes. Each is the sender's mistake, said in one
line (:class:`~oneiros._errors.MalformedInput`), never a decoder's exception escaping as a server
error or a traceback."""

from __future__ import annotations

import re
from typing import Any

import msgspec

from oneiros._errors import InputError, MalformedInput

__all__ = ["DECODE_ERRORS", "MAX_DEPTH", "check_plain", "decode_problem", "read_error", "unreadable"]

MAX_DEPTH = 32
"""The deepest nesting a plain value may have: an episode or a request body is two or three levels;
a value nested past this was made to exhaust the reader."""

DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, RecursionError)
"""What msgspec raises on bytes it cannot read: invalid UTF-8 escapes as ``UnicodeDecodeError``
before msgspec 0.23 (a ``DecodeError`` from 0.23 on), and nesting past the interpreter's recursion
limit as ``RecursionError``, not a DecodeError."""

# A high surrogate escape with no low one after it, or a low one with no high one before it.
_HIGH, _LOW = rb"\\u[dD][89abAB][0-9a-fA-F]{2}", rb"\\u[dD][c-fC-F][0-9a-fA-F]{2}"
_LONE = re.compile(_HIGH + b"(?!" + _LOW + b")|(?<!" + _HIGH + b")" + _LOW)


def decode_problem(exc: BaseException, raw: bytes) -> str | None:
    """Why ``raw`` is malformed rather than merely invalid, when ``exc`` (one of
    :data:`DECODE_ERRORS`) says it is: not UTF-8, a lone surrogate, too deep; else None."""
    if isinstance(exc, UnicodeDecodeError | msgspec.DecodeError):
        # msgspec before 0.23 raised UnicodeDecodeError with an offset within the string it decoded,
        # not the body; 0.23 raises a DecodeError ("Invalid UTF-8 encoded string") with no offset at
        # all. Either way the body itself says where its first bad byte is.
        try:
            raw.decode()
        except UnicodeDecodeError as whole:
            return f"not UTF-8: byte 0x{raw[whole.start]:02x} at offset {whole.start}"
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8: {exc.reason}"  # pragma: no cover - the decoder found a byte the codec did not
    if isinstance(exc, RecursionError):
        return "nested too deep to read"
    if isinstance(exc, msgspec.DecodeError) and (found := _LONE.search(raw)) is not None:
        # msgspec calls a lone high surrogate "truncated" input, which would send the sender looking
        # for a cut-off body.
        return f"a lone UTF-16 surrogate ({found.group().decode()}) at offset {found.start()} is not text"
    return None


def unreadable(exc: BaseException, raw: bytes) -> str:
    """Why ``raw`` could not be decoded, for a message: :func:`decode_problem`, else ``exc``'s own text."""
    return decode_problem(exc, raw) or str(exc)


def read_error(exc: BaseException, raw: bytes, where: str) -> InputError:
    """The error to raise for ``exc`` (one of :data:`DECODE_ERRORS`) decoding ``raw``, named ``where``."""
    problem = decode_problem(exc, raw)
    return MalformedInput(where, problem) if problem is not None else InputError(f"{where}: {exc}")


def check_plain(value: Any, where: str, max_depth: int = MAX_DEPTH) -> None:
    """MalformedInput if ``value`` (plain Python data: dicts, lists, strings, numbers) holds a
    string with a lone surrogate, which no UTF-8 store can write, or nests past ``max_depth``.

    Walked without recursion, so a value nested a million deep is refused rather than overflowing
    the stack that walks it."""
    stack: list[tuple[Any, str, int]] = [(value, "$", 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, str):
            _check_text(item, where, path)
        elif isinstance(item, dict | list | tuple):
            if depth >= max_depth:
                raise MalformedInput(where, f"nested deeper than {max_depth} levels at `{path}`")
            if isinstance(item, dict):
                for key, inner in item.items():
                    key_path = f"{path}.{key}" if isinstance(key, str) else f"{path}[{key!r}]"
                    if isinstance(key, str):
                        _check_text(key, where, path)
                    stack.append((inner, key_path, depth + 1))
            else:
                stack.extend((inner, f"{path}[{n}]", depth + 1) for n, inner in enumerate(item))


def _check_text(text: str, where: str, path: str) -> None:
    try:
        text.encode()
    except UnicodeEncodeError as exc:
        bad = text[exc.start]
        raise MalformedInput(where, f"a lone UTF-16 surrogate ({ascii(bad)[1:-1]}) at `{path}` is not text") from None

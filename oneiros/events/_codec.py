"""Encoding events to stored bytes and back, with upcasting of older schema versions.

A stored event is ``(topic, state)``: the topic is ``<TypeName>.v<version>`` and the state is the
msgspec JSON of ``{"meta": ..., "data": ...}``. JSON rather than msgpack so a person can read a log
with the ``sqlite3`` shell; msgspec decodes it fast enough that the store's read path stays close to
raw SQLite (see ``benchmarks/store.py``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Any, Generic, TypeVar

import msgspec

from oneiros._errors import CorruptEvent, InvalidEvent, UnknownEventType
from oneiros.events._types import Event, EventMeta, registered_events

__all__ = [
    "MAX_EVENT_BYTES",
    "Upcaster",
    "current_decoder",
    "decode_event",
    "encode_event",
    "register_upcaster",
    "split_topic",
    "topic_of",
    "topics_for",
]

_T = TypeVar("_T")
Upcaster = Callable[[dict[str, Any]], dict[str, Any]]
_UPCASTERS: dict[tuple[str, int], Upcaster] = {}


class _Envelope(msgspec.Struct, Generic[_T], gc=False):
    # gc=False: an envelope never takes part in a reference cycle, and untracked Structs are
    # cheaper to build, which every append and every read does once per event.
    meta: EventMeta
    data: _T


MAX_EVENT_BYTES = 1 << 20
"""Largest encoded event the store writes (1 MiB). Not from the source documents: no episode,
dream output or host fact comes near it, so anything larger is a mistake or an attack."""

_encoder = msgspec.json.Encoder()
_encode = _encoder.encode
_AT = re.compile(r"^(?P<what>.*?) - at `\$\.data(?:\.(?P<path>[^`]*))?`$", re.S)
_raw_decoder = msgspec.json.Decoder(_Envelope[dict[str, Any]])


def register_upcaster(type_name: str, from_version: int) -> Callable[[Upcaster], Upcaster]:
    """Register a function lifting ``type_name``'s payload from ``from_version`` to the next."""

    def register(fn: Upcaster) -> Upcaster:
        key = (type_name, from_version)
        if key in _UPCASTERS:
            raise ValueError(f"an upcaster for {type_name} v{from_version} is already registered")
        _UPCASTERS[key] = fn
        return fn

    return register


def topic_of(cls: type[Event]) -> str:
    """The topic a new event of ``cls`` is stored under."""
    return f"{cls.type_name}.v{cls.schema_version}"


def topics_for(cls: type[Event]) -> list[str]:
    """Every topic an event of ``cls`` may be stored under, older versions included."""
    return [f"{cls.type_name}.v{v}" for v in range(1, cls.schema_version + 1)]


def split_topic(topic: str) -> tuple[str, int]:
    """``("DreamStart", 1)`` from ``"DreamStart.v1"``."""
    name, sep, version = topic.rpartition(".v")
    # isascii: str.isdigit accepts superscripts and other digits int() refuses ("X.v²").
    if not sep or not version.isascii() or not version.isdigit() or not name:
        raise UnknownEventType(topic)
    return name, int(version)


def encode_event(meta: EventMeta, event: Event, *, max_bytes: int = MAX_EVENT_BYTES) -> tuple[str, bytes]:
    """``(topic, state)`` for one event, refused with :class:`InvalidEvent` unless it reads back.

    Structs built in Python skip msgspec's validation, so a NaN, a lone surrogate or a value its
    type forbids would otherwise be written (NaN as ``null``) and poison every later read of the
    stream. Decoding the bytes just encoded is the one check that matches what replay will do.
    """
    cls = type(event)
    codec = _CODECS.get(cls) or _codec(cls)
    try:
        state = _encode(_Envelope(meta, event))
    except UnicodeEncodeError as exc:
        raise InvalidEvent(cls.type_name, f"text is not valid Unicode ({exc.reason})") from None
    except RecursionError:
        raise InvalidEvent(cls.type_name, "values nested too deeply to store") from None
    except (TypeError, msgspec.EncodeError) as exc:
        raise InvalidEvent(cls.type_name, str(exc)) from None
    if len(state) > max_bytes:
        raise InvalidEvent(cls.type_name, f"{len(state)} bytes encoded; an event may take at most {max_bytes}")
    try:
        codec[1].decode(state)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise _invalid(cls.type_name, str(exc)) from None
    return codec[0], state


# The topic and read-back decoder of each event class, looked up once per append of an event.
_CODECS: dict[type[Event], tuple[str, msgspec.json.Decoder[_Envelope[Any]]]] = {}


def _codec(cls: type[Event]) -> tuple[str, msgspec.json.Decoder[_Envelope[Any]]]:
    if not cls.type_name:
        raise TypeError(f"{cls.__qualname__} is not a registered event type")
    codec = _CODECS[cls] = (topic_of(cls), _decoder_for(cls))
    return codec


def _invalid(type_name: str, message: str) -> InvalidEvent:
    match = _AT.match(message)
    if match is None:
        return InvalidEvent(type_name, message)
    what = match["what"]
    if what == "Expected `float`, got `null`":
        what = "expected a finite number, got NaN or infinity"  # msgspec writes both as null
    return InvalidEvent(type_name, what[:1].lower() + what[1:], match["path"] or None)


@cache
def _decoder_for(cls: type[Event]) -> msgspec.json.Decoder[_Envelope[Any]]:
    return msgspec.json.Decoder(_Envelope[cls])  # type: ignore[valid-type]


@cache
def _resolve(topic: str) -> tuple[type[Event], int]:
    name, version = split_topic(topic)
    cls = registered_events().get(name)
    if cls is None or not 1 <= version <= cls.schema_version:
        raise UnknownEventType(topic)
    return cls, version


_CURRENT: dict[str, msgspec.json.Decoder[_Envelope[Any]]] = {}


def current_decoder(topic: str) -> msgspec.json.Decoder[_Envelope[Any]] | None:
    """The one-pass decoder for ``topic`` if it names a current schema version, else None.

    The store's read loop uses this to skip the general path (cache lookups, upcasting checks) for
    the events that make up nearly every log.
    """
    decoder = _CURRENT.get(topic)
    if decoder is None:
        try:
            cls, version = _resolve(topic)
        except UnknownEventType:
            return None
        if version != cls.schema_version:
            return None
        decoder = _CURRENT[topic] = _decoder_for(cls)
    return decoder


def decode_event(topic: str, state: bytes, position: int | None = None) -> tuple[EventMeta, Event]:
    """The metadata and current-version payload stored as ``(topic, state)``."""
    try:
        cls, version = _resolve(topic)
    except UnknownEventType:
        raise UnknownEventType(topic, position) from None
    try:
        if version == cls.schema_version:
            envelope = _decoder_for(cls).decode(state)
            return envelope.meta, envelope.data
        raw = _raw_decoder.decode(state)
        data = raw.data
        for v in range(version, cls.schema_version):
            upcast = _UPCASTERS.get((cls.type_name, v))
            if upcast is None:
                raise CorruptEvent(position, topic, f"no upcaster from v{v} to v{v + 1}")
            data = upcast(data)
        return raw.meta, msgspec.convert(data, cls)
    except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError) as exc:
        raise CorruptEvent(position, topic, str(exc)) from None
    except RecursionError:
        raise CorruptEvent(position, topic, "values nested too deeply to read") from None
    except (KeyError, TypeError, ValueError) as exc:  # an upcaster meeting a payload it was not written for
        raise CorruptEvent(position, topic, f"upcast failed: {exc!r}") from None

"""The one exception tree every part of oneiros raises from.

::

    OneirosError
    ├── ConfigError                 bad setting, URL or option
    │   ├── InvalidStoreURL
    │   ├── InvalidSetting          a config key whose value is not what it must be
    │   ├── UnknownPreset           a preset name no preset carries
    │   ├── InvalidPromptTemplate   a prompt override with an unknown task or placeholder
    │   └── AddressUnavailable      the server's host and port cannot be listened on
    ├── EventError                  an event that cannot be read or written
    │   ├── CorruptEvent            bytes in the log that do not decode
    │   ├── InvalidEvent            an event refused before it is written (not finite, not Unicode, too large)
    │   └── UnknownEventType        a type name no registered event carries
    ├── StoreError                  the log refused or failed an operation
    │   ├── StreamConflict          another writer took the expected version
    │   ├── NoStore                 a command that only reads found no store at the URL (and made none)
    │   └── StoreUnavailable        the store's server did not answer in time
    ├── GolemError                  a command against a golem's state
    │   ├── GolemNotFound           .nearest: the known golem a typo most likely meant
    │   ├── GolemExists
    │   ├── IllegalCommand          the machine forbids the trigger in this state
    │   ├── CycleNotFound           no cycle with this id in the golem's stream (or none at all)
    │   └── MemoryVersionNotFound   no MEMORY.md version with this number for the golem
    ├── InputError                  user-supplied data (episodes, files)
    │   ├── EpisodeFileError
    │   ├── MalformedInput          bytes that are not UTF-8, a lone surrogate, nesting too deep
    │   ├── IdempotencyKeyReused    an idempotency key sent again with another request
    │   ├── UnknownId               a typed id or prefix that matches no id of its kind
    │   └── AmbiguousId             a typed prefix that matches several ids
    ├── GenerationError             a generator that could not give a usable answer
    │   ├── GeneratorUnavailable    timeout, server error or bad response after the retries
    │   └── MalformedOutput         model text that does not parse into the task's result
    ├── ProjectionError             a read model that cannot be built, followed or read
    │   ├── ProjectionConflict      another runner moved the projection's position first
    │   ├── ProjectionBehind        a read asked for a position its projections did not reach in time
    │   └── UnknownProjection       a name no registered projection carries
    ├── StagingError                a review or outcome that does not fit the staging buffer
    │   ├── EntryNotFound           no staged entry with this id
    │   └── IllegalReview           the entry's status does not allow the decision
    ├── WorkerError                 running phases on workers
    │   └── CycleTimeout            a cycle did not end within the time waited for it
    └── AccessError                 a server request its caller may not make
        ├── Unauthenticated         no bearer token, or one the server does not know
        └── Forbidden               the token lacks the scope, or is not bound to the golem

Errors carry typed attributes (``golem_id``, ``state``, ``trigger``, ``position``…) so callers can
act on them without parsing messages; the message names what was wrong for a person.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "AccessError",
    "AddressUnavailable",
    "AmbiguousId",
    "ConfigError",
    "CorruptEvent",
    "CycleNotFound",
    "CycleTimeout",
    "EntryNotFound",
    "EpisodeFileError",
    "EventError",
    "Forbidden",
    "GenerationError",
    "GeneratorUnavailable",
    "GolemError",
    "GolemExists",
    "GolemNotFound",
    "IdempotencyKeyReused",
    "IllegalCommand",
    "IllegalReview",
    "InputError",
    "InvalidEvent",
    "InvalidPromptTemplate",
    "InvalidSetting",
    "InvalidStoreURL",
    "MalformedInput",
    "MalformedOutput",
    "MemoryVersionNotFound",
    "NoStore",
    "OneirosError",
    "ProjectionBehind",
    "ProjectionConflict",
    "ProjectionError",
    "StagingError",
    "StoreError",
    "StoreUnavailable",
    "StreamConflict",
    "Unauthenticated",
    "UnknownEventType",
    "UnknownId",
    "UnknownPreset",
    "UnknownProjection",
    "WorkerError",
]


class OneirosError(Exception):
    """Root of every error oneiros raises on purpose."""


class ConfigError(OneirosError):
    """A setting, URL or option has a value oneiros cannot use."""


def masked_url(url: str) -> str:
    """``url`` with any password replaced by ``***``: messages reach terminals, logs and HTTP
    answers, and a PostgreSQL URL may carry a password. It parses nothing, so a malformed URL
    (an unclosed IPv6 bracket, a bad port) is masked as well as a good one."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    # The userinfo ends at the last "@" before the path; a malformed URL (a bad port, an unknown
    # parameter) is masked as well, since it is the one a message quotes.
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    userinfo, at, host = rest[:end].rpartition("@")
    user, colon, _password = userinfo.partition(":")
    if not (at and colon):
        return url
    return f"{scheme}{sep}{user}:***@{host}{rest[end:]}"


class InvalidStoreURL(ConfigError):
    """A store URL names no supported backend or is malformed. The message masks its password."""

    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        self.reason = reason
        super().__init__(f"invalid store URL {masked_url(url)!r}: {reason}")


class InvalidPromptTemplate(ConfigError):
    """A prompt override names no known task, or uses a placeholder the task does not fill."""

    def __init__(self, task: str, reason: str) -> None:
        self.task = task
        self.reason = reason
        super().__init__(f"invalid prompt template for task {task!r}: {reason}")


class AddressUnavailable(ConfigError):
    """``oneiros serve`` cannot listen on its host and port: another process holds the port, the
    port needs privileges, or the host names no interface of this machine."""

    def __init__(self, host: str, port: int, reason: str) -> None:
        self.host = host
        self.port = port
        self.reason = reason
        where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        super().__init__(f"cannot listen on {where}: {reason}")


class EventError(OneirosError):
    """An event that cannot be encoded, decoded or upcast."""


class CorruptEvent(EventError):
    """Stored bytes that do not decode into the event their topic names."""

    def __init__(self, position: int | None, topic: str, reason: str) -> None:
        self.position = position
        self.topic = topic
        self.reason = reason
        where = f"at position {position}" if position is not None else "in input"
        super().__init__(f"corrupt event {topic!r} {where}: {reason}")


class InvalidEvent(EventError):
    """An event the store refuses to write because it could not be read back as it is.

    NaN and infinities (JSON has no such numbers), text that is not valid Unicode, values nested
    deeper than an encoder allows, and events larger than the store takes. ``field`` is the path of
    the offending value inside the event (``prediction_error``, ``outcome.pnl``) when known.
    """

    def __init__(self, type_name: str, reason: str, field: str | None = None) -> None:
        self.type_name = type_name
        self.field = field
        self.reason = reason
        where = f" field {field}" if field else ""
        super().__init__(f"{type_name}{where}: {reason}")


class UnknownEventType(EventError):
    """A topic that names no registered event type or version."""

    def __init__(self, topic: str, position: int | None = None) -> None:
        self.topic = topic
        self.position = position
        where = f" at position {position}" if position is not None else ""
        super().__init__(f"unknown event type {topic!r}{where}")


class StoreError(OneirosError):
    """The event store refused or failed an operation."""


class StreamConflict(StoreError):
    """Another writer appended to the stream at the version this writer expected."""

    def __init__(self, golem_id: str, expected_version: int) -> None:
        self.golem_id = golem_id
        self.expected_version = expected_version
        super().__init__(f"stream {golem_id!r} moved past version {expected_version}: another writer appended first")


class NoStore(StoreError):
    """A command that only reads was pointed at a URL where no store exists; it created nothing.
    The message masks the URL's password."""

    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        self.reason = reason
        super().__init__(f"no store at {masked_url(url)}: {reason}")


class StoreUnavailable(StoreError):
    """The store's server did not accept a connection within the configured time.

    ``where`` names host, port and database, never the password.
    """

    def __init__(self, url: str, where: str, reason: str) -> None:
        self.url = url
        self.where = where
        self.reason = reason
        super().__init__(f"cannot reach {where}: {reason}")


class GolemError(OneirosError):
    """A command that does not fit a golem's state."""

    def __init__(self, golem_id: str, message: str) -> None:
        self.golem_id = golem_id
        super().__init__(message)


class GolemNotFound(GolemError):
    """No golem with this id has been created in the log; ``nearest`` is the known golem whose id
    is closest to it (a typo's likely meaning), or None."""

    def __init__(self, golem_id: str, nearest: str | None = None) -> None:
        self.nearest = nearest
        hint = f"; did you mean {nearest!r}?" if nearest is not None else ""
        super().__init__(golem_id, f"golem {golem_id!r} does not exist{hint}")

    @classmethod
    def among(cls, golem_id: str, known: Iterable[str]) -> GolemNotFound:
        """The error for ``golem_id``, naming the nearest of the ``known`` golem ids (see
        :func:`nearest_name`), if any is near enough to be what was meant."""
        return cls(golem_id, nearest_name(golem_id, known))


def nearest_name(typed: str, known: Iterable[str]) -> str | None:
    """The one of ``known`` that ``typed`` most likely meant, or None when none is near: the same
    name in another case first (``G1`` for ``g1``), else the closest by edit distance, a swap of two
    neighbouring letters counting one (``g2``, ``gl``, ``golme``), within a third of the typed
    length and at least one, or by being a prefix of it or it of them (``cod``, ``g11``). Ties go to
    difflib's ratio, then to the name. difflib alone took only names sharing 60% of their letters,
    so ``g2`` got no hint for ``g1``."""
    import difflib  # noqa: PLC0415 - on the error path only: every process imports this module

    names = sorted(set(known))
    lower = typed.casefold()
    for name in names:
        if name.casefold() == lower:
            return name
    limit = max(1, len(typed) // 3)
    ranked: list[tuple[int, int, float, str]] = []
    for name in names:
        folded = name.casefold()
        distance = _edits(lower, folded)
        if distance <= limit:
            ranked.append((0, distance, -difflib.SequenceMatcher(None, lower, folded).ratio(), name))
        elif lower and (folded.startswith(lower) or lower.startswith(folded)):
            ranked.append((1, distance, 0.0, name))
    return min(ranked)[3] if ranked else None


def _edits(a: str, b: str) -> int:
    """The optimal-string-alignment distance: insertions, deletions, substitutions and swaps of two
    neighbouring characters, one each."""
    previous: list[int] = []
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        before_previous, previous, row = previous, row, [i] + [0] * len(b)
        for j, y in enumerate(b, 1):
            row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (x != y))
            if i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                row[j] = min(row[j], before_previous[j - 2] + 1)
    return row[len(b)]


class GolemExists(GolemError):
    """A golem with this id was already created."""

    def __init__(self, golem_id: str) -> None:
        super().__init__(golem_id, f"golem {golem_id!r} already exists")


class IllegalCommand(GolemError):
    """The GolemMode/DreamPhase machine has no transition for this trigger in this state."""

    def __init__(self, golem_id: str, state: str, trigger: str, detail: str = "") -> None:
        self.state = state
        self.trigger = trigger
        suffix = f": {detail}" if detail else ""
        super().__init__(golem_id, f"golem {golem_id!r} cannot {trigger!r} in state {state!r}{suffix}")


class CycleNotFound(GolemError):
    """The golem's stream has no cycle with this id; ``cycle_id`` None: it has no cycle at all yet
    (asked for its latest)."""

    def __init__(self, golem_id: str, cycle_id: str | None) -> None:
        self.cycle_id = cycle_id
        what = f"no cycle {cycle_id!r}" if cycle_id is not None else "not dreamt yet: it has no cycle"
        super().__init__(golem_id, f"golem {golem_id!r} has {what}")


class MemoryVersionNotFound(GolemError):
    """The golem's MEMORY.md has no version with this number; ``newest`` is its newest (0: none yet)."""

    def __init__(self, golem_id: str, version: int, newest: int) -> None:
        self.version = version
        self.newest = newest
        have = {0: "no versions yet (nothing has been promoted)", 1: "only version 1"}.get(
            newest, f"versions 1-{newest}"
        )
        super().__init__(golem_id, f"MEMORY.md of golem {golem_id!r} has {have}; there is no version {version}")


class InputError(OneirosError):
    """User-supplied data that oneiros cannot accept."""


class EpisodeFileError(InputError):
    """An episode file that cannot be read or has an invalid line."""

    def __init__(self, path: str, reason: str, line: int | None = None) -> None:
        self.path = path
        self.line = line
        self.reason = reason
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"cannot read episodes from {where}: {reason}")


class MalformedInput(InputError):
    """Bytes or values no JSON text can hold: bytes that are not UTF-8, a lone UTF-16 surrogate, or
    nesting deeper than oneiros reads."""

    def __init__(self, where: str, reason: str) -> None:
        self.where = where
        self.reason = reason
        super().__init__(f"{where}: {reason}")


class IdempotencyKeyReused(InputError):
    """An idempotency key sent again with a different request than the one it first came with."""

    def __init__(self, key: str, golem_id: str) -> None:
        self.key = key
        self.golem_id = golem_id
        super().__init__(f"idempotency key {key!r} was used for another request on golem {golem_id!r}; use a new key")


class UnknownId(InputError):
    """A typed cycle or entry id (or a prefix of one) that matches no id of its kind."""

    def __init__(self, kind: str, typed: str, where: str = "") -> None:
        self.kind = kind
        self.typed = typed
        self.where = where
        super().__init__(f"no {kind} matches {typed!r}" + (f" in {where}" if where else ""))


class AmbiguousId(InputError):
    """A typed prefix that matches several ids: the person must type more of it."""

    SHOWN = 10

    def __init__(self, kind: str, typed: str, candidates: tuple[str, ...]) -> None:
        self.kind = kind
        self.typed = typed
        self.candidates = candidates
        listed = ", ".join(candidates[: self.SHOWN])
        more = f" and {len(candidates) - self.SHOWN} more" if len(candidates) > self.SHOWN else ""
        kinds = "entries" if kind == "entry" else f"{kind}s"
        super().__init__(
            f"{kind} {typed!r} is ambiguous: it matches {len(candidates)} {kinds} ({listed}{more}); type more of it"
        )


class InvalidSetting(ConfigError):
    """A config key (from the file, a preset or an ``ONEIROS_*`` variable) with an unusable value."""

    def __init__(self, key: str, value: object, expected: str, source: str = "") -> None:
        self.key = key
        self.value = value
        self.expected = expected
        self.source = source
        where = f" (from {source})" if source else ""
        super().__init__(f"invalid setting {key} = {value!r}{where}: expected {expected}")


class UnknownPreset(ConfigError):
    """A preset name that none of the built-in presets carries."""

    def __init__(self, name: str, known: tuple[str, ...]) -> None:
        self.name = name
        self.known = known
        super().__init__(f"unknown preset {name!r}: expected one of {', '.join(known)}")


class GenerationError(OneirosError):
    """A generator that could not give a usable answer to one call."""

    def __init__(self, call_key: str, message: str) -> None:
        self.call_key = call_key
        super().__init__(message)


class GeneratorUnavailable(GenerationError):
    """The model endpoint timed out, failed or answered with no completion, through every retry."""

    def __init__(self, call_key: str, model: str, attempts: int, reason: str) -> None:
        self.model = model
        self.attempts = attempts
        self.reason = reason
        super().__init__(
            call_key, f"model {model!r} gave no answer to {call_key!r} after {attempts} attempts: {reason}"
        )


class MalformedOutput(GenerationError):
    """Model text that does not parse into the result its task asks for."""

    def __init__(self, call_key: str, task: str, reason: str) -> None:
        self.task = task
        self.reason = reason
        super().__init__(call_key, f"malformed {task!r} output for {call_key!r}: {reason}")


class ProjectionError(OneirosError):
    """A read model that cannot be built, followed or read."""


class ProjectionConflict(ProjectionError):
    """Another runner committed the projection past the position this runner started from."""

    def __init__(self, projection: str, expected: int, found: int | None) -> None:
        self.projection = projection
        self.expected = expected
        self.found = found
        super().__init__(
            f"projection {projection!r} moved from position {expected} to {found}: another runner committed first"
        )


class ProjectionBehind(ProjectionError):
    """A read asked to see the log up to ``wanted`` (a write's position, its consistency token) and
    the projection it reads stayed at ``position`` for ``seconds``: the server answers 503 with
    ``Retry-After``, and the same read later finds it caught up."""

    def __init__(self, projection: str, position: int, wanted: int, seconds: float) -> None:
        self.projection = projection
        self.position = position
        self.wanted = wanted
        self.seconds = seconds
        super().__init__(
            f"projection {projection!r} is at log position {position}, not yet {wanted}, "
            f"after {seconds:g}s; retry shortly"
        )


class UnknownProjection(ProjectionError):
    """A projection name that no registered projection carries."""

    def __init__(self, name: str, known: tuple[str, ...]) -> None:
        self.name = name
        self.known = known
        super().__init__(f"unknown projection {name!r}; expected one of {', '.join(known)}")


class StagingError(OneirosError):
    """A review or outcome that does not fit the staging buffer."""


class EntryNotFound(StagingError):
    """No staged entry carries this id."""

    def __init__(self, entry_id: str) -> None:
        self.entry_id = entry_id
        super().__init__(f"no staged entry {entry_id!r}")


class IllegalReview(StagingError):
    """The entry's status does not allow this review decision."""

    def __init__(self, entry_id: str, status: str, decision: str, allowed: tuple[str, ...] = ()) -> None:
        self.entry_id = entry_id
        self.status = status
        self.decision = decision
        self.allowed = allowed
        """The decisions the entry's status allows (none once it is settled for good)."""
        hint = f" (a {status} entry takes {', '.join(allowed)})" if allowed else ""
        super().__init__(f"entry {entry_id!r} is {status}; decision {decision!r} is not allowed{hint}")


class WorkerError(OneirosError):
    """Running a cycle's phases on workers went wrong."""


class CycleTimeout(WorkerError):
    """A cycle was still running when the time allowed for waiting on it ran out."""

    def __init__(self, golem_id: str, cycle_id: str, seconds: float) -> None:
        self.golem_id = golem_id
        self.cycle_id = cycle_id
        self.seconds = seconds
        super().__init__(f"cycle {cycle_id!r} of golem {golem_id!r} had not ended after {seconds:g} s")


class AccessError(OneirosError):
    """A request to the server that its caller may not make."""


class Unauthenticated(AccessError):
    """The request carries no bearer token, or one that matches no stored hash."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"not authenticated: {reason}")


class Forbidden(AccessError):
    """The token is known but lacks ``scope``, or is not bound to ``golem_id``."""

    def __init__(self, token: str, scope: str, golem_id: str | None = None) -> None:
        self.token = token
        self.scope = scope
        self.golem_id = golem_id
        what = f"golem {golem_id!r}" if golem_id is not None else f"the {scope!r} scope"
        super().__init__(f"token {token!r} has no access to {what}")

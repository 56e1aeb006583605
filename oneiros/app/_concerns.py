"""What a use case declares instead of writing it into its body: the golem it names must exist,
the read models it reads, whether it writes (and which read models its answer needs caught up
with the write), and whether a retry with the same idempotency key runs it again.

:func:`use_case` (a read) and :func:`command` (a write) turn a declaration into a chain of steps,
built once when the method is defined (as temporalio's client sends each call through its
interceptors' chain, the last link the implementation). A call goes through the chain in this
order, each step deciding whether and how to go on: the golem checked in its own stream
(``golem="created"``, before anything is written); the idempotency key (a call with a key used
before answers as the first call did and goes no further); the read models brought up
(``reads``); the golem checked in the projections (``golem="exists"``); the write watched
(``writes``); the method's body.

A command's body is handed its :class:`~oneiros.store._unit.UnitOfWork`, made for the call, and
writes through it (its golems, feedback and side streams over the unit): the unit joins the
call's idempotency key to its first transaction and tells the watch each position it commits.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Concatenate, Literal, NamedTuple, ParamSpec, Protocol, TypeVar

import msgspec

from oneiros.app._idempotency import once
from oneiros.store._store import Recorded
from oneiros.store._unit import UnitOfWork

if TYPE_CHECKING:
    from oneiros.app._core import Core

__all__ = ["Declared", "Part", "command", "declared", "use_case"]

_F = TypeVar("_F", bound=Callable[..., Any])
_S = TypeVar("_S")
_P = ParamSpec("_P")
_R = TypeVar("_R")


class Part(Protocol):
    """A part of the facade: what its use cases run on."""

    core: Core


class Declared(NamedTuple):
    """What a use case declared (kept on the method as ``__use_case__``, for tests and docs)."""

    reads: tuple[str, ...] | None
    """The read models it reads (every one if empty), brought up before its body; None: none."""
    sweep: bool
    """Whether those reads include the validation sweep's decisions (the staging buffer's moves)."""
    golem: Literal["created", "exists"] | None
    """How its ``golem_id`` is checked: in the golem's own stream before anything runs
    (``created``: a write, so a typo records nothing), or in the golems projection once the reads
    are up (``exists``); a None ``golem_id`` (every golem) is not checked."""
    writes: tuple[str, ...] | None
    """The read models its answer needs to include its write (every one if empty); None: it
    writes nothing a read must wait for."""
    shown: bool
    """Whether, where a follower serves reads, the answer waits for ``writes`` to include it."""
    idempotent: tuple[str, ...] | None
    """The arguments that make up its request, for an ``idempotency_key``; None: not idempotent."""
    keyed_by: Callable[[Any, Any], str] | None
    """The golem whose key stream holds the key, from the part and the request's first argument
    (default: the ``golem_id`` argument)."""
    only_if: str | None
    """A bool argument that, when False, says the call writes nothing, so its key is not kept."""
    rebuild: Callable[[list[Recorded]], Any] | None
    """Makes the answer from the events the first call appended, when that is all it is."""
    name: str
    """The operation the key's request names."""
    command: bool
    """Whether its body writes through a unit of work handed to it (a :func:`command`)."""


class _Call(NamedTuple):
    part: Part
    arguments: dict[str, Any]
    unit: UnitOfWork | None
    """A command's unit of work, made for this call; None for a read."""


_Next = Callable[[_Call], Any]
_Step = Callable[[Declared, _Call, _Next], Any]


def use_case(
    *, reads: Sequence[str] | None = None, sweep: bool = True, golem: Literal["created", "exists"] | None = None
) -> Callable[[_F], _F]:
    """Declare a method of a part as a use case that reads (see :class:`Declared` for each argument)."""

    def declare(method: _F) -> _F:
        declaration = Declared(
            reads=tuple(reads) if reads is not None else None, sweep=sweep, golem=golem, writes=None, shown=True,
            idempotent=None, keyed_by=None, only_if=None, rebuild=None, name=method.__name__, command=False,
        )  # fmt: skip
        return typing.cast("_F", _declared(declaration, method))

    return declare


def command(
    *,
    reads: Sequence[str] | None = None,
    sweep: bool = True,
    golem: Literal["created", "exists"] | None = None,
    writes: Sequence[str] | None = None,
    shown: bool = True,
    idempotent: Sequence[str] | None = None,
    keyed_by: Callable[[Any, Any], str] | None = None,
    only_if: str | None = None,
    rebuild: Callable[[list[Recorded]], Any] | None = None,
    name: str | None = None,
) -> Callable[[Callable[Concatenate[_S, UnitOfWork, _P], _R]], Callable[Concatenate[_S, _P], _R]]:
    """Declare a method of a part as a use case that writes (see :class:`Declared` for each
    argument). The method takes the call's :class:`UnitOfWork` after ``self`` and writes through
    it; its callers do not pass it (nor see it in its signature)."""

    def declare(method: Callable[Concatenate[_S, UnitOfWork, _P], _R]) -> Callable[Concatenate[_S, _P], _R]:
        declaration = Declared(
            reads=tuple(reads) if reads is not None else None,
            sweep=sweep,
            golem=golem,
            writes=tuple(writes) if writes is not None else None,
            shown=shown,
            idempotent=tuple(idempotent) if idempotent is not None else None,
            keyed_by=keyed_by,
            only_if=only_if,
            rebuild=rebuild,
            name=name or method.__name__,
            command=True,
        )
        return typing.cast("Callable[Concatenate[_S, _P], _R]", _declared(declaration, method))

    return declare


def _declared(declaration: Declared, method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` behind the declaration's chain, with the signature its callers use."""
    signature = inspect.signature(method)
    parameters = list(signature.parameters.values())
    if declaration.command:
        if len(parameters) < 2 or parameters[1].name != "unit":  # self, then the unit
            raise TypeError(f"command {method.__qualname__} must take its unit of work after self")
        del parameters[1]
        signature = signature.replace(parameters=parameters)
    chain = _chain(declaration, method)
    command = declaration.command

    @functools.wraps(method)
    def run(part: Part, /, *args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(part, *args, **kwargs)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        del arguments[parameters[0].name]
        return chain(_Call(part, arguments, UnitOfWork(part.core.store) if command else None))

    run.__signature__ = signature  # type: ignore[attr-defined]  # without the unit, for help() and the docs
    run.__use_case__ = declaration  # type: ignore[attr-defined]  # read by declared()
    return run


def declared(method: object) -> Declared | None:
    """What ``method`` declared, if it is a use case."""
    found = getattr(method, "__use_case__", None)
    return found if isinstance(found, Declared) else None


def _chain(declaration: Declared, method: Callable[..., Any]) -> _Next:
    """The declaration's steps around ``method``, outermost first."""
    steps: list[_Step] = []
    if declaration.golem == "created":
        steps.append(_require_golem)
    if declaration.idempotent is not None:
        kind = _answer_type(method)
        steps.append(functools.partial(_once, kind=kind))
    if declaration.reads is not None:
        steps.append(_fresh)
    if declaration.golem == "exists":
        steps.append(_exists)
    if declaration.writes is not None:
        steps.append(_writing)

    def body(call: _Call) -> Any:
        if call.unit is not None:
            return method(call.part, call.unit, **call.arguments)
        return method(call.part, **call.arguments)

    chained: _Next = body
    for step in reversed(steps):
        chained = functools.partial(step, declaration, nxt=chained)
    return chained


def _answer_type(method: Callable[..., Any]) -> Callable[[], type]:
    """The method's return type (the Struct its key's answer decodes to), found on first use: its
    module is still loading when the method is declared. A plain name of the module's globals."""

    @functools.cache
    def resolve() -> type:
        named = inspect.signature(method).return_annotation
        found: type = method.__globals__[named] if isinstance(named, str) else named
        return found

    return resolve


def _require_golem(declaration: Declared, call: _Call, nxt: _Next) -> Any:
    golem_id = call.arguments.get("golem_id")
    if golem_id is not None:
        call.part.core.require_golem(golem_id)
    return nxt(call)


def _once(declaration: Declared, call: _Call, nxt: _Next, *, kind: Callable[[], type]) -> Any:
    arguments = call.arguments
    key = arguments.get("idempotency_key")
    if key is None or (declaration.only_if is not None and not arguments[declaration.only_if]):
        return nxt(call)  # a call that writes nothing may run again
    names = declaration.idempotent or ()
    for held in names:  # the request is hashed and then run: an iterator is read once, for both
        value = arguments[held]
        if isinstance(value, Iterable) and not isinstance(value, str | bytes | Mapping | msgspec.Struct | list):
            arguments[held] = list(value)
    asked = [arguments[held] for held in names]
    request = asked[0] if len(asked) == 1 else asked
    assert call.unit is not None  # a declaration with ``idempotent`` is a command's
    golem_id = declaration.keyed_by(call.part, asked[0]) if declaration.keyed_by else arguments["golem_id"]
    return once(
        call.unit, call.part.core.deps, golem_id, key, request=(declaration.name, request), kind=kind(),
        run=lambda: nxt(call), rebuild=declaration.rebuild,
    )  # fmt: skip


def _fresh(declaration: Declared, call: _Call, nxt: _Next) -> Any:
    call.part.core.fresh(*(declaration.reads or ()), sweep=declaration.sweep)
    return nxt(call)


def _exists(declaration: Declared, call: _Call, nxt: _Next) -> Any:
    golem_id = call.arguments.get("golem_id")
    if golem_id is not None:
        call.part.core.exists(golem_id)
    return nxt(call)


def _writing(declaration: Declared, call: _Call, nxt: _Next) -> Any:
    assert call.unit is not None  # a declaration with ``writes`` is a command's
    with call.part.core.writing(call.unit, declaration.writes or (), shown=declaration.shown):
        return nxt(call)

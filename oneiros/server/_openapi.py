"""The OpenAPI 3.1 document at ``/openapi.json``, made from the route table, the request Structs
and the result Structs each route answers with (msgspec's JSON Schema is OpenAPI 3.1's)."""

from __future__ import annotations

import re
from typing import Any

import msgspec

from oneiros.server._idempotency import appends
from oneiros.server._models import ErrorBody
from oneiros.server._rest import PREFIX, Op, operations

__all__ = ["failures", "openapi"]

_PARAM = re.compile(r"\{(\w+)(?::(\w+))?\}")
_ERRORS = {
    "400": "Bad input: a body, query parameter or id oneiros cannot take (InputError, MalformedInput...).",
    "401": "No bearer token, an unknown one, or an expired one (Unauthenticated).",
    "403": "The token lacks the scope or the golem (Forbidden); without tokens, an Origin that is not loopback.",
    "404": "No such golem, dream, cycle or MEMORY.md version.",
    "405": "The path does not take this method; the Allow header lists those it takes.",
    "409": "The machine or the buffer refuses it now (GolemExists, IllegalCommand, IllegalReview, StreamConflict).",
    "413": "The request body is larger than server.max_body_bytes.",
    "415": "Without tokens (--insecure-local): a body that is not application/json.",
    "421": "Without tokens (--insecure-local): a Host that is not a loopback name.",
    "422": "The Idempotency-Key came before with another request (IdempotencyKeyReused).",
    "500": "A failure of the server itself (InternalError), logged with its traceback.",
    "503": "The store is unavailable (StoreError).",
}
_MAX_CYCLES = (
    "The store is unavailable (StoreError), or the server runs server.max_cycles cycles already (WorkerError): "
    "retry when one has ended."
)


_KEY_HEADER = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": "A retry with the key its first attempt came with appends nothing and answers as the first did.",
    "schema": {"type": "string", "minLength": 1, "maxLength": 256},
}
# The event stream, for its failures: a GET of the read scope that names nothing in its path.
_EVENTS = Op("GET", "/events", "", "read", lambda _call: None)


def failures(op: Op) -> dict[str, str]:
    """The error statuses ``op`` can answer, each with what it means: those of every guarded route,
    404 where a path or query names something, 409 where it writes, 415 where it takes a body, 422
    where an idempotency key can come twice."""
    codes = {"400", "401", "403", "405", "413", "421", "500", "503"}
    if "{" in op.path or any(q.name == "golem" for q in op.query):
        codes.add("404")
    if op.scope != "read":
        codes.add("409")
    if op.method == "POST":
        codes.add("415")
    if appends(op.method):
        codes.add("422")
    described = {code: _ERRORS[code] for code in sorted(codes)}
    if op.path.endswith("/cycles") and op.method == "POST":
        described["503"] = _MAX_CYCLES
    return described


def _answers(op: Op, schemas: dict[str, Any]) -> dict[str, Any]:
    """The success response's content: its result Struct's schema (text routes: a string)."""
    if op.returns is str:
        return {op.media: {"schema": {"type": "string"}}}
    content = {"application/json": {"schema": schemas[repr(op.returns)]}}
    if op.path.endswith("/journal"):  # ?format=markdown answers journal.md
        content["text/markdown"] = {"schema": {"type": "string"}}
    return content


def openapi(version: str) -> dict[str, Any]:
    ops = operations()
    bodies = sorted({op.body for op in ops if op.body is not None}, key=lambda t: t.__name__)
    # Every success answers with a Struct of oneiros.app (or the server's own): its schema is the
    # one --json, REST and MCP share, so a generated client gets a typed model for each.
    answers = list({repr(op.returns): op.returns for op in ops if op.returns not in (None, str)}.values())
    (refs, components) = msgspec.json.schema_components(
        [*bodies, ErrorBody, *answers], ref_template="#/components/schemas/{name}"
    )
    schemas = {repr(kind): ref for kind, ref in zip(answers, refs[len(bodies) + 1 :], strict=True)}
    error_ref = {"$ref": "#/components/schemas/ErrorBody"}
    paths: dict[str, dict[str, Any]] = {}
    for op in ops:
        path = _PARAM.sub(lambda m: "{" + m.group(1) + "}", PREFIX + op.path)
        params: list[dict[str, Any]] = [
            {
                "name": m.group(1),
                "in": "path",
                "required": True,
                "schema": {"type": "integer" if m.group(2) == "int" else "string"},
            }
            for m in _PARAM.finditer(op.path)
        ]
        if appends(op.method):
            params.append(_KEY_HEADER)
        for q in op.query:
            schema: dict[str, Any] = {"type": {int: "integer", bool: "boolean"}.get(q.kind, "string")}
            if q.many:
                schema = {"type": "array", "items": schema}
            params.append(
                {"name": q.name, "in": "query", "required": False, "description": q.description, "schema": schema}
            )
        errors = {
            code: {"description": text, "content": {"application/json": {"schema": error_ref}}}
            for code, text in failures(op).items()
        }
        entry: dict[str, Any] = {
            "summary": op.summary,
            "operationId": f"{op.method.lower()}_{re.sub(r'[^a-z0-9]+', '_', path[len(PREFIX) :].lower()).strip('_')}",
            "parameters": params,
            "security": [{"bearer": [op.scope]}],
            "responses": {str(op.status): {"description": "OK", "content": _answers(op, schemas)}, **errors},
        }
        if op.body is not None:
            entry["requestBody"] = {
                "required": True,
                "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{op.body.__name__}"}}},
            }
        paths.setdefault(path, {})[op.method.lower()] = entry
    paths[PREFIX + "/events"] = {
        "get": {
            "summary": "Server-Sent Events: mode_change, dream_progress, dream_complete (Bardo), log_event on request.",
            "operationId": "get_events",
            "parameters": [
                {"name": "golem", "in": "query", "schema": {"type": "array", "items": {"type": "string"}}},
                {"name": "raw", "in": "query", "schema": {"type": "boolean"}},
                {"name": "types", "in": "query", "schema": {"type": "string"}},
                {"name": "after", "in": "query", "schema": {"type": "integer"}},
                {"name": "Last-Event-ID", "in": "header", "schema": {"type": "integer"}},
            ],
            "security": [{"bearer": ["read"]}],
            "responses": {
                "200": {
                    "description": "An event stream: `event:`, `id:` and `data:` lines (docs/server.md)",
                    "content": {"text/event-stream": {"schema": {"type": "string"}}},
                },
                **{
                    code: {"description": text, "content": {"application/json": {"schema": error_ref}}}
                    for code, text in failures(_EVENTS).items()
                },
            },
        }
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "oneiros", "version": version, "description": "Dreams are hypotheses, never facts."},
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }

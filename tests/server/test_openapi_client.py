"""A client generated from the served ``/openapi.json`` by openapi-python-client has a typed model
for every success response, and those models read what the server answers."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
import typing
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from tests.server.conftest import start_server
from tests.server.test_rest import _dreamt, _ok

pytestmark = pytest.mark.timeout(300)

_PACKAGE = "oneiros_api_for_tests"
_TEXT = ("text/plain", "text/markdown", "text/event-stream")


def _generate(document: Path, into: Path) -> ModuleType:
    """The client openapi-python-client generates from ``document``, imported."""
    into.mkdir(parents=True, exist_ok=True)
    config = into / "config.yaml"
    config.write_text("post_hooks: []\n")  # no formatter run over the generated code
    made = subprocess.run(
        [sys.executable, "-m", "openapi_python_client", "generate", "--path", str(document), "--meta", "none",
         "--output-path", str(into / _PACKAGE), "--config", str(config)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert 0 == made.returncode, made.stdout + made.stderr
    assert "Warning" not in made.stdout, made.stdout
    sys.path.insert(0, str(into))
    return importlib.import_module(_PACKAGE)


def _answer_types(module: ModuleType, error_body: type) -> list[Any]:
    """What the operation's success responses parse into: every type its parser returns but the
    error body and None."""
    returned = typing.get_type_hints(module._parse_response)["return"]
    return [t for t in typing.get_args(returned) if t not in (type(None), error_body)]


def _is_model(kind: Any) -> bool:
    """A class the generator made from a schema (``from_dict``), or a list of them."""
    if typing.get_origin(kind) is list:
        return _is_model(typing.get_args(kind)[0])
    return inspect.isclass(kind) and hasattr(kind, "from_dict") and kind.__module__.startswith(f"{_PACKAGE}.models")


def test_a_generated_client_has_a_typed_model_for_every_success_and_reads_the_answers(tmp_path: Path) -> None:
    """openapi-python-client, given the served /openapi.json of a server holding a dreamt golem
    with a promoted entry, generates without a warning; every 2xx of every operation parses into a
    generated model (a list of them for a cycle's spans) or, for the text routes (a MEMORY.md diff,
    the event stream), a string: never Any or a bare dict. Every GET but the event stream, called
    with the generated client, answers an instance of its model."""
    server = start_server(f"sqlite:///{tmp_path}/events.db", tmp_path / "serve")
    try:
        http = server.client("admin")
        cycle_id = _dreamt(http)["cycle_id"]
        entry_id = _ok(http.get("/dreams", params={"golem": "g1", "limit": 1}))["items"][0]["entry_id"]
        _ok(http.post(f"/dreams/{entry_id}/feedback", json={"decision": "promote_candidate", "feedback": "yes"}))
        document = httpx.get(server.url + "/openapi.json").text
        (tmp_path / "openapi.json").write_text(document)
        api = _generate(tmp_path / "openapi.json", tmp_path / "generated")
        models = importlib.import_module(f"{_PACKAGE}.models")
        client = importlib.import_module(f"{_PACKAGE}.client").AuthenticatedClient(
            base_url=server.url, token=server.tokens["admin"], timeout=httpx.Timeout(60)
        )
        values = {
            "golem": "g1",
            "golem_id": "g1",
            "entry_id": entry_id,
            "cycle_id": cycle_id,
            "version": 1,
            "from_": 1,
            "to": 1,
        }
        untyped: list[str] = []
        unread: list[str] = []
        for path, methods in httpx.Response(200, content=document).json()["paths"].items():
            for method, operation in methods.items():
                name = operation["operationId"]
                module = importlib.import_module(f"{api.__name__}.api.default.{name}")
                answers = _answer_types(module, models.ErrorBody)
                media = {m for code, r in operation["responses"].items() if code < "300" for m in r["content"]}
                text_only = media <= set(_TEXT)
                if not (
                    [str] == answers
                    if text_only
                    else [a for a in answers if a is not str]
                    and all(_is_model(a) or (a is str and "text/markdown" in media) for a in answers)
                ):
                    untyped.append(f"{method.upper()} {path}: {answers}")
                if method != "get" or "text/event-stream" in media:
                    continue
                wanted = inspect.signature(module.sync_detailed).parameters
                answer = module.sync_detailed(client=client, **{k: v for k, v in values.items() if k in wanted})
                kind = next(a for a in answers if a is not str) if not text_only else str
                items = answer.parsed if typing.get_origin(kind) is list else [answer.parsed]
                of = typing.get_args(kind)[0] if typing.get_origin(kind) is list else kind
                if answer.status_code >= 300 or not all(isinstance(i, of) for i in items):
                    unread.append(f"GET {path}: {answer.status_code} {answer.parsed!r:.200}")
        assert [] == untyped
        assert [] == unread
    finally:
        server.stop()
        for module in [m for m in sys.modules if m == _PACKAGE or m.startswith(f"{_PACKAGE}.")]:
            del sys.modules[module]

"""Run by tests/server/test_openapi_client.py with the python of openapi-python-client's own venv:
imports the client it generated and prints, as one JSON object, the operations whose success
responses are not typed and the GETs whose answers the generated models do not read.

    python openapi_check.py GENERATED_DIR PACKAGE OPENAPI_JSON SERVER_URL TOKEN VALUES_JSON
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys
import typing
from pathlib import Path
from typing import Any

_TEXT = ("text/plain", "text/markdown", "text/event-stream")


def _is_model(kind: Any, package: str) -> bool:
    """A class the generator made from a schema (``from_dict``), or a list of them."""
    if typing.get_origin(kind) is list:
        return _is_model(typing.get_args(kind)[0], package)
    return inspect.isclass(kind) and hasattr(kind, "from_dict") and kind.__module__.startswith(f"{package}.models")


def main(argv: list[str]) -> dict[str, Any]:
    generated, package, document, url, token, values_json = argv
    sys.path.insert(0, generated)
    models = importlib.import_module(f"{package}.models")
    client = importlib.import_module(f"{package}.client").AuthenticatedClient(base_url=url, token=token, timeout=60)
    values: dict[str, Any] = json.loads(values_json)
    untyped: list[str] = []
    unread: list[str] = []
    operations = 0
    for path, methods in json.loads(Path(document).read_text())["paths"].items():
        for method, operation in methods.items():
            operations += 1
            module = importlib.import_module(f"{package}.api.default.{operation['operationId']}")
            returned = typing.get_type_hints(module._parse_response)["return"]
            answers = [t for t in typing.get_args(returned) if t not in (type(None), models.ErrorBody)]
            media = {m for code, r in operation["responses"].items() if code < "300" for m in r["content"]}
            text_only = media <= set(_TEXT)
            models_only = [a for a in answers if a is not str]
            typed = (
                answers == [str]
                if text_only
                else bool(models_only)
                and all(_is_model(a, package) for a in models_only)
                and (str not in answers or "text/markdown" in media)
            )
            if not typed:
                untyped.append(f"{method.upper()} {path}: {answers}")
            if method != "get" or "text/event-stream" in media:
                continue
            wanted = inspect.signature(module.sync_detailed).parameters
            answer = module.sync_detailed(client=client, **{k: v for k, v in values.items() if k in wanted})
            kind = models_only[0] if models_only else str
            listed = typing.get_origin(kind) is list
            items = answer.parsed if listed else [answer.parsed]
            of = typing.get_args(kind)[0] if listed else kind
            if answer.status_code >= 300 or not all(isinstance(i, of) for i in items):
                unread.append(f"GET {path}: {answer.status_code} {answer.parsed!r:.300}")
    return {"operations": operations, "untyped": untyped, "unread": unread}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:7])))

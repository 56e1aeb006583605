"""A client generated from the served ``/openapi.json`` by openapi-python-client has a typed model
for every success response, and those models read what the server answers.

openapi-python-client holds typer below 0.28, so it is not in the dev extra (it would change the
CLI's messages there): it runs from a venv of its own, made once in ``.venv-tools/`` (or
``$ONEIROS_TOOLS``), and so does the generated client it is checked with."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.server.conftest import ROOT, start_server
from tests.server.test_rest import _dreamt, _ok

pytestmark = pytest.mark.timeout(600)

GENERATOR = "openapi-python-client==0.29.1"
_PACKAGE = "oneiros_api_for_tests"


@pytest.fixture(scope="session")
def tool_python() -> Path:
    """The python of a venv holding openapi-python-client (and python-dateutil, which the client it
    generates imports), made on first use; skips when it cannot be installed (fails under CI)."""
    home = Path(os.environ.get("ONEIROS_TOOLS", ROOT / ".venv-tools")) / GENERATOR.replace("==", "-")
    python = home / "bin" / "python"
    if not (home / "ready").exists():
        made = subprocess.run(
            [sys.executable, "-m", "venv", "--clear", str(home)], capture_output=True, text=True, check=False
        )
        installed = (
            made.returncode == 0
            and not subprocess.run(
                [str(python), "-m", "pip", "install", "-q", GENERATOR, "python-dateutil"],
                capture_output=True,
                text=True,
                check=False,
            ).returncode
        )
        if not installed:
            reason = f"cannot install {GENERATOR} into {home}"
            if os.environ.get("CI") == "true":
                pytest.fail(f"{reason}; CI must have it")
            pytest.skip(reason)
        (home / "ready").write_text(GENERATOR)
    return python


def test_a_generated_client_has_a_typed_model_for_every_success_and_reads_the_answers(
    tmp_path: Path, tool_python: Path
) -> None:
    """openapi-python-client, given the served /openapi.json of a server holding a dreamt golem
    with a promoted entry, generates a client without a warning; every 2xx of every operation
    parses into a generated model (a list of them for a cycle's spans) or, for the text routes (a
    MEMORY.md diff, the event stream), a string: never Any or a bare dict. Every GET but the event
    stream, called with the generated client, answers an instance of its model."""
    server = start_server(f"sqlite:///{tmp_path}/events.db", tmp_path / "serve")
    try:
        http = server.client("admin")
        cycle_id = _dreamt(http)["cycle_id"]
        entry_id = _ok(http.get("/dreams", params={"golem": "g1", "limit": 1}))["items"][0]["entry_id"]
        _ok(http.post(f"/dreams/{entry_id}/feedback", json={"decision": "promote_candidate", "feedback": "yes"}))
        document = tmp_path / "openapi.json"
        document.write_text(httpx.get(server.url + "/openapi.json").text)
        generated = tmp_path / "generated"
        generated.mkdir()
        (generated / "config.yaml").write_text("post_hooks: []\n")  # no formatter run over the code
        made = subprocess.run(
            [str(tool_python), "-m", "openapi_python_client", "generate", "--path", str(document), "--meta", "none",
             "--output-path", str(generated / _PACKAGE), "--config", str(generated / "config.yaml")],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert (0, False) == (made.returncode, "Warning" in made.stdout), made.stdout + made.stderr
        values = {"golem": "g1", "golem_id": "g1", "entry_id": entry_id, "cycle_id": cycle_id, "version": 1}
        values |= {"from_": 1, "to": 1}
        checked = subprocess.run(
            [str(tool_python), str(Path(__file__).with_name("openapi_check.py")), str(generated), _PACKAGE,
             str(document), server.url, server.tokens["admin"], json.dumps(values)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        found = json.loads(checked.stdout)
        assert (36, [], []) == (found["operations"], found["untyped"], found["unread"])
    finally:
        server.stop()

"""A token from the environment (``ONEIROS_SERVER_TOKEN``), for a container that gets its secrets
only from there: accepted beside the tokens file, never kept in clear, refused when short."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from oneiros._errors import ConfigError
from oneiros.server._auth import Tokens, environment_tokens, hash_token

TOKEN = "oneiros_" + "k" * 40


def test_the_environment_token_authenticates_with_every_scope_and_only_its_hash_is_kept() -> None:
    """The record keeps the SHA-256 only; the token authenticates as ``environment`` with admin
    scope on every golem; unset or blank, there is none."""
    (record,) = environment_tokens({"ONEIROS_SERVER_TOKEN": TOKEN})
    assert (hash_token(TOKEN), ("admin",), ()) == (record.sha256, record.scopes, record.golems)
    assert TOKEN not in repr(record)
    who = Tokens([record]).authenticate(f"Bearer {TOKEN}")
    assert ("environment", ("admin",)) == (who.name, who.scopes)
    assert [] == environment_tokens({}) == environment_tokens({"ONEIROS_SERVER_TOKEN": "  "})


def test_a_short_environment_token_is_a_config_error() -> None:
    """A hand-set secret shorter than 32 characters is refused, with how to make a good one."""
    with pytest.raises(ConfigError) as caught:
        environment_tokens({"ONEIROS_SERVER_TOKEN": "hunter2"})
    assert (
        "ONEIROS_SERVER_TOKEN is 7 characters; use at least 32 random ones "
        '(python -c "import secrets; print(secrets.token_urlsafe(32))")'
    ) == str(caught.value)


def test_serve_with_a_short_environment_token_exits_2_in_one_line(tmp_path: Path) -> None:
    """`oneiros serve` with a short ONEIROS_SERVER_TOKEN: exit 2, one line, the token not echoed."""
    env = {"ONEIROS_SERVER_TOKEN": "hunter2", "PATH": "/usr/bin:/bin"}
    command = [sys.executable, "-m", "oneiros", "serve", "--store", f"sqlite:///{tmp_path}/e.db"]
    done = subprocess.run(command, check=False, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert 2 == done.returncode
    assert 1 == len(done.stderr.strip().splitlines())
    assert "hunter2" not in done.stderr + done.stdout

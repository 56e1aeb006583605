"""The generator of the servers in tests/server/test_background_cycles.py (``server.generator =
"tests.server.held:generator"``): the chat server whose ``/v1`` URL is in ``CHAT_URL_FOR_TESTS``."""

from __future__ import annotations

import os

from oneiros.generators._openai import OpenAIGenerator
from oneiros.settings._generator import OpenAISettings


def generator() -> OpenAIGenerator:
    settings = OpenAISettings(
        base_url=os.environ["CHAT_URL_FOR_TESTS"], models={"core": "m", "hardened": "m"}, timeout_s=90, retries=0
    )
    return OpenAIGenerator(settings, env={"OPENAI_API_KEY": "sk-test"})

"""Text generators: one protocol, a deterministic offline generator that needs no network, an
OpenAI-compatible one, prompt templates and the typed results model output is parsed into.
"""

from oneiros.generators._factory import make_generator
from oneiros.generators._offline import OfflineGenerator
from oneiros.generators._openai import OpenAIGenerator
from oneiros.generators._protocol import Generation, GenerationRequest, Generator, Task

__all__ = [
    "Generation",
    "GenerationRequest",
    "Generator",
    "OfflineGenerator",
    "OpenAIGenerator",
    "Task",
    "make_generator",
]

"""Text generators: one protocol, and a deterministic offline generator that needs no network."""

from oneiros.generators._offline import OfflineGenerator
from oneiros.generators._protocol import Generation, GenerationRequest, Generator, Task

__all__ = ["Generation", "GenerationRequest", "Generator", "OfflineGenerator", "Task"]

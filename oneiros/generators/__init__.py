"""Text generators: one protocol, a deterministic offline generator that needs no network, an
OpenAI-compatible one, prompt templates and the typed results model output is parsed into."""

from oneiros.generators._factory import check_api_key, make_generator
from oneiros.generators._lines import EpisodeLine, episode_line, episode_lines, read_episode_lines
from oneiros.generators._offline import OfflineGenerator, keywords
from oneiros.generators._openai import OpenAIConfig, OpenAIGenerator
from oneiros.generators._protocol import (
    Generation,
    GenerationRequest,
    Generator,
    RequestShape,
    Task,
    Tier,
    model_of,
    request_hash,
    request_shape,
)
from oneiros.generators._results import (
    CounterfactualResult,
    DepotentiationResult,
    DreamResult,
    HypothesisResult,
    InsightResult,
    NoveltyResult,
    PatternResult,
    ThreatResult,
    parse_dream,
    parse_json,
    parse_partial,
)

__all__ = [
    "CounterfactualResult",
    "DepotentiationResult",
    "DreamResult",
    "EpisodeLine",
    "Generation",
    "GenerationRequest",
    "Generator",
    "HypothesisResult",
    "InsightResult",
    "NoveltyResult",
    "OfflineGenerator",
    "OpenAIConfig",
    "OpenAIGenerator",
    "PatternResult",
    "RequestShape",
    "Task",
    "ThreatResult",
    "Tier",
    "check_api_key",
    "episode_line",
    "episode_lines",
    "keywords",
    "make_generator",
    "model_of",
    "parse_dream",
    "parse_json",
    "parse_partial",
    "read_episode_lines",
    "request_hash",
    "request_shape",
]

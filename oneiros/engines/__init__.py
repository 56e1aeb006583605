"""The phase engines: what each dream phase does with the episodes."""

from oneiros.engines._context import EngineSettings, PhaseContext, PhaseEngine
from oneiros.engines._simple import ENGINES, utility

__all__ = ["ENGINES", "EngineSettings", "PhaseContext", "PhaseEngine", "utility"]

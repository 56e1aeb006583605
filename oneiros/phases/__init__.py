"""The phase engines: what each dream phase does with the episodes."""

from oneiros.phases._context import PhaseContext, PhaseEngine
from oneiros.phases._engines import ENGINES

__all__ = [
    "ENGINES",
    "PhaseContext",
    "PhaseEngine",
]

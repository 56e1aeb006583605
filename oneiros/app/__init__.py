"""The application layer: every use case once, for the CLI, REST and MCP, each answering with one
of the result Structs below (the shape ``--json``, the REST API and the MCP tools all encode).
"""

from oneiros.app._dreams import CycleOptions
from oneiros.app._items import StoredItem
from oneiros.app._memory_block import MemoryBlock, MemoryBlockItem
from oneiros.app._oneiros import Oneiros
from oneiros.app._shapes import CycleRun, DreamingStatus, Entry, Golem, OutcomeMoved, Page, Report
from oneiros.validation._review import OutcomeInput

__all__ = [
    "CycleOptions",
    "CycleRun",
    "DreamingStatus",
    "Entry",
    "Golem",
    "MemoryBlock",
    "MemoryBlockItem",
    "Oneiros",
    "OutcomeInput",
    "OutcomeMoved",
    "Page",
    "Report",
    "StoredItem",
]

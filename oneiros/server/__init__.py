"""``oneiros serve`` and ``oneiros mcp``: the REST API, the live event stream and the MCP server,
over the same store and config as every other process (docs/server.md)."""

from oneiros.server._app import check_exposure, create_app, is_loopback
from oneiros.server._auth import (
    LOCAL,
    SCOPES,
    Principal,
    Scope,
    TokenRecord,
    Tokens,
    add_token,
    hash_token,
    load_tokens,
)
from oneiros.server._events import BARDO_EVENTS, RAW_EVENT
from oneiros.server._mcp import HYPOTHESES, build_mcp
from oneiros.server._models import (
    ActivityIn,
    CycleIn,
    EpisodesIn,
    ErrorBody,
    ErrorDetail,
    FeedbackIn,
    GolemIn,
    RecallIn,
)
from oneiros.server._service import Service
from oneiros.server._warm import warm_decoders

__all__ = [
    "BARDO_EVENTS",
    "HYPOTHESES",
    "LOCAL",
    "RAW_EVENT",
    "SCOPES",
    "ActivityIn",
    "CycleIn",
    "EpisodesIn",
    "ErrorBody",
    "ErrorDetail",
    "FeedbackIn",
    "GolemIn",
    "Principal",
    "RecallIn",
    "Scope",
    "Service",
    "TokenRecord",
    "Tokens",
    "add_token",
    "build_mcp",
    "check_exposure",
    "create_app",
    "hash_token",
    "is_loopback",
    "load_tokens",
    "warm_decoders",
]

"""``oneiros serve`` and ``oneiros mcp``: the REST API, the live event stream and the MCP server,
over the same store and config as every other process (docs/server.md).

No name here is public: the modules are private and import each other directly.
Run it with ``oneiros serve`` or ``oneiros mcp``.
"""

__all__: list[str] = []

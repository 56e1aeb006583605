"""The application layer: every use case once, for the CLI, REST and MCP."""

__all__: list[str] = []

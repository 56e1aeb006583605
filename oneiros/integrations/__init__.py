"""Adapters to agent frameworks: each module gives a framework's memory interface over oneiros and
imports that framework, so install its extra first (``oneiros[langgraph]``)."""

__all__: list[str] = []

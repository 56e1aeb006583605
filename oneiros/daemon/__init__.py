"""The heartbeat daemon behind ``oneiros run``: activity in, scheduler decisions and cycles out."""

from oneiros.daemon._daemon import SESSION_PREFIX, Daemon, Delivery, Message, interactive_history, session_key

__all__ = ["SESSION_PREFIX", "Daemon", "Delivery", "Message", "interactive_history", "session_key"]

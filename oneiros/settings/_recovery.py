"""How stranded cycles are found and resumed: phase leases and the reconciler's pace."""

from __future__ import annotations

import msgspec

from oneiros._errors import InvalidSetting

__all__ = ["RecoverySettings"]


class RecoverySettings(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Leases on running phases and the reconciler that resumes phases nobody runs.

    None of these numbers comes from the source documents: they are oneiros's operating defaults,
    chosen so that, whatever the RQ settings, a phase whose process was killed is resumed within
    about 30 s (``lease_seconds`` for the lease to lapse, plus up to ``interval_seconds`` until the
    next pass) and a phase whose job a Redis restart lost within ``grace_seconds`` plus
    ``interval_seconds`` of Redis answering again: both inside the 60 s that issue 12 asks for.
    """

    lease_seconds: float = 15.0
    """A phase's lease lapses this long after its holder's last renewal; a process that dies is
    noticed this much later at most (operating default: three renewals' worth)."""
    renew_seconds: float = 5.0
    """The holder's heartbeat renews its lease this often (operating default: a third of the lease)."""
    interval_seconds: float = 5.0
    """Seconds between reconciler passes in every worker, the daemon and ``recover --watch``."""
    grace_seconds: float = 10.0
    """A phase with neither job nor lease is left alone this long after the golem's last event: the
    gap between a phase's commit and the next one's enqueue, or a cycle's start and its lease."""
    attempts: int = 3
    """Resumes of one phase of a cycle before the reconciler ends the cycle interrupted instead."""

    def __post_init__(self) -> None:
        for name in ("lease_seconds", "renew_seconds", "interval_seconds", "grace_seconds"):
            value = getattr(self, name)
            if not value > 0 or value == float("inf"):
                raise InvalidSetting(f"recovery.{name}", value, "a finite number of seconds above 0")
        if self.renew_seconds >= self.lease_seconds:
            raise InvalidSetting(
                "recovery.renew_seconds", self.renew_seconds, f"less than lease_seconds ({self.lease_seconds:g})"
            )
        if self.attempts < 0:
            raise InvalidSetting("recovery.attempts", self.attempts, "0 or more")

"""Holding a phase's lease while it runs: a heartbeat thread renews it until the work is done.

Whatever runs a phase (an RQ phase job, the in-process executor for a whole cycle) holds the
golem's lease for as long as it works, renewed every ``renew_seconds``. A process that dies stops
renewing, and ``lease_seconds`` later the reconciler sees the phase as having no live process.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

import msgspec

from oneiros.events._types import DreamPhaseName
from oneiros.settings._recovery import RecoverySettings
from oneiros.store._leases import Lease, LeaseStore

__all__ = ["Claim", "holder_name", "holding"]

_log = logging.getLogger("oneiros.workers")


def holder_name(job_id: str | None = None) -> str:
    """This process as a lease names it: host and pid, and the RQ job it runs, if any."""
    name = f"{socket.gethostname()} pid {os.getpid()}"
    return f"{name} job {job_id}" if job_id else name


class Claim(NamedTuple):
    """What a lease claims: ``holder`` runs ``phase`` of ``cycle_id`` for ``golem_id`` (every phase when None)."""

    golem_id: str
    cycle_id: str
    phase: DreamPhaseName | None
    holder: str


@contextmanager
def holding(leases: LeaseStore, settings: RecoverySettings, claim: Claim) -> Iterator[Lease | None]:
    """Hold the golem's lease as ``claim`` says while inside.

    Yields None when this process holds it, or the live lease of another holder that blocks it
    (then nothing is held, and the caller should leave the phase to that holder). A lease store
    that cannot be written costs only the hint: the work goes on, yielding None."""
    golem_id = claim.golem_id
    lease = Lease(
        golem_id=golem_id,
        cycle_id=claim.cycle_id,
        phase=claim.phase,
        holder=claim.holder,
        expires_at=time.time() + settings.lease_seconds,
        host=socket.gethostname(),
        pid=os.getpid(),
    )
    try:
        blocked = leases.acquire(lease)
    except Exception as exc:  # the lease is a hint; the log stays the truth
        _log.warning("lease of %s not taken: %s", golem_id, exc)
        blocked = None
    if blocked is not None:
        yield blocked
        return
    done = threading.Event()

    def renew() -> None:
        while not done.wait(settings.renew_seconds):
            fresh = msgspec.structs.replace(lease, expires_at=time.time() + settings.lease_seconds)
            try:
                other = leases.acquire(fresh)
            except Exception:  # a missed renewal only brings the lease's lapse nearer
                _log.debug("renewing the lease of %s failed", golem_id, exc_info=True)
                continue
            if other is not None:
                # Someone resumed the phase after this lease lapsed (this process stalled): theirs now.
                _log.warning("lease of %s taken over by %s", golem_id, other.holder)
                return

    beat = threading.Thread(target=renew, name=f"lease-{golem_id}", daemon=True)
    beat.start()
    try:
        yield None
    finally:
        done.set()
        beat.join()
        try:
            leases.release(golem_id, claim.holder)
        except Exception:  # left to lapse on its own
            _log.debug("releasing the lease of %s failed", golem_id, exc_info=True)

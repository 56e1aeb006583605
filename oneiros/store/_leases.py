"""Leases beside the log: who runs a golem's dream phase right now, until when.

A lease is a hint for the reconciler, never a truth: the log says which phase a golem is in, the
lease only says that some process is working on it and renews its claim. One lease per golem,
naming the cycle, the phase (None: every phase of the cycle, as an in-process executor runs them)
and the holder (host, pid, RQ job). A holder that dies stops renewing; once ``expires_at`` has
passed, the phase counts as having no live process. Expiry is the holder's wall clock, so hosts
sharing a store must keep their clocks within a few seconds of each other (NTP). A lease also
names the holder's host and pid: on that host, a holder whose process is gone has no claim, even
before its lease lapses (hosts must not share a hostname across pid namespaces for this).

Where they live, as snapshots do: beside an SQLite file in ``<file>.leases/`` (one file per golem,
read and replaced under an ``flock`` on a lock file of its own), in an ``oneiros_leases`` table of
the same PostgreSQL schema (a row lock decides), and in memory for ``memory://`` stores (one
table per store backend, shared by every reader of it in the process). Reading never creates
anything: a store with no lease folder or table has no leases.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol
from urllib.parse import quote

import msgspec
from eventsourcing.persistence import PersistenceError

from oneiros.events._types import DreamPhaseName
from oneiros.store._backends import Backend, PostgresBackend
from oneiros.store._snapshots import beside_file, replace_file
from oneiros.store._store import EventStore
from oneiros.store._urls import parse_postgres_url

__all__ = ["Lease", "LeaseStore", "open_leases"]


class Lease(msgspec.Struct, frozen=True, kw_only=True):
    """``holder`` runs ``phase`` of ``cycle_id`` for ``golem_id`` (every phase when None) and
    renews this claim before ``expires_at`` (seconds since the epoch, on the holder's clock)."""

    golem_id: str
    cycle_id: str
    phase: DreamPhaseName | None
    holder: str
    """Who holds it, as a person reads it: ``host pid 123`` and the RQ job, if any."""
    expires_at: float
    host: str = ""
    pid: int = 0
    """The holding process, so a process on the same host can tell that it died before its
    lease lapsed (see :meth:`gone`)."""

    def live(self, now: float | None = None) -> bool:
        return self.expires_at > (time.time() if now is None else now)

    def gone(self) -> bool:
        """True if the holder ran on this host and its process no longer exists: its lease is
        moot before it lapses. (A process on another host can only wait for the lapse.)"""
        if not self.pid or self.host != socket.gethostname():
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False  # alive, someone else's
        return False

    def in_force(self) -> bool:
        """Live, and not held by a process this host knows to be gone."""
        return self.live() and not self.gone()

    def covers(self, cycle_id: str | None, phase: str | None) -> bool:
        """True if this lease is a claim on ``phase`` of ``cycle_id`` (a whole-cycle lease covers every phase)."""
        return self.cycle_id == cycle_id and (self.phase is None or self.phase == phase)

    def blocks(self, other: Lease, now: float | None = None) -> bool:
        """True if this lease, held by someone else, forbids ``other`` from being taken now."""
        if self.holder == other.holder or not self.live(now) or self.cycle_id != other.cycle_id or self.gone():
            return False
        return self.phase is None or other.phase is None or self.phase == other.phase


class LeaseStore(Protocol):
    def get(self, golem_id: str) -> Lease | None: ...

    def acquire(self, lease: Lease) -> Lease | None:
        """Write ``lease`` unless another holder's live lease blocks it; returns that one if so
        (then nothing is written), None when ``lease`` is now the golem's."""
        ...

    def release(self, golem_id: str, holder: str) -> None:
        """Drop the golem's lease if ``holder`` still holds it."""
        ...


def _decode(data: bytes | None) -> Lease | None:
    if not data:
        return None
    try:
        return msgspec.json.decode(data, type=Lease)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None  # a damaged lease is no claim: the log decides, the reconciler looks again


class MemoryLeases:
    def __init__(self) -> None:
        self._items: dict[str, Lease] = {}
        self._lock = threading.Lock()

    def get(self, golem_id: str) -> Lease | None:
        return self._items.get(golem_id)

    def acquire(self, lease: Lease) -> Lease | None:
        with self._lock:
            held = self._items.get(lease.golem_id)
            if held is not None and held.blocks(lease):
                return held
            self._items[lease.golem_id] = lease
            return None

    def release(self, golem_id: str, holder: str) -> None:
        with self._lock:
            held = self._items.get(golem_id)
            if held is not None and held.holder == holder:
                del self._items[golem_id]


class FileLeases:
    """One JSON file per golem in a directory, replaced atomically under a lock file's ``flock``."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, golem_id: str, suffix: str) -> Path:
        return self.directory / f"{quote(golem_id, safe='')}.{suffix}"

    def get(self, golem_id: str) -> Lease | None:
        try:
            return _decode(self._path(golem_id, "lease").read_bytes())
        except OSError:
            return None

    @contextlib.contextmanager
    def _locked(self, golem_id: str) -> Iterator[None]:
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self._path(golem_id, "lock"), "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield  # the lock goes with the file's close

    def acquire(self, lease: Lease) -> Lease | None:
        with self._locked(lease.golem_id):
            held = self.get(lease.golem_id)
            if held is not None and held.blocks(lease):
                return held
            replace_file(self._path(lease.golem_id, "lease"), msgspec.json.encode(lease))
            return None

    def release(self, golem_id: str, holder: str) -> None:
        if not self.directory.exists():
            return
        with self._locked(golem_id):
            held = self.get(golem_id)
            if held is not None and held.holder == holder:
                self._path(golem_id, "lease").unlink(missing_ok=True)


class PostgresLeases:
    """An ``oneiros_leases`` table in the store's own schema, made on the first acquire."""

    def __init__(self, backend: PostgresBackend) -> None:
        self._datastore = backend.datastore
        schema = parse_postgres_url(backend.url).schema
        self._table = f'"{schema}"."oneiros_leases"'
        self._ready = False

    def get(self, golem_id: str) -> Lease | None:
        try:
            with self._datastore.transaction(commit=False) as c:
                c.execute(f"SELECT body FROM {self._table} WHERE golem_id = %s", [golem_id])
                row = c.fetchone()
        except PersistenceError:
            return None  # no table yet: no leases
        return None if row is None else _decode(bytes(row["body"]))

    def acquire(self, lease: Lease) -> Lease | None:
        if not self._ready:
            with self._datastore.transaction(commit=True) as c:
                c.execute(f"CREATE TABLE IF NOT EXISTS {self._table} (golem_id text PRIMARY KEY, body bytea NOT NULL)")
            self._ready = True
        body = msgspec.json.encode(lease)
        with self._datastore.transaction(commit=True) as c:
            # The row lock (or the insert's unique key) orders two acquirers of one golem.
            c.execute(
                f"INSERT INTO {self._table} (golem_id, body) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                [lease.golem_id, body],
            )
            if c.rowcount == 1:
                return None
            c.execute(f"SELECT body FROM {self._table} WHERE golem_id = %s FOR UPDATE", [lease.golem_id])
            row = c.fetchone()
            held = None if row is None else _decode(bytes(row["body"]))
            if held is not None and held.blocks(lease):
                return held
            c.execute(f"UPDATE {self._table} SET body = %s WHERE golem_id = %s", [body, lease.golem_id])
        return None

    def release(self, golem_id: str, holder: str) -> None:
        held = self.get(golem_id)
        if held is None or held.holder != holder:
            return
        with self._datastore.transaction(commit=True) as c:
            c.execute(
                f"DELETE FROM {self._table} WHERE golem_id = %s AND body = %s", [golem_id, msgspec.json.encode(held)]
            )


# memory:// leases live as long as the backend they belong to, shared by every store wrapping it.
_memory: weakref.WeakKeyDictionary[Backend, MemoryLeases] = weakref.WeakKeyDictionary()
_memory_lock = threading.Lock()


def open_leases(store: EventStore) -> LeaseStore:
    """Where ``store``'s leases live (see the module docstring)."""
    backend = store.backend
    folder = beside_file(store, "leases")
    if folder is not None:
        return FileLeases(folder)
    if isinstance(backend, PostgresBackend):
        return PostgresLeases(backend)
    with _memory_lock:
        leases = _memory.get(backend)
        if leases is None:
            leases = _memory[backend] = MemoryLeases()
        return leases

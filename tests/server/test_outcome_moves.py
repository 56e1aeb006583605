"""What ``POST /golems/{id}/outcomes`` answers it moved, on the application as the server holds it
(its projections kept up by a follower thread, which the answer waits for)."""

from __future__ import annotations

import threading
from pathlib import Path

from oneiros import Golems, InProcessExecutor, load_episodes, open_store
from oneiros.app import Oneiros
from oneiros.config._load import load_config
from oneiros.episodes._episodes import sample_episodes_path
from oneiros.validation._review import OutcomeInput


def test_an_outcome_answers_only_the_dreams_it_moved(tmp_path: Path) -> None:
    """Two cycles the staging process has not staged yet, then an outcome that matches no dream:
    settling stages and displaces entries after the outcome's position, yet the answer lists no
    dream (it listed every dream staged or displaced then as moved by the outcome)."""
    store = open_store(f"sqlite:///{tmp_path}/events.db", create=True)
    app = None
    stop = threading.Event()
    follower: threading.Thread | None = None
    try:
        golems = Golems(store)
        golems.create("g1")
        golems.record_episodes("g1", load_episodes(sample_episodes_path()))
        executor = InProcessExecutor(golems)
        assert all(executor.run_cycle("g1").complete for _ in range(2))
        app = Oneiros(store, load_config(None), deps=golems.deps, catch_up=False)
        follower = threading.Thread(target=app.follow, args=(stop,))
        follower.start()
        moved = app.record_outcome("g1", OutcomeInput(tick=1000, verdict="confirms", tags=("nothing",)))
        assert [] == moved.entries
    finally:
        stop.set()
        if follower is not None:
            follower.join()
        if app is not None:
            app.close()
        store.close()

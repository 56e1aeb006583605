"""The public surface is deliberate: these names are what users may import."""

from __future__ import annotations

import importlib
import re

import pytest

PUBLIC = {
    "oneiros": [
        "ConfigError", "CorruptEvent", "CycleResult", "CycleSettings", "Deps", "EntryNotFound", "Episode",
        "EpisodeFileError", "EventError", "EventStore", "FixedClock", "GolemError", "GolemExists",
        "GolemNotFound", "GolemState", "Golems", "IllegalCommand", "IllegalReview", "InProcessExecutor",
        "InputError", "InvalidEvent", "InvalidSetting", "InvalidStoreURL", "Observers", "OfflineGenerator",
        "OneirosError",
        "Outcome", "ProjectionConflict", "ProjectionError", "Recorded", "SequentialIds", "StagingError",
        "StoreError", "StreamConflict", "UnknownEventType", "UnknownPreset", "UnknownProjection",
        "load_episodes", "open_store", "replay",
    ],
    "oneiros.settings": [
        # issue 17: Bardo's event contract (trigger and phase names) beside oneiros's own
        "BARDO_PHASES", "BardoPhase", "BardoTrigger", "BardoTriggerSettings", "DreamTrigger",
        "DisplaceBy", "StagedKind", "StagingSettings", "MicroConsolidationSettings", "WakeUpSettings",
        "BEHAVIORAL_PHASES", "BehavioralPhase", "CycleBudget", "CycleSettings", "DEFAULT_PRICES",
        "DEFAULT_PROMPTS", "DEFAULT_SPANS_PATH", "DEFAULT_SYSTEM", "DREAM_PHASES", "DaemonSettings",
        "DailySettings", "DreamPhaseName", "EngineSettings", "FatigueSettings", "GeneratorKind",
        "GeneratorSettings", "IntegrationSettings", "IntensitySettings", "IntervalSettings", "LogSettings",
        "Mode", "ModelPrice", "NremSettings", "OnsetSettings", "OpenAISettings",
        "PHASE_SHARES", "PLACEHOLDERS", "PairSettings", "PhaseValues", "PreconditionSettings", "PromptSet",
        "RemSettings", "RqSettings", "ScheduleMode", "ScheduleSettings", "SleepWindow", "SnapshotSettings", "Task",
        "Tier",
        "TracingSettings", "UrgencySettings", "UrgencyWeights", "VoluntarySleepSettings",
        "WakeInterruptSettings",
    ],
    "oneiros.events": [
        "BARDO_PHASES", "BardoPhase", "BardoTrigger",
        "EpisodePrioritized", "InsightStrengthened", "MicroConsolidated",
        "ActivityKind", "ActivityRecorded", "BEHAVIORAL_PHASES", "BehavioralPhase", "BehavioralPhaseChanged",
        "BudgetExhausted", "BudgetOverrun", "BudgetReserved", "ConfidenceChanged", "CreativeMode", "CreditAssigned",
        "CycleEvent", "DEFAULT_STORE_URL", "DREAM_PHASES", "DreamComplete", "DreamCounterfactual",
        "DreamDecided", "DreamDirected", "DreamFragments", "DreamHypothesis", "DreamInsight",
        "DreamInterrupted", "DreamJournal", "DreamJournalEntry", "DreamOutput", "DreamPhase", "DreamPhaseName",
        "DreamQualityAssessed", "DreamReport", "DreamStaged", "DreamStart", "DreamSuppressed", "DreamTrigger",
        "EntryDisplaced", "EntryExpired", "EntryPromoted", "EntryRefuted", "EntryReviewed", "EntryStaged",
        "Episode", "EpisodeDepotentiated", "EpisodeRecorded", "EpisodeTriaged", "Event", "EventMeta",
        "EventStore", "FEEDBACK_STREAM", "FatigueWarned", "GenerationFailed", "GenerationRecorded",
        "GolemCreated", "HypnagogicPrediction", "IntegrationSummary", "InterruptSource", "Lineage",
        "MemoryRolledBack", "MessageHeld", "MessagesReleased", "Mode", "ModeChanged", "NremSummary", "Outcome",
        "OutcomeRecorded", "Recorded", "RemSummary", "ReplayBatch", "ReplayStrengthened", "ReviewDecided",
        "ReviewDecision", "STAGED_KINDS", "STAGING_STREAM", "SleepRequested", "Snapshot", "SnapshotStore",
        "StagedKind", "StagingStatus",
        "StepFailed", "StrategyHypothesis", "ThreatSimulated", "TriageCounts", "TriageDecision",
        "Checkpoint", "decode_event", "decode_records", "encode_event", "encode_records", "event_subtypes",
        "event_type", "export_history", "golem_of_stream", "import_history", "LogSubscription",
        "open_snapshots", "open_store", "parse_postgres_url", "PostgresURL", "read_from_snapshot",
        "read_stream_paged", "register_upcaster", "registered_events", "seal", "side_stream", "StreamAppend",
        "topics_for", "unseal", "ValidationCriterion", "Verdict", "WakeUpSummary", "WakingResidue",
    ],
    "oneiros.fsm": [
        "CycleCounts", "GolemState", "Golems", "MACHINE_STATES", "Observers", "TRIGGERS", "Transition",
        "destination", "fold", "follow_log", "next_phase", "phase_state", "replay", "transition_path",
    ],
    "oneiros.episodes": [
        "Embedder", "EpisodeColumns", "EpisodeMemory", "HashingEmbedder", "SECONDS_PER_TICK",
        "SentenceTransformerEmbedder", "Vectors", "columns_of", "embedding_matrix", "episode_micros",
        "episode_seconds", "episode_text", "episode_time", "episodes_from_dicts",
        "load_episodes", "make_embedder", "recorded_episodes", "sample_episodes_path",
    ],
    "oneiros.generators": [
        "CounterfactualResult", "DepotentiationResult", "DreamResult", "Generation", "GenerationRequest",
        "Generator", "HypothesisResult", "InsightResult", "NoveltyResult", "OfflineGenerator", "OpenAIConfig",
        "OpenAIGenerator", "PatternResult", "RequestShape", "Task", "ThreatResult", "Tier", "keywords",
        "make_generator", "model_of", "parse_dream", "parse_json", "parse_partial", "request_hash", "request_shape",
        # issue 17: the episode-line prompt format, written and read back in one place
        "EpisodeLine", "episode_line", "episode_lines", "read_episode_lines",
    ],
    "oneiros.engines": [
        "OBSERVATION_PRIORITY", "Priority", "openseed_wake_up",
        "ENGINES", "MODES", "PairDraw", "PhaseContext", "PhaseEngine", "ReplayPick", "batches", "classify",
        "dream_report", "gain", "hypnopompic_return", "integration", "need", "nrem", "onset", "polarity", "rem",
        "select_distant_pairs", "select_replay", "triage", "utility", "wake_up_text", "waking_residue",
    ],
    "oneiros.scheduling": [
        "Check", "Decision", "Intensity", "ScheduleState", "Signals", "clock_urgency", "dream_intensity",
        "dream_urgency", "fold_schedule", "should_dream", "urgency_terms",
    ],
    # read models only; what appends events is oneiros.validation
    "oneiros.projections": [
        "ACTIVE", "STAGING_EVENTS", "Belief", "JournalEntry", "JournalProjection", "JournalSettings", "LogConsumer",
        "MemoryVersion", "Observation", "Projection", "ProjectionDB", "ProjectionRunner",
        "ProjectionSettings", "Projections", "Rows", "RunnerSettings", "SinkSettings", "StagedEntry",
        "StagingProjection", "VerifyResult", "apply_staging_event", "default_projection_url",
        "follow_log", "journal_markdown", "make_projections", "memory_diff", "memory_version", "open_projection_db",
        "wait_for", "write_memory_file",
    ],
    "oneiros.validation": [
        "REVIEW_MOVES", "Feedback", "OutcomeInput", "StagedOutput", "StagingProcess", "StagingSettings",
        "episode_removals", "follow", "matches", "register_episode_removal", "register_staged_output",
        "review_status", "staged_outputs", "update",
    ],
    "oneiros.workers": [
        "BudgetGuard", "configure_logging", "configure_tracing", "cycle_result", "CycleDiff", "CycleResult",
        "CycleSummary", "CycleTimeout", "DelayedGenerator", "diff_cycles", "Divergence", "Executor",
        "flush_spans", "fork_cycle", "GolemLog", "GolemLogs", "InProcessExecutor", "JsonFormatter",
        "JsonSerializer", "Ledger", "load_generator", "make_worker", "MeteredGenerator", "phase_budget",
        "phase_job", "phase_job_id", "phase_money", "PhaseOutcome", "PhaseReport", "PhaseWorker", "read_spans",
        "RecordedGenerator", "Refusal", "rerun_cycle", "RerunReport", "RqExecutor", "run_phase",
        "set_worker_config", "SimplePhaseWorker", "SpanFileExporter", "SpanRecord", "Spend", "summarize_cycle",
        "sweep_failed_phases", "WorkerConfig", "WorkerError", "worst_case_tokens",
    ],
    "oneiros.config": [
        "DEFAULT_CONFIG_PATH", "DEFAULT_STORE_URL", "ENV_PREFIX", "Flags", "OneirosConfig", "PRESETS", "env_var",
        "explain_config", "load_config", "preset_layer",
    ],
    "oneiros.daemon": [
        "Daemon", "Delivery", "Message", "SESSION_PREFIX", "interactive_history", "session_key",
    ],
}  # fmt: skip


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_public_names_are_pinned(module: str) -> None:
    """A name added to or dropped from a public ``__all__`` must be a deliberate change here too."""
    assert sorted(PUBLIC[module]) == sorted(importlib.import_module(module).__all__)


@pytest.mark.parametrize(
    "module",
    sorted(PUBLIC),
)
def test_every_exported_name_exists(module: str) -> None:
    """Everything in ``__all__`` imports."""
    mod = importlib.import_module(module)
    for name in mod.__all__:
        assert hasattr(mod, name), name


def test_every_error_derives_from_the_root() -> None:
    """Every exception class oneiros exports is an OneirosError."""
    import oneiros

    errors = [
        getattr(oneiros, n)
        for n in oneiros.__all__
        if n.endswith(("Error", "Conflict", "Exists", "NotFound", "Command", "URL", "Event", "Type"))
    ]
    errors = [e for e in errors if isinstance(e, type) and issubclass(e, Exception)]
    assert len(errors) >= 14
    assert all(issubclass(e, oneiros.OneirosError) for e in errors)


def test_the_documented_error_tree_names_every_error() -> None:
    """docs/errors.md and the tree in oneiros/_errors.py list every OneirosError subclass there is."""
    from pathlib import Path

    import oneiros
    from oneiros import _errors

    def subclasses(cls: type) -> set[type]:
        found = set(cls.__subclasses__())
        for sub in list(found):
            found |= subclasses(sub)
        return found

    names = {cls.__name__ for cls in subclasses(oneiros.OneirosError)}
    docs = (Path(__file__).parent.parent / "docs" / "errors.md").read_text()
    tree = _errors.__doc__ or ""
    assert set() == {n for n in names if not re.search(rf"── {n}\b", docs)}
    assert set() == {n for n in names if not re.search(rf"── {n}\b", tree)}

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
        # issue 13: the server
        "AccessError", "CycleNotFound", "Forbidden", "Unauthenticated",
    ],
    "oneiros.settings": [
        # issue 17: Bardo's event contract (trigger and phase names) beside oneiros's own
        "BARDO_PHASES", "BardoPhase", "BardoTrigger", "BardoTriggerSettings", "DreamTrigger",
        "DisplaceBy", "StagedKind", "StagingSettings", "MicroConsolidationSettings", "WakeUpSettings",
        "BEHAVIORAL_PHASES", "BehavioralPhase", "CycleBudget", "CycleSettings", "DEFAULT_PRICES",
        "DEFAULT_PROMPTS", "DEFAULT_SPANS_PATH", "DEFAULT_SYSTEM", "DREAM_PHASES", "DaemonSettings",
        "DailySettings", "DreamPhaseName", "EngineSettings", "FatigueSettings", "IntegrationSettings",
        "IntensitySettings", "IntervalSettings", "Mode", "ModelPrice", "NremSettings", "OnsetSettings",
        "PHASE_SHARES", "PLACEHOLDERS", "PairSettings", "PhaseValues", "PreconditionSettings", "PromptSet",
        "RemSettings", "RqSettings", "ScheduleMode", "ScheduleSettings", "SleepWindow", "SnapshotSettings", "Task",
        "Tier",
        "TracingSettings", "UrgencySettings", "UrgencyWeights", "VoluntarySleepSettings",
        "WakeInterruptSettings", "ServerSettings",
    ],
    "oneiros.events": [
        "BARDO_PHASES", "BardoPhase", "BardoTrigger",
        "EpisodePrioritized", "InsightStrengthened", "MicroConsolidated",
        "ActivityKind", "ActivityRecorded", "BEHAVIORAL_PHASES", "BehavioralPhase", "BehavioralPhaseChanged",
        "BudgetExhausted", "BudgetReserved", "ConfidenceChanged", "CreativeMode", "CreditAssigned",
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
        "ValidationCriterion", "Verdict", "WakeUpSummary", "WakingResidue", "decode_event", "decode_records",
        "encode_event", "encode_records",
        "event_subtypes", "event_type", "export_history", "golem_of_stream", "import_history", "open_snapshots",
        "open_store", "read_from_snapshot", "read_stream_paged", "register_upcaster", "registered_events", "seal",
        "side_stream", "topics_for", "unseal",
        "MemoryRecalled", "RECALL_STREAM", "RecallHit", "RecallKind", "record_row",
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
        "OpenAIGenerator", "PatternResult", "Task", "ThreatResult", "Tier", "keywords", "model_of",
        "parse_dream", "parse_json", "parse_partial",
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
    "oneiros.projections": [
        "ACTIVE", "Belief", "Feedback", "JournalEntry", "JournalProjection", "JournalSettings", "LogWaiter",
        "MemoryVersion", "Observation", "OutcomeInput", "Projection", "ProjectionDB", "ProjectionRunner",
        "ProjectionSettings", "Projections", "REVIEW_MOVES", "Rows", "RunnerSettings", "SinkSettings",
        "StagedEntry", "StagedOutput", "StagingProcess", "StagingProjection", "StagingSettings", "VerifyResult",
        "default_projection_url", "journal_markdown", "make_projections", "matches", "memory_diff",
        "memory_version", "open_projection_db", "register_episode_removal", "register_staged_output",
        "review_status", "write_memory_file",
        "GolemIndex", "GolemsProjection", "NoiseFragment", "PENDING", "entry_golem", "golem_dreams", "golem_runs",
        "journal_entry", "journal_entries", "pending_count", "staged_entry", "staged_entries", "RecallIndex",
        "RecallItem", "RecallResult", "RecallSettings",
        "beliefs", "dream_reports", "memory_versions", "noise_fragments", "observations", "recall",
        "record_recall",
    ],
    "oneiros.workers": [
        "BudgetGuard", "CycleResult", "CycleTimeout", "DelayedGenerator", "Executor", "GolemLog", "GolemLogs",
        "InProcessExecutor",
        "JsonSerializer", "Ledger", "MeteredGenerator", "PhaseOutcome", "PhaseWorker", "Refusal", "RqExecutor",
        "SimplePhaseWorker", "SpanFileExporter", "SpanRecord", "Spend", "WorkerConfig", "WorkerError",
        "configure_tracing", "cycle_result", "flush_spans", "load_generator", "make_worker", "phase_budget",
        "phase_job", "phase_job_id", "phase_money", "read_spans", "run_phase", "set_worker_config",
        "sweep_failed_phases", "worst_case_tokens", "budget_report", "cycle_spans",
    ],
    "oneiros.config": [
        "DEFAULT_CONFIG_PATH", "ENV_PREFIX", "OneirosConfig", "PRESETS", "env_var", "load_config",
        "preset_layer",
    ],
    "oneiros.daemon": [
        "Daemon", "Delivery", "Message", "SESSION_PREFIX", "interactive_history", "session_key",
    ],
    "oneiros.server": [
        "ActivityIn", "BARDO_EVENTS", "CycleIn", "EpisodesIn", "ErrorBody", "ErrorDetail", "FeedbackIn",
        "GolemIn", "HYPOTHESES", "LOCAL", "Principal", "RAW_EVENT", "RecallIn", "SCOPES", "Scope", "Service",
        "TokenRecord", "Tokens", "add_token", "build_mcp", "check_exposure", "create_app", "hash_token",
        "is_loopback", "load_tokens", "warm_decoders",
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

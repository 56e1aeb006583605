"""The public surface is deliberate: these names are what users may import."""

from __future__ import annotations

import importlib
import re

import pytest

PUBLIC = {
    "oneiros": [
        "AccessError", "ConfigError", "CorruptEvent", "CycleNotFound", "CycleResult", "CycleSettings", "Deps",
        "EntryNotFound", "Episode", "EpisodeFileError", "EventError", "EventStore", "FixedClock", "Forbidden",
        "GolemError", "GolemExists", "GolemNotFound", "GolemState", "Golems", "IllegalCommand", "IllegalReview",
        "InProcessExecutor", "InputError", "InvalidEvent", "InvalidSetting", "InvalidStoreURL", "Observers",
        "OfflineGenerator", "Oneiros", "OneirosError", "Outcome", "ProjectionConflict", "ProjectionError", "Recorded",
        "SequentialIds", "StagingError", "StoreError", "StreamConflict", "Unauthenticated", "UnknownEventType",
        "UnknownPreset", "UnknownProjection", "load_episodes", "open_store", "replay",
    ],
    "oneiros.settings": [
        "HealthSettings",
        "BEHAVIORAL_PHASES", "BardoPhase", "BardoTrigger", "BardoTriggerSettings",
        "BehavioralPhase", "CycleBudget", "CycleSettings", "DEFAULT_PRICES", "DEFAULT_PROMPTS",
        "DEFAULT_SPANS_PATH", "DEFAULT_SYSTEM", "DaemonSettings", "DailySettings", "DisplaceBy",
        "DreamPhaseName", "DreamTrigger", "EngineSettings", "FatigueSettings", "GeneratorKind",
        "GeneratorSettings", "IntegrationSettings", "IntensitySettings", "IntervalSettings", "LogSettings",
        "MicroConsolidationSettings", "Mode", "ModelPrice", "NremSettings", "OnsetSettings", "OpenAISettings",
        "PHASES", "PLACEHOLDERS", "PairSettings", "PhaseSpec", "PhaseTable", "PhaseValues", "PreconditionSettings",
        "PromptSet",
        "RaceSettings", "RecoverySettings", "RemSettings", "RqSettings", "ScheduleMode", "ScheduleSettings",
        "ServerSettings",
        "SleepWindow", "SnapshotSettings", "StagedKind", "StagingSettings", "Task", "Tier", "TracingSettings",
        "UrgencySettings", "UrgencyWeights", "VoluntarySleepSettings", "WakeInterruptSettings", "WakeUpSettings",
        "EPISODE_SOURCES", "TRUST_LEVELS", "EpisodeSource", "PromotionPolicy", "RecallPromotionSettings",
        "RecallWeights", "TrustLevel", "TrustSettings",
    ],
    "oneiros.events": [
        "ALARM_KINDS", "AlarmKind", "HEALTH_STREAM", "HealthAlarmCleared", "HealthAlarmRaised", "OutputSource",
        "OutputsSourced", "output_digest", "MAX_FIGURE", "MAX_TICK", "episode_out_of_bounds",
        "ActivityKind", "ActivityRecorded", "BEHAVIORAL_PHASES", "BardoPhase", "BardoTrigger",
        "BehavioralPhase", "BehavioralPhaseChanged", "BudgetExhausted", "BudgetOverrun", "BudgetReserved",
        "Checkpoint", "ConfidenceChanged", "CreativeMode", "CreditAssigned", "CycleEvent", "DEFAULT_STORE_URL",
        "DreamComplete", "DreamCounterfactual", "DreamDecided", "DreamDirected", "DreamEmpty",
        "DreamFragments", "DreamHypothesis", "DreamInsight", "DreamInterrupted", "DreamJournal",
        "DreamJournalEntry", "DreamOutput", "DreamPhase", "DreamPhaseName", "DreamQualityAssessed",
        "DreamReport", "DreamStaged", "DreamStart", "DreamSuppressed", "DreamTrigger", "EntryDisplaced",
        "EmptyReason", "EntryExpired", "EntryPromoted", "EntryRefuted", "EntryReviewed", "EntryStaged", "Episode",
        "EpisodeDepotentiated", "EpisodePrioritized", "EpisodeRecorded", "EpisodeTriaged", "Event", "EventMeta",
        "EventStore", "FEEDBACK_STREAM", "FatigueWarned", "GenerationFailed", "GenerationRecorded",
        "GolemCreated", "HypnagogicPrediction", "InsightStrengthened", "IntegrationSummary", "InterruptSource",
        "Lease", "LeaseStore", "Lineage", "LogSubscription", "MemoryRecalled", "MemoryRolledBack", "MessageHeld",
        "MessagesReleased", "MicroConsolidated", "Mode", "ModeChanged", "NremSummary", "Outcome",
        "OutcomeRecorded", "PhaseResumed", "PostgresURL",
        "RECALL_STREAM", "RecallHit", "RecallKind", "Recorded", "RemSummary", "ReplayBatch",
        "ReplayStrengthened", "ReviewDecided", "ReviewDecision", "Row", "STAGED_KINDS", "STAGING_STREAM",
        "SleepRequested", "Snapshot", "SnapshotStore", "StagedKind", "StagingStatus", "StepFailed",
        "StrategyHypothesis", "StreamAppend", "Tally", "ThreatSimulated", "TriageCounts", "TriageDecision",
        "ValidationCriterion", "Verdict", "WakeUpSummary", "WakingResidue", "decode_event", "decode_records",
        "decode_rows", "encode_event", "encode_records", "event_subtypes", "event_type", "export_history",
        "golem_of_stream", "import_history", "open_leases", "open_snapshots", "open_store", "parse_postgres_url",
        "read_cycle", "read_from_snapshot", "read_stream_pages", "read_stream_paged", "record_row", "register_upcaster",
        "registered_events", "seal", "seal_parts", "Sealed", "side_stream", "topics_for", "unseal",
        "EntryQuarantined", "EpisodeTrust",
    ],
    "oneiros.fsm": [
        "CycleCounts", "GolemState", "Golems", "MACHINE_STATES", "Observers", "TRIGGERS", "Transition",
        "destination", "fold", "follow_log", "is_host_fact", "next_phase", "phase_state", "replay", "retry_race",
        "transition_path",
    ],
    "oneiros.episodes": [
        "Embedder", "EpisodeColumns", "EpisodeMemory", "EpisodeMemoryState", "HashingEmbedder", "SECONDS_PER_TICK",
        "SentenceTransformerEmbedder", "StoredEpisodes", "Vectors", "columns_of", "count_episodes", "embedding_matrix",
        "episode_batches", "episode_micros", "episode_seconds", "episode_text", "episode_time",
        "episodes_from_dicts", "load_episodes",
        "make_embedder", "recorded_episodes", "sample_episodes_path",
    ],
    "oneiros.generators": [
        "CounterfactualResult", "DepotentiationResult", "DreamResult", "EpisodeLine", "Generation",
        "GenerationRequest", "Generator", "HypothesisResult", "InsightResult", "NoveltyResult",
        "OfflineGenerator", "OpenAIConfig", "OpenAIGenerator", "PatternResult", "RequestShape", "Task",
        "ThreatResult", "Tier", "check_api_key", "episode_line", "episode_lines", "keywords", "make_generator",
        "model_of",
        "parse_dream", "parse_json", "parse_partial", "read_episode_lines", "request_hash", "request_shape",
    ],
    "oneiros.phases": [
        "ENGINES", "MODES", "OBSERVATION_PRIORITY", "PairDraw", "PhaseContext", "PhaseEngine", "Priority",
        "ReplayPick", "batches", "classify", "dream_report", "gain", "hypnopompic_return", "integration",
        "need", "nrem", "onset", "openseed_wake_up", "polarity", "rem", "select_distant_pairs", "select_replay",
        "triage", "utility", "wake_up_text", "waking_residue",
    ],
    "oneiros.scheduling": [
        "Check", "Decision", "Intensity", "ScheduleState", "Signals", "clock_urgency", "dream_intensity",
        "dream_urgency", "fold_schedule", "should_dream", "urgency_terms",
    ],
    "oneiros.projections": [
        "ConfidenceMove", "EntryLineage", "GenerationLink", "PromptTemplate", "entry_lineage", "find_entry",
        "ACTIVE", "BatchingProjection", "Belief", "GolemIndex", "GolemsProjection", "JournalEntry", "JournalProjection",
        "JournalSettings", "LogConsumer", "MemoryVersion", "NoiseFragment", "Observation", "PENDING",
        "Projection", "ProjectionDB", "ProjectionRunner", "ProjectionSettings", "Projections", "RecallIndex",
        "RecallItem", "RecallResult", "RecallSettings", "Rows", "RunnerSettings", "STAGING_EVENTS",
        "ScheduleProjection", "SinkSettings", "StagedEntry", "StagingProjection", "TallyingProjection", "VerifyResult",
        "apply_staging_event", "beliefs",
        "default_projection_url", "dream_reports", "entry_golem", "follow_log", "golem_dreams", "golem_runs",
        "journal_entries", "journal_entry", "journal_markdown", "make_projections", "memory_diff",
        "memory_version", "memory_versions", "noise_fragments", "observations", "open_projection_db",
        "pending_count", "recall", "staged_entries", "staged_entry", "wait_for", "write_memory_file",
    ],
    "oneiros.workers": [
        "BudgetGuard", "CycleDiff", "CycleResult", "CycleSummary", "CycleTimeout", "DelayedGenerator",
        "Divergence", "Executor", "GolemLog", "GolemLogs", "InProcessExecutor", "JsonFormatter",
        "JobLook", "JsonSerializer", "Ledger", "MeteredGenerator", "PhaseJobs", "PhaseOutcome", "PhaseReport",
        "PhaseWorker", "Reconciler", "RecordedGenerator", "Refusal", "RerunReport", "Resolution", "RqExecutor",
        "RqPhaseJobs", "SimplePhaseWorker", "SpanFileExporter", "SpanRecord", "Spend", "WorkerConfig",
        "WorkerError", "budget_report", "check_worker_store", "configure_logging",
        "configure_tracing", "cycle_result", "cycle_spans", "diff_cycles", "flush_spans", "fork_cycle",
        "load_generator", "make_worker", "phase_budget", "phase_job", "phase_job_id", "phase_money",
        "read_spans", "reconciling", "rerun_cycle", "run_phase", "set_worker_config", "summarize_cycle",
        "waiting_golems", "worst_case_tokens",
    ],
    "oneiros.config": [
        "DEFAULT_CONFIG_PATH", "DEFAULT_STORE_URL", "ENV_PREFIX", "Flags", "OneirosConfig", "PRESETS",
        "env_var", "explain_config", "load_config", "preset_layer",
    ],
    "oneiros.daemon": [
        "Daemon", "Delivery", "LogFollower", "Message", "SESSION_PREFIX", "interactive_history", "session_key",
        "ABReport", "Arm", "ArmReport", "TimelineStep", "load_timeline", "run_ab", "run_arm",
    ],
    "oneiros.app": [
        "CycleOptions", "CycleRun", "DreamingStatus", "Entry", "Golem", "Oneiros", "OutcomeMoved", "Page", "Report",
    ],
    "oneiros.server": [
        "ActivityIn", "BARDO_EVENTS", "CycleIn", "EpisodesIn", "ErrorBody", "ErrorDetail", "FeedbackIn",
        "GolemIn", "HYPOTHESES", "LOCAL", "Principal", "RAW_EVENT", "RecallIn", "SCOPES", "Scope", "Service",
        "TokenRecord", "Tokens", "add_token", "build_mcp", "check_exposure", "create_app", "hash_token",
        "is_loopback", "load_tokens", "warm_decoders",
    ],
    "oneiros.validation": [
        "GolemHealth", "HealthProcess", "HealthReport", "health_metrics", "health_report",
        "Feedback", "OutcomeInput", "REVIEW_MOVES", "StagedOutput", "StagingProcess", "StagingSettings",
        "follow", "matches", "record_recall", "removed_ticks",
        "review_status", "staged_output", "update", "RecallScore", "RecallStats",
        "instruction_flags", "quarantine_for", "recall_score",
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

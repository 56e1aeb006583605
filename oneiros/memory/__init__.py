"""Episodic memory: episodes from files and from the log."""

from oneiros.memory._episodes import load_episodes, recorded_episodes, sample_episodes_path

__all__ = ["load_episodes", "recorded_episodes", "sample_episodes_path"]

"""Episodic memory: episodes from files, from Python and from the log; the memory read model;
embeddings (a built-in offline vectorizer, sentence-transformers as an extra).

No name here is public: the modules are private and import each other directly.
What a user needs is :func:`oneiros.load_episodes`, :func:`oneiros.sample_episodes_path` and
:class:`oneiros.Episode`.
"""

__all__: list[str] = []

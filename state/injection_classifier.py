"""The model halves of the injection classifier, for ``kernel.injection``.

:func:`embed` turns windows of text into unit sentence embeddings with the shipped MiniLM model
(``state.embeddings``, loaded once per process and shared with the memory index). The scoring
(windows, the MLP, how a probability becomes a flag) is pure and lives in
``kernel.injection_model``. :func:`ngrams` is the character n-gram regression
(``state.injection_ngrams``), which reads the scripts MiniLM does not. Callers pass both to
``kernel.injection.process`` or ``detect`` as ``embed=`` and ``ngrams=``.

If the model cannot be loaded (package missing, corrupt file), :func:`embed` raises
:class:`ClassifierUnavailable` once per call; ``kernel.injection`` then falls back to its rules
and records the flag ``classifier_unavailable`` rather than letting the text through unscored
(guards fail closed: such text is at least sanitised, see ``kernel.injection.detect``).
"""

from __future__ import annotations

from collections.abc import Sequence

from state.embeddings import MiniLMEmbedder
from state.injection_ngrams import probability as ngrams

__all__ = ["ClassifierUnavailable", "embed", "ngrams"]


class ClassifierUnavailable(RuntimeError):
    """The embedding model could not be loaded."""


def embed(texts: Sequence[str]) -> list[list[float]]:
    """Return one 384-float unit vector per text (empty input, empty output)."""
    if not texts:
        return []
    try:
        model = MiniLMEmbedder.shared()
    except Exception as exc:  # import, file or ONNX errors: reported, never a traceback
        raise ClassifierUnavailable(f"injection classifier unavailable: {exc}") from exc
    return [[float(v) for v in row] for row in model.embed(list(texts))]

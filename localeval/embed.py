"""Embedding models: texts in, one float32 row per text out."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from localeval.model_folders import check_model_folder, model_fingerprint, set_offline

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
    """A sentence-transformers model loaded from a local folder.

    Texts are encoded one at a time by default (``batch_size=1``): in a batch they are padded to the
    longest, and the padded shapes change a vector's last bits, so a score would depend on which other
    texts shared its batch. For a small embedder such as MiniLM, one text at a time takes little longer than
    batches do.
    """

    def __init__(self, model_dir: Path | str, device: str = "cpu", batch_size: int = 1) -> None:
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
    """A deterministic fake for tests: a normalised bag of hashed lower-case words, or fixed vectors.

    The same text gives the same vector in every process, and texts that share a word have a positive
    cosine (all entries are non-negative); a text without words embeds to zeros. ``fixed`` maps texts to
    exact vectors of length ``dim`` (then rows are float64, so the fixed values stay exact). ``calls``
    holds the texts of each call, in order.
    """

    def __init__(self, dim: int = 64, fixed: Mapping[str, Sequence[float]] | None = None) -> None:
        self.dim = dim
        self.fixed = {text: np.asarray(vector, dtype=np.float64) for text, vector in (fixed or {}).items()}
        wrong = sorted(text for text, vector in self.fixed.items() if vector.shape != (dim,))
        if wrong:
            raise ValueError(f"fixed vectors must have {dim} values; these do not: {wrong}")
        self.calls: list[list[str]] = []

    @property
    def fingerprint(self) -> str:
        if not self.fixed:
            return f"hash:{self.dim}"
        table = hashlib.blake2b(digest_size=8)
        for text in sorted(self.fixed):
            table.update(text.encode() + b"\0" + self.fixed[text].tobytes())
        return f"hash:{self.dim}:fixed:{table.hexdigest()}"

    def _bucket(self, word: str) -> int:
        return int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little") % self.dim

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float64 if self.fixed else np.float32)
        for row, text in enumerate(texts):
            if text in self.fixed:
                out[row] = self.fixed[text]
                continue
            for word in _WORD.findall(text.lower()):
                out[row, self._bucket(word)] += 1.0
            norm = np.linalg.norm(out[row])
            if norm > 0:
                out[row] /= norm
        return out

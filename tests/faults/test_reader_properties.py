"""Every reader, fed what hypothesis makes up (JSON lines, CSV, Parquet, conversations, criteria TOML, label
files, and bytes of no format): a correct load, or a LocalevalError (a DataError lists its problems by row), never
another exception, and never a run folder from a run whose data could not be read."""

from __future__ import annotations

import csv
import io
import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from localeval.errors import LocalevalError

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FIELDS = ["id", "user_input", "response", "reference", "retrieved_contexts", "reference_contexts", "question",
          "answer", "contexts", "ground_truth", "reference_tool_calls", "rubrics", "answerable", "sample_id"]

scalars = st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=False) | st.text(max_size=30)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=10), inner, max_size=4), max_leaves=12)
records = st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=8), values, max_size=6)
# a message as Ragas writes one, OpenAI's shape, or anything at all
messages = st.fixed_dictionaries(
    {"type": st.sampled_from(["human", "ai", "tool", "user", "assistant", "system"]) | values},
    optional={"content": values, "tool_calls": st.lists(
        st.fixed_dictionaries({"name": values}, optional={"args": values}), max_size=2) | values,
        "role": values})
conversations = st.fixed_dictionaries({"user_input": st.lists(messages | values, max_size=5)},
                                      optional={"id": values, "reference": values, "reference_tool_calls": values})


@contextmanager
def file(name: str, content: str | bytes) -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8", "surrogatepass"))
        yield path


def loads_or_says_why(path: Path, count: int | None = None) -> None:
    """``load_samples`` gives one sample per record, or a LocalevalError; nothing else."""
    from localeval.data import load_samples

    try:
        samples = load_samples(path)
    except LocalevalError as error:
        assert str(error).strip(), "an error that says nothing"
        return
    assert count is None or len(samples) == count


@FAST
@given(st.lists(records | values, max_size=6), st.lists(st.text(max_size=20), max_size=2))
def test_json_lines(rows: list[Any], junk: list[str]) -> None:
    text = "".join(json.dumps(r) + "\n" for r in rows) + "".join(j.replace("\n", " ") + "\n" for j in junk)
    with file("data.jsonl", text) as path:
        loads_or_says_why(path, None if any(j.strip() for j in junk) else len(rows))


@FAST
@given(st.lists(conversations, min_size=1, max_size=4))
def test_conversations(rows: list[dict[str, Any]]) -> None:
    with file("chats.jsonl", "".join(json.dumps(r) + "\n" for r in rows)) as path:
        loads_or_says_why(path, len(rows))


@FAST
@given(st.lists(st.sampled_from(FIELDS) | st.text(min_size=1, max_size=8), min_size=1, max_size=5, unique=True),
       st.lists(st.lists(st.text(max_size=25), min_size=0, max_size=6), max_size=5))
def test_csv(header: list[str], cells: list[list[str]]) -> None:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows(cells)
    with file("data.csv", out.getvalue()) as path:
        loads_or_says_why(path)


@FAST
@given(st.lists(st.fixed_dictionaries({}, optional={
    "id": st.text(max_size=5), "user_input": st.text(max_size=20),
    "response": st.text(max_size=20), "retrieved_contexts": st.lists(st.text(max_size=10), max_size=3),
    "reference": st.none() | st.text(max_size=10)}), max_size=5))
def test_parquet(rows: list[dict[str, Any]]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "data.parquet"
        pq.write_table(pa.Table.from_pylist(rows) if rows else pa.table({"id": pa.array([], pa.string())}), path)
        loads_or_says_why(path, len(rows))


@FAST
@given(st.sampled_from(["data.jsonl", "data.csv", "data.parquet", "data.json", "labels.csv", "crit.toml"]),
       st.binary(max_size=200) | st.just(b"PAR1") | st.just(b"\x1f\x8b\x08junk"))
def test_bytes_of_no_format(name: str, content: bytes) -> None:
    from localeval.agree.labels import read_labels
    from localeval.metrics.criteria_file import load_criteria

    read = read_labels if name.startswith("labels") else load_criteria if name.endswith(".toml") else None
    with file(name, content) as path:
        if read is None:
            loads_or_says_why(path)
            return
        with suppress(LocalevalError):
            read(path)


def toml_value(value: Any) -> str:
    """A TOML literal for a JSON-like value (JSON's string escapes are TOML's)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


toml_scalars = st.booleans() | st.integers(-5, 12) | st.text(max_size=20) | st.floats(-2, 2, allow_nan=False)
toml_values = st.recursive(toml_scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=8)
criteria_tables = st.dictionaries(
    st.sampled_from(["polite", "Bad Name", "x"]) | st.from_regex(r"[a-z_]{1,8}", fullmatch=True),
    st.dictionaries(st.sampled_from(["definition", "fields", "points", "rubric", "examples", "strictness"])
                    | st.text(min_size=1, max_size=6), toml_values, max_size=5),
    max_size=3)


@FAST
@given(criteria_tables)
def test_criteria_toml(tables: dict[str, dict[str, Any]]) -> None:
    from localeval.metrics.criteria_file import load_criteria

    text = "".join(f"[{json.dumps(name)}]\n" + "".join(f"{json.dumps(k)} = {toml_value(v)}\n" for k, v in t.items())
                   for name, t in tables.items())
    with file("crit.toml", text) as path:
        try:
            found = load_criteria(path)
        except LocalevalError:
            return
        assert [c.name for c in found] == list(tables)


@FAST
@given(st.lists(st.fixed_dictionaries({}, optional={"id": values, "metric": values, "label": values,
                                                    "index": values, "faithfulness": values}) | values, max_size=6),
       st.sampled_from([".jsonl", ".csv", ".json"]))
def test_label_files(rows: list[Any], suffix: str) -> None:
    from localeval.agree.labels import read_labels

    if suffix == ".csv":
        out = io.StringIO()
        writer = csv.DictWriter(out, ["id", "metric", "label", "index", "faithfulness"], extrasaction="ignore")
        writer.writeheader()
        writer.writerows({k: json.dumps(v) if not isinstance(v, str) else v for k, v in r.items()}
                         for r in rows if isinstance(r, dict))
        text = out.getvalue()
    else:
        text = json.dumps(rows) if suffix == ".json" else "".join(json.dumps(r) + "\n" for r in rows)
    with file("labels" + suffix, text) as path, suppress(LocalevalError):
        read_labels(path)


@settings(max_examples=15, deadline=None)
@given(st.lists(records, min_size=1, max_size=4))
def test_a_run_on_data_that_cannot_be_read_leaves_no_run_folder(rows: list[dict[str, Any]]) -> None:
    from localeval import evaluate
    from localeval.engine.scripted import ScriptedEngine, rule_script

    with file("data.jsonl", "".join(json.dumps(r) + "\n" for r in rows)) as path:
        out = path.parent / "run"
        try:
            evaluate(path, metrics="faithfulness", judge=ScriptedEngine(rule_script), out=out, progress=False,
                     report=False)
        except LocalevalError:
            assert not out.exists()
            return
        assert (out / "summary.json").exists()

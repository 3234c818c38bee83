"""Criteria as data: a criterion the user defines in a TOML file (or a Python file), checked as it loads.

A TOML file holds one table per criterion, named by the criterion::

    [polite]
    definition = "The response is courteous and respectful to the user."
    fields = ["user_input", "response"]   # the sample fields the judge reads, in this order
    scale = "binary"                       # or a whole number N: a rating from 1 to N
    strictness = 1                         # optional: sampled verdicts, majority kept (made odd)

    [[polite.examples]]                    # optional few-shot examples
    user_input = "Where is my order?"
    response = "Figure it out yourself."
    verdict = 0                            # a 1-to-N criterion writes rating = ... instead
    reason = "Dismissive."

A Python file defines :class:`Criterion` objects at module level (or a ``CRITERIA`` sequence of them).
"""

from __future__ import annotations

import difflib
import importlib.util
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval.data.sample import LIST_FIELDS, OLD_NAMES, PLAIN_FIELDS
from localeval.errors import LocalevalError

NAME = re.compile(r"^[a-z][a-z0-9_]*$")
KEYS = ("definition", "fields", "scale", "strictness", "rubric", "examples")
MAX_POINTS = 10


@dataclass(frozen=True)
class Criterion:
    """One criterion: what the judge checks, on which sample fields, on a 0/1 or 1-to-N scale."""

    name: str
    definition: str
    fields: tuple[str, ...] = ("user_input", "response")
    points: int | None = None  # None: a 0/1 verdict; N: a rating from 1 to N
    strictness: int = 1
    rubric: tuple[tuple[int, str], ...] = ()  # rating -> what it means (1-to-N scales)
    examples: tuple[tuple[tuple[tuple[str, Any], ...], int, str], ...] = field(default=())  # (fields, score, reason)

    def __post_init__(self) -> None:
        unknown = [f for f in self.fields if f not in PLAIN_FIELDS]
        if unknown or not self.fields:
            raise ValueError(f"criterion {self.name}: fields must be sample fields ({', '.join(PLAIN_FIELDS)})")
        if self.points is not None and not 2 <= self.points <= MAX_POINTS:
            raise ValueError(f"criterion {self.name}: points must be None (binary) or 2 to {MAX_POINTS}")
        if self.strictness < 1:
            raise ValueError(f"criterion {self.name}: strictness must be 1 or more")

    @property
    def binary(self) -> bool:
        """A 0/1 verdict (not a rating)."""
        return self.points is None

    @property
    def values(self) -> tuple[int, ...]:
        """The answers the schema allows: 0 and 1, or 1 to N."""
        return (0, 1) if self.points is None else tuple(range(1, self.points + 1))

    @property
    def scale_words(self) -> str:
        """``binary`` or ``1-5``."""
        return "binary" if self.points is None else f"1-{self.points}"


def _fail(where: str, message: str) -> LocalevalError:
    return LocalevalError(f"{where}: {message}")


def _hint(given: str, valid: Sequence[str]) -> str:
    close = difflib.get_close_matches(given, list(valid), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def _fields(where: str, raw: Any) -> tuple[str, ...]:
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not raw or not all(isinstance(f, str) for f in raw):
        raise _fail(where, f"'fields' must be a non-empty list of sample fields, e.g. fields = "
                           f"[\"user_input\", \"response\"] (fields: {', '.join(PLAIN_FIELDS)})")
    for f in raw:
        if f not in PLAIN_FIELDS:
            old = f" (Ragas' current name for {f!r} is {OLD_NAMES[f]!r})" if f in OLD_NAMES else ""
            raise _fail(where, f"unknown sample field {f!r} in 'fields'{old or _hint(f, PLAIN_FIELDS)}; "
                               f"fields: {', '.join(PLAIN_FIELDS)}")
    if len(set(raw)) != len(raw):
        raise _fail(where, "'fields' names a field twice")
    return tuple(raw)


def _points(where: str, raw: Any) -> int | None:
    if raw == "binary":
        return None
    if isinstance(raw, str) and raw.startswith("1-") and raw[2:].isdigit():
        raw = int(raw[2:])
    if isinstance(raw, bool) or not isinstance(raw, int) or not 2 <= raw <= MAX_POINTS:
        raise _fail(where, f"'scale' = {raw!r} must be \"binary\" (a 0/1 verdict) or a whole number N from 2 "
                           f"to {MAX_POINTS} (a rating from 1 to N), e.g. scale = 5")
    return raw


def _strictness(where: str, raw: Any) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
        raise _fail(where, f"'strictness' = {raw!r} must be a whole number, 1 or more, e.g. strictness = 3")
    return raw


def _rubric(where: str, raw: Any, points: int | None) -> tuple[tuple[int, str], ...]:
    if not isinstance(raw, Mapping):
        raise _fail(where, "'rubric' must be a table of rating = \"what it means\", e.g. rubric = "
                           "{ 1 = \"rude\", 5 = \"warm\" }")
    if points is None:
        raise _fail(where, "a 'rubric' describes the ratings of a 1-to-N scale; this criterion is binary "
                           "(say what 1 means in its definition, or give it a scale = N)")
    out = []
    for key, text in raw.items():
        if not str(key).isdigit() or not 1 <= int(key) <= points or not isinstance(text, str):
            raise _fail(where, f"rubric entry {key!r} must be a rating from 1 to {points} with a text")
        out.append((int(key), text))
    return tuple(sorted(out))


def _example(where: str, raw: Any, fields: tuple[str, ...], points: int | None) -> tuple:
    key = "verdict" if points is None else "rating"
    if not isinstance(raw, Mapping):
        raise _fail(where, "an example must be a table ([[NAME.examples]]) of the criterion's fields and a "
                           f"{key}")
    allowed = (0, 1) if points is None else tuple(range(1, points + 1))
    score = raw.get(key)
    if isinstance(score, bool) or score not in allowed:
        other = "rating" if key == "verdict" else "verdict"
        wrong = f" (it has {other!r}: this criterion's scale is {'binary' if points is None else f'1-{points}'})" \
            if other in raw else ""
        raise _fail(where, f"the example needs {key} = one of {', '.join(map(str, allowed))}{wrong}")
    for name in raw:
        if name not in (*fields, key, "reason"):
            raise _fail(where, f"the example has {name!r}, which is not one of the criterion's fields "
                               f"({', '.join(fields)}), {key!r} or 'reason'{_hint(name, [*fields, key])}")
    values = []
    for name in fields:
        if name not in raw:
            raise _fail(where, f"the example lacks the field {name!r} (every example gives all the "
                               f"criterion's fields: {', '.join(fields)})")
        value = raw[name]
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value) if name in LIST_FIELDS \
            else isinstance(value, str)
        if not ok:
            kind = "a list of texts" if name in LIST_FIELDS else "a text"
            raise _fail(where, f"the example's {name!r} must be {kind}")
        values.append((name, tuple(value) if isinstance(value, list) else value))
    return (tuple(values), int(score), str(raw.get("reason", "")))


def criterion_from_table(where: str, name: str, table: Any) -> Criterion:
    """A criterion from one TOML table; ``where`` (file and criterion) starts every error."""
    if not NAME.match(name):
        raise _fail(where, "a criterion's name is its score's column: lower-case letters, digits and _, "
                           "starting with a letter, e.g. [cites_context]")
    if not isinstance(table, Mapping):
        raise _fail(where, f"{name} must be a table ([{name}]) with a definition")
    for key in table:
        if key not in KEYS:
            raise _fail(where, f"unknown key {key!r}{_hint(key, KEYS)} (keys: {', '.join(KEYS)})")
    definition = table.get("definition")
    if not isinstance(definition, str) or not definition.strip():
        raise _fail(where, f"needs a definition: what the judge checks, e.g. definition = \"The response "
                           f"is ...\" under [{name}]")
    fields = _fields(where, table.get("fields", ["user_input", "response"]))
    points = _points(where, table.get("scale", "binary"))
    examples = table.get("examples", [])
    if not isinstance(examples, list):
        raise _fail(where, f"'examples' must be a list of tables ([[{name}.examples]])")
    return Criterion(
        name=name, definition=definition.strip(), fields=fields, points=points,
        strictness=_strictness(where, table.get("strictness", 1)),
        rubric=_rubric(where, table["rubric"], points) if "rubric" in table else (),
        examples=tuple(_example(f"{where}, example {i + 1}", e, fields, points) for i, e in enumerate(examples)),
    )


def _load_toml(path: Path) -> list[Criterion]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise LocalevalError(f"{path}: not valid TOML: {error}") from None
    except UnicodeDecodeError as error:
        raise LocalevalError(f"{path}: not UTF-8 text (byte {error.start}); save it as UTF-8 TOML") from None
    return [criterion_from_table(f"{path}, criterion {name!r}", name, table) for name, table in data.items()]


def _load_python(path: Path) -> list[Criterion]:
    spec = importlib.util.spec_from_file_location(f"localeval_criteria_{abs(hash(str(path)))}", path)
    if spec is None or spec.loader is None:
        raise LocalevalError(f"{path}: cannot be loaded as a Python file")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        raise LocalevalError(f"{path}: raised while loading: {type(error).__name__}: {error}") from None
    found = getattr(module, "CRITERIA", None)
    items = list(found) if found is not None else [v for v in vars(module).values() if isinstance(v, Criterion)]
    for item in items:
        if not isinstance(item, Criterion) or not NAME.match(item.name):
            raise LocalevalError(f"{path}: {item!r} is not a Criterion with a lower-case name")
    return items


def load_criteria(path: str | Path) -> list[Criterion]:
    """Every criterion in a ``.toml`` or ``.py`` file, in file order; errors name the file and criterion."""
    file = Path(path)
    if not file.is_file():
        raise LocalevalError(f"criteria file {file} not found (write a path to a .toml or .py file, e.g. "
                             "examples/criteria.toml:polite)")
    criteria = _load_toml(file) if file.suffix == ".toml" else _load_python(file)
    if not criteria:
        raise LocalevalError(f"{file}: defines no criterion (a TOML file needs a table per criterion, e.g. "
                             "[polite] with a definition)")
    names = [c.name for c in criteria]
    if len(set(names)) != len(names):
        raise LocalevalError(f"{file}: a criterion name appears twice: {', '.join(names)}")
    return criteria

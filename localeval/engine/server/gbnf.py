"""A JSON schema as a llama.cpp grammar (GBNF) that admits compact JSON only, as the in-process engines write it.

llama-server turns a ``json_schema`` into a grammar that lets a blank or up to two newlines and twenty tabs in
between any two tokens; a small judge fills its budget with them (the schema probe on the bundled judge ran out of
its 48 tokens on newlines). Sent as ``grammar``, this one allows none: ``{"reason":"...","verdict":1}``. Its first
line, a comment, is the schema it was written from (for llama-server's log, and the recorded player in the tests).

It covers what localeval's prompts ask for: objects (properties in order, all required, nothing else), arrays
(``items``, ``minItems``, ``maxItems``), strings (``minLength``, ``maxLength``, ``enum``), integers and numbers
(``enum``), booleans and null. ``to_gbnf`` returns None for any other keyword: that schema goes as
``json_schema`` instead, whitespace and all.
"""

from __future__ import annotations

import json
from typing import Any

KNOWN = {"type", "properties", "required", "additionalProperties", "items", "minItems", "maxItems", "minLength",
         "maxLength", "enum", "title", "description"}
CHAR = r'( [^"\\\x7F\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ) )'
INTEGER = r'"-"? ( [0-9] | [1-9] [0-9]{1,15} )'
NUMBER = INTEGER + r' ( "." [0-9]{1,16} )? ( [eE] [-+]? [0-9]{1,3} )?'


SOURCE = "# JSON schema: "  # the grammar's first line, a comment to llama.cpp: the schema it was written from


class Unsupported(Exception):
    """The schema uses a keyword this writer does not turn into grammar."""


def to_gbnf(schema: dict[str, Any]) -> str | None:
    """The grammar of ``schema``'s compact JSON, or None where the schema goes beyond what this writer covers."""
    rules: dict[str, str] = {}
    try:
        root = _value(schema, rules)
    except Unsupported:
        return None
    named = "\n".join(f"{name} ::= {body}" for name, body in {"root": root, **rules}.items())
    return f"{SOURCE}{json.dumps(schema, separators=(',', ':'), ensure_ascii=True)}\n{named}\n"


def schema_of(grammar: str) -> dict[str, Any] | None:
    """The JSON schema a grammar from ``to_gbnf`` was written from (its first line says it), else None."""
    first = grammar.split("\n", 1)[0]
    return json.loads(first.removeprefix(SOURCE)) if first.startswith(SOURCE) else None


def _literal(value: Any) -> str:
    """A GBNF string literal matching ``value``'s compact JSON text exactly."""
    return json.dumps(json.dumps(value, separators=(",", ":"), ensure_ascii=False), ensure_ascii=False)


def _rule(rules: dict[str, str], body: str) -> str:
    """A named rule for ``body`` (one per distinct body), so that long grammars stay readable."""
    for name, known in rules.items():
        if known == body:
            return name
    name = f"r{len(rules)}"
    rules[name] = body
    return name


def _value(schema: Any, rules: dict[str, str]) -> str:
    if not isinstance(schema, dict) or set(schema) - KNOWN:
        raise Unsupported
    if "enum" in schema:
        return "( " + " | ".join(_literal(v) for v in schema["enum"]) + " )"
    kind = schema.get("type")
    if kind == "object":
        return _object(schema, rules)
    if kind == "array":
        return _array(schema, rules)
    if kind == "string":
        low, high = int(schema.get("minLength", 0)), schema.get("maxLength")
        count = f"{{{low},{int(high)}}}" if high is not None else f"{{{low},}}"
        return f'"\\"" {_rule(rules, CHAR)}{count} "\\""'
    if kind == "integer":
        return _rule(rules, INTEGER)
    if kind == "number":
        return _rule(rules, NUMBER)
    if kind == "boolean":
        return '( "true" | "false" )'
    if kind == "null":
        return '"null"'
    raise Unsupported


def _object(schema: dict[str, Any], rules: dict[str, str]) -> str:
    properties = schema.get("properties", {})
    if schema.get("additionalProperties", True) is not False or list(schema.get("required", [])) != list(properties):
        raise Unsupported  # only the shape localeval's prompts use: every property, in order, nothing else
    if not properties:
        return '"{}"'
    parts = [f"{_literal(key)[:-1]}:\" {_value(value, rules)}" for key, value in properties.items()]
    return '"{" ' + ' "," '.join(parts) + ' "}"'


def _array(schema: dict[str, Any], rules: dict[str, str]) -> str:
    item = _rule(rules, _value(schema.get("items", {}), rules))
    low, high = int(schema.get("minItems", 0)), schema.get("maxItems")
    if high is not None and int(high) == 0:
        return '"[]"'
    rest = f'( "," {item} )'
    more = f"{{{max(low - 1, 0)},{int(high) - 1}}}" if high is not None else f"{{{max(low - 1, 0)},}}"
    items = f"{item} {rest}{more}"
    return f'"[" {items} "]"' if low > 0 else f'"[" ( {items} )? "]"'


__all__ = ["schema_of", "to_gbnf"]

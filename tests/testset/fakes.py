"""A scripted judge and test documents that make test-set generation predictable."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from localeval.engine.base import Request
from localeval.engine.scripted import rule_script

DOCS = {
    "travel.md": (
        "# Trains\nStaff take the Harbor Express train to Alpha City. The Harbor Express leaves at 8:00.\n\n"
        "# Hotels\nThe Alpha Hotel costs 140 euros a night. Staff book the Alpha Hotel through Ledger.\n"
    ),
    "leave.txt": (
        "# Annual leave\nEmployees get 27 days of leave. Leave is booked in Ledger before March.\n\n"
        "# Sick leave\nA doctor's note is needed from day four. Sick leave is paid for 60 days.\n"
    ),
    "security.html": (
        "<html><head><title>x</title><style>p{}</style></head><body><h1>Badges</h1>"
        "<p>Every visitor wears a red badge at Alpha City offices. Badges are returned at reception.</p>"
        "<script>var hidden = 1;</script></body></html>"
    ),
}


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text.replace("\n", " ")) if s.strip()]


def _capitalised(text: str) -> list[str]:
    """Runs of capitalised words that do not start a sentence: the test documents' entities."""
    names = []
    for sentence in _sentences(text.split("\n", 1)[-1]):
        names += re.findall(r"(?<=\s)(?:[A-Z][a-z]+)(?: [A-Z][a-z]+)*", " " + sentence.split(" ", 1)[-1])
    return list(dict.fromkeys(names))[:5] or ["Ledger"]


def handbook_script(label: str, data: dict[str, Any], request: Request) -> Any:
    """Extraction from capitalised words and headings; questions about the entity's first sentence;
    style by simple rules; checks by word overlap (NLI) and 'no passage answers' (answered)."""
    if label == "testset_extract":
        heading, _, body = data["text"].partition("\n")
        return {"entities": _capitalised(data["text"]), "summary": _sentences(body)[:1], "themes": [heading]}
    if label in ("testset_single_hop", "testset_multi_hop_specific", "testset_multi_hop_abstract"):
        contexts = data.get("contexts") or [data["context"]]
        focus = data.get("entity") or data.get("theme") or ""
        facts = [s for c in contexts for s in _sentences(c.split("\n", 1)[-1])]
        hits = [s for s in facts if focus.lower() in s.lower()] or facts[:1]
        return {"question": f"What about {focus} ({len(contexts)})?", "reference": hits[:2]}
    if label == "testset_unanswerable":
        return {"question": f"Is there a rule about {data['topics'][0]} on the moon?"}
    if label == "testset_style":
        return {"question": data["question"].lower().rstrip("?") + " pls"}
    if label == "testset_answered":
        return {"reason": "scripted", "verdict": 0}
    return rule_script(label, data, request)


def override(**rules: Callable[[dict[str, Any]], Any]) -> Callable[[str, dict[str, Any], Request], Any]:
    """``handbook_script`` with some prompts answered by other rules (by prompt name)."""

    def script(label: str, data: dict[str, Any], request: Request) -> Any:
        return rules[label](data) if label in rules else handbook_script(label, data, request)

    return script

"""Documents from a folder (.md, .txt, .html) as plain text, split into chunks by headings and length.

Headings are kept as Markdown ``#`` lines in every format (HTML ``<h1>``..``<h6>`` become them), so one
splitter serves all three. A chunk starts with its section's heading, so it reads on its own, and
carries a stable id ``<file>#<n>`` (the file's path inside the folder, the chunk's 1-based place in it).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from localeval.errors import LocalevalError

SUFFIXES = (".md", ".markdown", ".txt", ".html", ".htm")
MAX_CHARS = 1200
OVERLAP = 100
MIN_CHARS = 500


@dataclass(frozen=True)
class Document:
    """One file's text, headings as Markdown ``#`` lines."""

    name: str  # path relative to the documents folder, with forward slashes
    text: str


@dataclass(frozen=True)
class Chunk:
    """A piece of a document small enough for one judge prompt."""

    id: str  # "<file>#<n>"
    source: str
    heading: str
    text: str  # starts with the heading, when there is one


def read_documents(folder: str | Path) -> list[Document]:
    """Every .md, .txt and .html file under ``folder``, sorted by path; HTML is reduced to text."""
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise LocalevalError(f"{root} is not a folder; give the folder that holds your documents")
    docs = []
    for file in sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES):
        raw = file.read_text(encoding="utf-8", errors="replace")
        text = html_to_text(raw) if file.suffix.lower() in (".html", ".htm") else raw
        if text.strip():
            docs.append(Document(file.relative_to(root).as_posix(), _tidy(text)))
    if not docs:
        raise LocalevalError(f"no documents in {root}: localeval reads files ending in {', '.join(SUFFIXES)}")
    return docs


class _TextParser(HTMLParser):
    """Collects visible text; headings become ``#`` lines and block elements paragraph breaks."""

    SKIP = frozenset({"script", "style", "head", "noscript", "template"})
    BLOCKS = frozenset({"p", "div", "section", "article", "ul", "ol", "table", "tr", "br", "blockquote", "pre"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self.skipping += 1
        elif re.fullmatch(r"h[1-6]", tag):
            self.parts.append("\n\n" + "#" * int(tag[1]) + " ")
        elif tag == "li":
            self.parts.append("\n- ")
        elif tag in self.BLOCKS:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP:
            self.skipping = max(0, self.skipping - 1)
        elif re.fullmatch(r"h[1-6]", tag) or tag in self.BLOCKS:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(re.sub(r"\s+", " ", data))


def html_to_text(html: str) -> str:
    """The visible text of an HTML page (scripts, styles and the head left out)."""
    parser = _TextParser()
    parser.feed(html)
    parser.close()
    return "".join(parser.parts)


def _tidy(text: str) -> str:
    lines = [line.strip() for line in text.replace("\r\n", "\n").split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def split_sections(text: str) -> list[tuple[str, str]]:
    """(heading, body) pairs; a ``#`` line inside a fenced code block is not a heading."""
    sections: list[tuple[str, list[str]]] = [("", [])]
    fenced = False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        match = None if fenced else re.match(r"#{1,6}\s+(.*\S)\s*$", line)
        if match:
            sections.append((match.group(1).strip("# "), []))
        else:
            sections[-1][1].append(line)
    return [(heading, body) for heading, lines in sections if (body := "\n".join(lines).strip())]


def split_text(text: str, max_chars: int, overlap: int = 0) -> list[str]:
    """Pieces of at most ``max_chars`` characters, cut between paragraphs, else sentences, else words;
    each piece after the first starts with up to ``overlap`` characters of the one before."""
    overlap = max(0, min(overlap, max_chars // 4))
    units = _units(text, max(1, max_chars - overlap - 1))
    pieces: list[str] = []
    current = ""
    for sep, unit in units:
        if current and len(current) + len(sep) + len(unit) > max_chars:
            pieces.append(current)
            tail = _tail(current, overlap)
            current = f"{tail} {unit}" if tail else unit
        else:
            current = current + sep + unit if current else unit
    if current:
        pieces.append(current)
    return pieces


def _units(text: str, budget: int) -> list[tuple[str, str]]:
    """(separator, text) pieces no longer than ``budget``: paragraphs, or sentences and words of long ones."""
    out: list[tuple[str, str]] = []
    for paragraph in re.split(r"\n\s*\n", text.strip()):
        # Hard-wrapped lines join up; a line that starts a list item stays a line.
        paragraph = re.sub(r"\n(?!\s*(?:[-*+]|\d+[.)])\s)", " ", paragraph.strip())
        if not paragraph:
            continue
        sep = "\n\n"
        if len(paragraph) <= budget:
            out.append((sep, paragraph))
            continue
        for sentence in re.split(r"(?<=[.!?])\s+", paragraph):
            for piece in _wrap(sentence, budget):
                out.append((sep, piece))
                sep = " "
    return out


def _wrap(text: str, budget: int) -> list[str]:
    """Words packed into lines of at most ``budget`` characters (a longer word is cut)."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        while len(word) > budget:
            if line:
                lines.append(line)
                line = ""
            lines.append(word[:budget])
            word = word[budget:]
        if line and len(line) + 1 + len(word) > budget:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return lines


def _tail(text: str, n: int) -> str:
    """At most the last ``n`` characters of ``text``, starting at a word."""
    if n <= 0:
        return ""
    tail = text[-n:]
    if len(text) > n and not text[-n - 1].isspace():
        cut = re.search(r"\s", tail)
        tail = tail[cut.end() :] if cut else ""
    return tail.strip()


def chunk_document(doc: Document, max_chars: int = MAX_CHARS, overlap: int = OVERLAP,
                   min_chars: int = MIN_CHARS) -> list[Chunk]:
    """The document's chunks, each at most ``max_chars`` characters: a long section is cut into several, and
    a section shorter than ``min_chars`` takes in the sections after it while they fit (as Ragas' headline
    splitter does), so a chunk holds enough to write a question from."""
    pieces: list[tuple[str, str, bool]] = []  # heading, text, whole section (may merge)
    for heading, body in split_sections(doc.text):
        title = heading[: max_chars // 2]
        budget = max_chars - len(title) - 1 if title else max_chars  # the title takes at most half
        parts = split_text(body, budget, overlap)
        for part in parts:
            text = f"{title}\n{part}" if title else part
            last = pieces[-1] if pieces else None
            if (last and last[2] and len(parts) == 1 and len(last[1]) < min_chars
                    and len(last[1]) + 2 + len(text) <= max_chars):
                pieces[-1] = (last[0], f"{last[1]}\n\n{text}", True)
            else:
                pieces.append((title, text, len(parts) == 1))
    return [Chunk(f"{doc.name}#{n}", doc.name, heading, text) for n, (heading, text, _) in enumerate(pieces, 1)]


def chunk_documents(docs: list[Document], max_chars: int = MAX_CHARS, overlap: int = OVERLAP,
                    min_chars: int = MIN_CHARS) -> list[Chunk]:
    """Every document's chunks, in document order."""
    return [chunk for doc in docs for chunk in chunk_document(doc, max_chars, overlap, min_chars)]


def documents_hash(docs: list[Document], max_chars: int = MAX_CHARS, overlap: int = OVERLAP,
                   min_chars: int = MIN_CHARS) -> str:
    """Identifies the documents and the chunking: a saved graph is reused only when this matches."""
    digest = hashlib.sha256(f"chunks:{max_chars}:{overlap}:{min_chars}".encode())
    for doc in docs:
        digest.update(f"\0{doc.name}\0{doc.text}".encode())
    return digest.hexdigest()[:24]

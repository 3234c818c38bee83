"""Reading documents and chunking them: headings, length limits, overlap, stable ids."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from localeval.errors import LocalevalError
from localeval.testset.documents import (
    Document,
    chunk_document,
    documents_hash,
    html_to_text,
    read_documents,
    split_sections,
    split_text,
)


def test_reads_md_txt_html_sorted_and_skips_other_files(docs: Path) -> None:
    (docs / "notes.pdf").write_bytes(b"%PDF")
    (docs / "sub").mkdir()
    (docs / "sub" / "more.md").write_text("# More\nText here.", encoding="utf-8")
    names = [d.name for d in read_documents(docs)]
    assert names == ["leave.txt", "security.html", "sub/more.md", "travel.md"]


def test_an_empty_or_missing_folder_says_what_is_read(tmp_path: Path) -> None:
    with pytest.raises(LocalevalError, match=r"\.md"):
        read_documents(tmp_path)
    with pytest.raises(LocalevalError, match="not a folder"):
        read_documents(tmp_path / "nope")


def test_html_keeps_headings_and_list_items_and_drops_scripts_styles_and_head() -> None:
    text = html_to_text(
        "<html><head><title>T</title><style>p{color:red}</style></head><body><h2>Rules</h2>"
        "<p>Be kind &amp; quick.</p><ul><li>One</li><li>Two</li></ul><script>alert(1)</script></body></html>"
    )
    assert "## Rules" in text and "Be kind & quick." in text and "- One" in text and "- Two" in text
    assert "alert" not in text and "color" not in text and text.split()[0] == "##"  # the head's title is gone


def test_sections_follow_headings_but_not_hashes_in_code() -> None:
    text = "Intro line.\n\n# First\nA.\n\n```\n# a comment\n```\n## Second\nB.\n# Empty\n"
    sections = split_sections(text)
    assert [h for h, _ in sections] == ["", "First", "Second"]
    assert "# a comment" in sections[1][1]


def test_each_chunk_starts_with_its_heading_and_ids_count_per_file() -> None:
    doc = Document("guide/a.md", "# Alpha\nFirst part.\n\n# Beta\nSecond part.")
    chunks = chunk_document(doc, min_chars=0)
    assert [c.id for c in chunks] == ["guide/a.md#1", "guide/a.md#2"]
    assert [c.heading for c in chunks] == ["Alpha", "Beta"]
    assert chunks[1].text == "Beta\nSecond part."
    assert chunk_document(doc, min_chars=0) == chunks  # stable


def test_short_sections_merge_with_the_next_while_they_fit() -> None:
    text = f"# A\n{'a ' * 40}\n\n# B\n{'b ' * 40}\n\n# C\n{'c ' * 200}\n\n# D\nd."
    chunks = chunk_document(Document("m.md", text), max_chars=500, min_chars=150)
    # A is short and takes B in; A+B is long enough, so C starts anew; C is long enough, so D does too.
    assert [c.heading for c in chunks] == ["A", "C", "D"]
    assert chunks[0].text.startswith("A\n") and "\n\nB\n" in chunks[0].text
    assert [c.id for c in chunks] == ["m.md#1", "m.md#2", "m.md#3"]
    big = chunk_document(Document("m.md", text), max_chars=500, min_chars=450)
    assert [c.heading for c in big] == ["A", "C"]  # A+B (164) takes nothing more: C would overflow; C takes D


def test_long_sections_are_cut_under_the_limit_with_overlap() -> None:
    sentences = [f"Sentence number {i} talks about topic {i}." for i in range(60)]
    doc = Document("long.txt", "# Long\n" + " ".join(sentences[:30]) + "\n\n" + " ".join(sentences[30:]))
    chunks = chunk_document(doc, max_chars=300, overlap=40)
    assert len(chunks) > 5
    assert all(len(c.text) <= 300 for c in chunks)
    assert all(c.text.startswith("Long\n") for c in chunks)
    for before, after in itertools.pairwise(chunks):
        overlap = after.text.removeprefix("Long\n")[:25]
        assert overlap in before.text[-41:]  # the next chunk repeats the end of this one
    joined = " ".join(c.text for c in chunks)
    assert all(s in joined for s in sentences)  # nothing lost


def test_split_text_cuts_words_longer_than_the_limit() -> None:
    pieces = split_text("short " + "x" * 250 + " end", max_chars=100, overlap=0)
    assert all(len(p) <= 100 for p in pieces)
    assert "".join(pieces).replace(" ", "").count("x") == 250


def test_hard_wrapped_lines_join_and_list_items_stay() -> None:
    doc = Document("a.md", "# H\nA line that\nwraps here.\n\n- item one\n- item two")
    text = chunk_document(doc)[0].text
    assert "A line that wraps here." in text and "\n- item one\n- item two" in text


def test_the_hash_follows_text_and_chunking() -> None:
    docs = [Document("a.md", "# A\nText.")]
    assert documents_hash(docs) == documents_hash([Document("a.md", "# A\nText.")])
    assert documents_hash(docs) != documents_hash([Document("a.md", "# A\nText!")])
    assert documents_hash(docs) != documents_hash(docs, max_chars=500)


def test_the_bundled_examples_chunk_into_short_headed_pieces() -> None:
    folder = Path(__file__).resolve().parents[2] / "examples" / "docs"
    docs = read_documents(folder)
    assert 4 <= len(docs) <= 6
    chunks = [c for d in docs for c in chunk_document(d)]
    assert all(c.heading and len(c.text) <= 1200 for c in chunks)

"""report.html: self-contained, escaped, and rendered by a real browser (headless Chromium).

CI installs the browser with ``apt-get install -y chromium``; without it the browser test skips.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from localeval.report.diagnosis import diagnose
from localeval.report.html import render_report, write_report

# The scripted run fires no diagnosis rule, so its page has no Diagnosis section.
SECTIONS = ("Summary", "Unanswerable questions (refusals)", "Score distributions", "Worst samples",
            "Cost and usage")
BAR = (0x4C, 0x78, 0xA8)  # the histogram bars' fill


def test_report_is_self_contained_and_escaped(scripted_run: Path) -> None:
    path = write_report(scripted_run)
    assert path == scripted_run / "report.html"
    html = path.read_text(encoding="utf-8")
    for heading in SECTIONS:
        assert f">{heading}</h2>" in html.replace("&amp;", "&")
    assert diagnose(scripted_run) == [] and ">Diagnosis</h2>" not in html
    assert html.count("<svg") == 8  # one histogram per metric
    outside = re.findall(r"(?:https?:)?//[\w.-]+", html.replace('xmlns="http://www.w3.org/2000/svg"', ""))
    assert outside == [] and "<script" not in html and "<link" not in html and " src=" not in html
    assert "<b>d&amp;</b>" not in html and "&lt;b&gt;d&amp;amp;&lt;/b&gt;" in html
    assert "unsupported" in html and "irrelevant" in html and "word overlap" in html  # verdict traces


def test_judge_text_is_escaped(make_run) -> None:
    evil = "<img src=x onerror=alert(1)>"
    trace = {"statements": [evil], "verdicts": [0], "reasons": [f"</td><script>{evil}</script>"]}
    run = make_run("evil", {"faithfulness": [0.0, "engine_error"], f"m{evil}": [0.5, 0.5]},
                   ids=[evil, "ok"], traces={"faithfulness": [trace, {"nan_detail": evil}]},
                   usage={evil: {"asks": 1}})
    html = render_report(run)
    assert evil not in html and "<script" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html


def _chromium(*args: str, profile: Path) -> subprocess.CompletedProcess[str]:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    assert browser is not None
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--hide-scrollbars", f"--user-data-dir={profile}"]
    return subprocess.run([browser, *flags, *args], capture_output=True, text=True, timeout=180, check=True)


# Under CI (which installs chromium) a missing browser is a failure, never a skip.
HAVE_BROWSER = bool(shutil.which("chromium") or shutil.which("chromium-browser"))


@pytest.mark.slow  # starts a headless browser
@pytest.mark.skipif(not HAVE_BROWSER and not os.environ.get("CI"),
                    reason="needs Debian's chromium: apt-get install -y chromium")
def test_report_renders_in_chromium(scripted_run: Path, tmp_path: Path) -> None:
    from PIL import Image as image  # Pillow comes with outlines
    url = write_report(scripted_run).resolve().as_uri()
    dom = _chromium("--dump-dom", url, profile=tmp_path / "p1").stdout
    for heading in SECTIONS:
        assert re.search(rf"<h2[^>]*>{re.escape(heading)}</h2>", dom), heading
    assert dom.count("<svg") == 8 and "faithfulness" in dom and "refusal rate" in dom
    assert "&lt;b&gt;d&amp;amp;&lt;/b&gt;" in dom  # the odd id is shown as text, not parsed as markup

    png = tmp_path / "report.png"
    _chromium(f"--screenshot={png}", "--window-size=1280,2000", url, profile=tmp_path / "p2")
    with image.open(png) as shot:
        rgb = shot.convert("RGB")
        assert rgb.size == (1280, 2000)
        colours = rgb.getcolors(maxcolors=1 << 20) or []
    assert len(colours) > 50  # text, tables, plots: far from a blank page
    counts = {colour: n for n, colour in colours}
    white = counts.get((255, 255, 255), 0)
    assert white < 0.97 * 1280 * 2000
    assert counts.get(BAR, 0) > 2000  # the SVG histograms were drawn


@pytest.mark.skipif(not HAVE_BROWSER and not os.environ.get("CI"),
                    reason="needs Debian's chromium: apt-get install -y chromium")
def test_worst_sample_texts_are_in_the_rendered_page(texts_run: Path, tmp_path: Path) -> None:
    url = write_report(texts_run).resolve().as_uri()
    dom = _chromium("--dump-dom", url, profile=tmp_path / "p").stdout
    worst = dom[dom.index('<h2 id="worst">'):]
    card = worst[:worst.index("</div></div></div>")]  # faithfulness' worst card: sample beta
    assert "<b>beta</b>: faithfulness = 0.500" in card
    assert "How tall is the Beta tower?" in card and "The Beta tower is purple." in card
    assert "Monkeys climb trees." in card and "The Beta tower is 300 metres tall." in card  # context, reference
    assert "<code>beta-1</code>" in card
    # the hostile response is text in the document: no script element, and it did not run
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in card
    assert "<script" not in dom and "<title>localeval report" in dom and "pwned</title>" not in dom
    # the long context is folded, and its whole text is in the document
    assert "its last stone was laid by the mason Quillon Varda." in card and card.count("<details") == 1
    assert "<script>document.title" not in dom

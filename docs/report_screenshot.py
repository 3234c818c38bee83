"""Regenerate docs/report.png: the report of the demo data under the scripted judge (no model), its
worst-samples section as headless Chromium draws it.

Run from the repository root: ``python docs/report_screenshot.py`` (needs ``chromium`` on the PATH,
e.g. ``apt-get install -y chromium``, and Pillow, which comes with localeval's dependencies).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import localeval
from localeval.engine.scripted import ScriptedEngine, rule_script
from localeval.report.html import write_report

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "examples" / "rag_demo.jsonl"
OUT = ROOT / "docs" / "report.png"
METRICS = "faithfulness,context_precision,context_recall,factual_correctness,mrr,ndcg"
WIDTH, TALL, CARDS = 1100, 6000, 2  # window width, the tall first shot, the sample cards kept
RULE = (0x33, 0x44, 0x55)  # the line under each h2 heading
BORDER = (0xDD, 0xDD, 0xDD)  # the top and bottom edges of a sample card


def shoot(page: Path, png: Path, profile: Path) -> None:
    """A screenshot of the page's top WIDTH x TALL pixels."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        sys.exit("report_screenshot: no chromium on the PATH; install it (apt-get install -y chromium)")
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--no-first-run", f"--user-data-dir={profile}", f"--screenshot={png}",
                    f"--window-size={WIDTH},{TALL}", page.as_uri()], check=True, capture_output=True, timeout=180)


def lines(rgb: Any, colour: tuple[int, int, int]) -> list[int]:
    """The y of each horizontal line of this colour across most of the page, top to bottom."""
    ys = [y for y in range(rgb.height)
          if sum(rgb.getpixel((x, y)) == colour for x in range(0, WIDTH, 10)) > WIDTH // 20]
    return [y for i, y in enumerate(ys) if i == 0 or ys[i - 1] != y - 1]


def main() -> None:
    from PIL import Image

    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        localeval.evaluate(str(DATA), metrics=METRICS, judge=ScriptedEngine(rule_script), out=run,
                           progress=False, report=False)
        page = write_report(run)
        headings = re.findall(r"<h2 id=(\w+)>", page.read_text(encoding="utf-8"))
        shot = Path(tmp) / "tall.png"
        shoot(page, shot, Path(tmp) / "profile")
        with Image.open(shot) as image:
            rgb = image.convert("RGB")
        line = lines(rgb, RULE)[headings.index("worst")]
        edges = [y for y in lines(rgb, BORDER) if y > line]
        top, bottom = max(0, line - 40), edges[2 * CARDS - 1] + 5
        rgb.crop((0, top, WIDTH, bottom)).convert("P", palette=Image.Palette.ADAPTIVE).save(OUT, optimize=True)
    print(f"wrote {OUT} ({OUT.stat().st_size // 1024} KB)")


if __name__ == "__main__":
    main()

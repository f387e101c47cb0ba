"""Render zarrx's notebook display (``_repr_html_``) of a few arrays and a group in a real
headless browser, to look at the picture as a notebook user sees it.

    python bench/render_display.py OUT_DIR [--browser chromium-headless-shell]

Writes OUT_DIR/display.html and OUT_DIR/display.png (a screenshot by Debian's
``chromium-headless-shell`` or ``chromium``: ``apt-get install chromium-headless-shell``).
The arrays are made in memory; nothing is read from or written to anywhere else.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

import zarrx
from zarrx.storage import MemoryStore

EXAMPLES = [
    ("2-d, sharded", {"shape": (10000, 10000), "chunks": (500, 500), "shards": (2000, 2500),
                      "dtype": "f4"}),
    ("3-d, chunked", {"shape": (512, 256, 128), "chunks": (64, 64, 64), "dtype": "u2"}),
    ("4-d, sharded", {"shape": (6, 100, 300, 300), "chunks": (1, 25, 50, 50),
                      "shards": (1, 50, 150, 150), "dtype": "i2"}),
    ("1-d, many chunks", {"shape": (1_000_000,), "chunks": (1000,), "dtype": "f8"}),
    ("v2", {"shape": (300, 40), "chunks": (50, 40), "dtype": "<i8", "zarr_format": 2}),
]


def page() -> str:
    sections = []
    for title, kwargs in EXAMPLES:
        a = zarrx.create_array(MemoryStore(), **kwargs)
        index = tuple(slice(0, n // 3) for n in a.shape)
        a[index] = np.arange(np.prod([s.stop for s in index])).reshape(
            [s.stop for s in index]) % 100
        sections.append(f"<h3>{title}</h3>{a._repr_html_()}")
    g = zarrx.create_group(MemoryStore(), attributes={"title": "survey"})
    raw = g.create_group("raw")
    raw.create_array("temperature", shape=(365, 720, 1440), chunks=(1, 720, 1440),
                     shards=(30, 720, 1440), dtype="f4")
    raw.create_array("mask", shape=(720, 1440), chunks=(360, 360), dtype="bool")
    g.create_group("derived/monthly").create_array("mean", shape=(12, 720, 1440),
                                                   chunks=(1, 360, 360), dtype="f4")
    sections.append(f"<h3>a group</h3>{g._repr_html_()}")
    body = "<hr/>".join(sections)
    return ("<!doctype html><html><head><meta charset='utf-8'><title>zarrx display</title>"
            "<style>body{font-family:sans-serif;font-size:13px;margin:16px}</style></head>"
            f"<body>{body}</body></html>")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--browser", default=None)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    html = args.out / "display.html"
    html.write_text(page(), encoding="utf-8")
    browser = args.browser or shutil.which("chromium-headless-shell") or shutil.which("chromium")
    if browser is None:
        print("no headless Chromium: apt-get install chromium-headless-shell", file=sys.stderr)
        return 1
    png = args.out / "display.png"
    subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--screenshot={png}", "--window-size=1100,2600", html.resolve().as_uri()],
        check=True, capture_output=True, timeout=120,
    )
    print(png)
    return 0


if __name__ == "__main__":
    sys.exit(main())

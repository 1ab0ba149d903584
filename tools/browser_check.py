"""Measure a written report in a real browser (headless Chromium through Playwright).

``python -m tools.browser_check DIR/report.html [--screenshot PNG]`` prints the
page height, the widest element beyond the window, tables wider than their box, images not loaded or shown below half their
natural size, and in-page links that point nowhere. Needs the ``playwright`` package and a system
Chromium (Debian's ``chromium``); Playwright's own browser download is not used.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

WINDOW_WIDTH = 1400

# Runs in the page: every measurement the report's layout contract needs.
_MEASURE_JS = """
() => {
  const W = document.documentElement.clientWidth;
  const overflow = [];
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    let inScroller = false;
    for (let p = el.parentElement; p; p = p.parentElement) {
      if (p.classList && p.classList.contains('scroll')) { inScroller = true; break; }
    }
    if (!inScroller && r.right > W + 0.5) overflow.push(el.tagName + '.' + el.className + ' ' + Math.round(r.right));
  }
  const images = [...document.images].map(img => ({
    src: img.getAttribute('src'), complete: img.complete, natural: img.naturalWidth,
    shown: img.getBoundingClientRect().width}));
  const ids = new Set([...document.querySelectorAll('[id]')].map(e => e.id));
  const broken = [...document.querySelectorAll('a[href^="#"]')]
    .map(a => a.getAttribute('href').slice(1)).filter(id => !ids.has(decodeURIComponent(id)));
  return {height: document.documentElement.scrollHeight, width: W,
          scroll_width: document.documentElement.scrollWidth, overflow, images, broken_links: broken};
}
"""


# Tables (details opened) wider than the box they sit in: a reader would have to scroll sideways.
_WIDE_TABLES_JS = """
() => [...document.querySelectorAll('table')].filter(t => t.getClientRects().length).map(t => {
  const box = t.parentElement.clientWidth;
  let h = t.parentElement;  // the nearest heading above the table names it
  while (h && !/^H[1-4]$/.test(h.tagName)) h = h.previousElementSibling || h.parentElement;
  const label = (h ? h.id || h.innerText : '') + ': ' + (t.querySelector('th') || {innerText: ''}).innerText;
  return {table: label.slice(0, 80), width: Math.round(t.getBoundingClientRect().width), box};
}).filter(t => t.width > t.box + 1)
"""


def chromium_path() -> str | None:
    """The system Chromium, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def measure(report: Path, screenshot: Path | None = None, width: int = WINDOW_WIDTH) -> dict:
    """Layout measurements of ``report`` opened from disk at ``width`` px (see module docstring)."""
    from playwright.sync_api import sync_playwright

    exe = chromium_path()
    if exe is None:
        raise RuntimeError("no system Chromium found (apt-get install -y chromium)")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.goto(Path(report).resolve().as_uri(), wait_until="load")
            result = page.evaluate(_MEASURE_JS)
            page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
            result["wide_tables"] = page.evaluate(_WIDE_TABLES_JS)
            result["evidence_text"] = page.evaluate(
                "() => [...document.querySelectorAll('details.evidence')].map(d => d.innerText)"
            )
            page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = false)")
            if screenshot is not None:
                page.screenshot(path=str(screenshot), full_page=True)
        finally:
            browser.close()
    result["bytes"] = Path(report).stat().st_size
    return result


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("report")
    p.add_argument("--screenshot", default=None)
    p.add_argument("--width", type=int, default=WINDOW_WIDTH)
    args = p.parse_args(argv)
    m = measure(Path(args.report), Path(args.screenshot) if args.screenshot else None, args.width)
    small = [
        i for i in m["images"] if not i["complete"] or i["natural"] == 0 or i["shown"] < i["natural"] / 2
    ]
    print(
        json.dumps(
            {
                "height_px": m["height"],
                "bytes": m["bytes"],
                "scroll_width": m["scroll_width"],
                "window": m["width"],
                "overflow": m["overflow"][:10],
                "wide_tables": m["wide_tables"][:10],
                "images": len(m["images"]),
                "images_bad": small,
                "broken_links": m["broken_links"],
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

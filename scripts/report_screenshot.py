"""Measure a report.html in headless Chromium: page height, where the answer sits, image links.

Prints the page's height in CSS pixels at a 1280 px wide window, the y (top and bottom) of the
headline's first sentence and of the trade-off figure, how many images the page embeds (data
URIs) and which it links as separate files (the page breaks when mailed alone if any), and
whether the answer is on the first screen (both within ``--first-screen`` px). With ``--png``,
also saves a screenshot of the first screen.

Needs Debian's Chromium (``apt-get install chromium``); not a project dependency. Without it the
script says so and exits with status 2 (nothing is measured). Example:

    lobbysim compare live_game --policies \
        uniform_random,point_estimate,draw_chance,knowledge_gradient,oracle --out outputs/lg
    python scripts/report_screenshot.py outputs/lg/report.html --png first-screen.png

How it measures: Chromium opens a temporary copy of the page with a ``<base>`` pointing at the
report's folder (so linked figures load as they would) and a small script that, once the page
and its images have loaded, reads the layout (``getBoundingClientRect``) and writes it into the
DOM, which ``--dump-dom`` prints. The report itself is not changed. The headline is the first
block after the title and the one-line "what was run"; the trade-off figure is the image whose
``data-file`` (or ``src``) is ``tradeoff.png``. Folded ``<details>`` count as closed, as a reader
first sees them.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]

WIDTH = 1280
"""Window width in CSS pixels (a laptop screen)."""

_MEASURE = """
<script>
window.addEventListener("load", () => {
  const box = (el) => {
    if (!el) return null;
    const r = el.getBoundingClientRect();
    return {top: Math.round(r.top + window.scrollY), bottom: Math.round(r.bottom + window.scrollY)};
  };
  const title = document.querySelector("h1");
  const run = title ? title.nextElementSibling : null;
  const headline = run ? run.nextElementSibling : null;
  const images = [...document.querySelectorAll("img")];
  const name = (img) => img.dataset.file || (img.getAttribute("src") || "").split("/").pop();
  const tradeoff = images.find((img) => name(img) === "tradeoff.png");
  const linked = images.map((img) => img.getAttribute("src") || "")
    .filter((src) => !src.startsWith("data:"));
  const result = {
    height: Math.max(document.documentElement.scrollHeight, document.body.scrollHeight),
    headline: box(headline),
    headline_text: headline ? headline.textContent.trim().slice(0, 120) : null,
    tradeoff: box(tradeoff),
    images: images.length,
    embedded: images.length - linked.length,
    linked: linked,
    broken: images.filter((img) => !img.complete || img.naturalWidth === 0).length,
    details: document.querySelectorAll("details").length,
    sections: [...document.querySelectorAll("h2")].map((h) => [h.textContent, box(h).top]),
  };
  const out = document.createElement("pre");
  out.id = "__report_measure";
  out.textContent = JSON.stringify(result);
  document.body.appendChild(out);
});
</script>
"""


def _browser() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _run(browser: str, profile: str, size: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [browser, *FLAGS, f"--user-data-dir={profile}", f"--window-size={size}", *extra],
        check=True,
        capture_output=True,
        text=True,
        timeout=180,
    )


def measure(report: Path, browser: str, first_screen: int) -> dict[str, object]:
    """Return the layout measurements of ``report`` in ``browser`` (see the module's doc)."""
    page = report.read_text(encoding="utf-8")
    base = f'<base href="{html.escape(report.resolve().parent.as_uri())}/">'
    page = page.replace("<head>", f"<head>\n{base}", 1)
    page = page.replace("</body>", f"{_MEASURE}</body>", 1)
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "measure.html"
        copy.write_text(page, encoding="utf-8")
        profile = Path(tmp) / "profile"
        done = _run(
            browser,
            str(profile),
            f"{WIDTH},{first_screen}",
            "--virtual-time-budget=20000",
            "--dump-dom",
            copy.as_uri(),
        )
    found = re.search(r'<pre id="__report_measure">(.*?)</pre>', done.stdout, re.S)
    if found is None:
        raise RuntimeError("the page gave no measurement (did it load?)")
    data: dict[str, object] = json.loads(html.unescape(found.group(1)))
    return data


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="the report.html to measure")
    parser.add_argument("--png", type=Path, help="also save a screenshot of the first screen")
    parser.add_argument(
        "--first-screen", type=int, default=1000, help="the first screen's height (px)"
    )
    parser.add_argument("--json", action="store_true", help="print the measurements as JSON")
    args = parser.parse_args()
    browser = _browser()
    if browser is None:
        print(
            "report_screenshot: no headless Chromium found (apt-get install chromium); "
            "nothing measured",
            file=sys.stderr,
        )
        return 2
    if not args.report.is_file():
        print(f"report_screenshot: no report at {args.report}", file=sys.stderr)
        return 2
    data = measure(args.report, browser, args.first_screen)
    if args.png is not None:
        args.png.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as profile:
            _run(
                browser,
                profile,
                f"{WIDTH},{args.first_screen}",
                f"--screenshot={args.png.resolve()}",
                args.report.resolve().as_uri(),
            )
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    headline = data["headline"]
    tradeoff = data["tradeoff"]
    linked = data["linked"]
    assert isinstance(linked, list)

    def span(box: object) -> str:
        return "not found" if not isinstance(box, dict) else f"y {box['top']}-{box['bottom']} px"

    print(f"report:            {args.report}")
    print(f"page height:       {data['height']} px (window {WIDTH} px wide)")
    print(f"headline:          {span(headline)}: {data['headline_text']!r}")
    print(f"trade-off figure:  {span(tradeoff)}")
    print(
        f"images:            {data['images']} ({data['embedded']} embedded, {len(linked)} linked "
        f"as separate files{': ' + ', '.join(linked) if linked else ''}; {data['broken']} broken)"
    )
    print(f"folded sections:   {data['details']}")
    sections = data["sections"]
    assert isinstance(sections, list)
    print("sections (y):      " + "; ".join(f"{name} {top}" for name, top in sections))
    first = all(isinstance(b, dict) and int(b["bottom"]) <= args.first_screen for b in (headline,))
    first = first and isinstance(tradeoff, dict) and int(tradeoff["bottom"]) <= args.first_screen
    print(
        f"answer on the first {args.first_screen} px (headline and whole trade-off figure): "
        f"{'yes' if first else 'no'}"
    )
    if args.png is not None:
        print(f"first screen:      {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

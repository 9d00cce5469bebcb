"""Open a run's report.html in headless Chromium and save a screenshot (for docs/).

Needs Debian's Chromium (``apt-get install chromium``). Example:

    lobbysim compare scenarios/quickstart.yaml \
        --policies point_estimate,draw_chance,knowledge_gradient --out outputs/qs
    python scripts/screenshot_report.py outputs/qs/report.html docs/report-screenshot.png
    python scripts/screenshot_report.py outputs/qs/report.html docs/report-first-screen.png \
        --size 1280,800     # the first screen: the headline and the trade-off figure

Exits non-zero with a message if Chromium is missing or writes no image.
"""

from __future__ import annotations

import argparse
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="the report.html to open")
    parser.add_argument("png", type=Path, help="where to save the screenshot")
    parser.add_argument("--size", default="1280,2600", help="window width,height in pixels")
    args = parser.parse_args()
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("screenshot_report: chromium not found (apt-get install chromium)", file=sys.stderr)
        return 2
    if not args.report.is_file():
        print(f"screenshot_report: no report at {args.report}", file=sys.stderr)
        return 2
    args.png.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                browser,
                *FLAGS,
                f"--user-data-dir={profile}",
                f"--window-size={args.size}",
                f"--screenshot={args.png.resolve()}",
                args.report.resolve().as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
    if not args.png.is_file() or args.png.stat().st_size < 10_000:
        print(f"screenshot_report: chromium wrote no usable image to {args.png}", file=sys.stderr)
        return 1
    print(f"wrote {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

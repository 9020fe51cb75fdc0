"""Render built documentation pages in headless Chromium and save screenshots to look at.

Usage (after ``mkdocs build --site-dir site``)::

    python docs/check_render.py --site site --out /tmp/shots [page ...]

Pages default to the home page, getting started, one theory page per paper, the gallery, the
traceability table, one API page and the CPU certificate. The site is served from ``127.0.0.1`` and
needs nothing from the network (MathJax is part of it), so a page whose mathematics does not
render here does not render for a reader offline either.

Needs Chromium, which no Python extra installs: ``apt-get install chromium`` (Debian, Ubuntu) or any
``chromium``, ``chromium-browser`` or ``google-chrome`` on the ``PATH``. Without one the script stops
with a one-line message and exit status 2. The test suite does not run it.

For every page the script prints the screenshot path and whether MathJax typeset the page (it
counts ``mjx-container`` elements in the DOM Chromium dumps), so a page whose mathematics did not
render is reported, not just photographed; the exit status is 1 if any page failed.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

PAGES = ["", "getting-started/", "theory/levi/", "theory/clocks/", "theory/kramers/", "theory/uniformity/",
         "theory/repulsion/", "gallery/", "traceability/", "api/linear/", "verification/cpu/"]


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    print("check_render: no chromium, chromium-browser or google-chrome on the PATH "
          "(Debian/Ubuntu: apt-get install chromium)", file=sys.stderr)
    raise SystemExit(2)


def _serve(root: Path) -> tuple[http.server.ThreadingHTTPServer, int]:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(root))
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, srv.server_address[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pages", nargs="*", default=PAGES, help="site-relative page paths")
    ap.add_argument("--site", default="site", help="built site directory (mkdocs build --site-dir)")
    ap.add_argument("--out", default="render-check", help="where the PNGs go")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=1800)
    args = ap.parse_args(argv)
    site = Path(args.site).resolve()
    if not (site / "index.html").exists():
        raise SystemExit(f"{site} has no index.html: run mkdocs build first")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    chrome = _chromium()
    srv, port = _serve(site)
    bad = 0
    try:
        for page in args.pages:
            url = f"http://127.0.0.1:{port}/{page}"
            png = out / ((page.strip("/").replace("/", "_") or "index") + ".png")
            common = [chrome, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                      "--virtual-time-budget=15000", f"--window-size={args.width},{args.height}"]
            subprocess.run(common + [f"--screenshot={png}", url], check=True, capture_output=True, timeout=120)
            dom = subprocess.run(common + ["--dump-dom", url], check=True, capture_output=True, text=True,
                                 timeout=120).stdout
            n_math = len(re.findall(r"<mjx-container", dom))
            left = [m.start() for m in re.finditer(r"\\\(|\\\[", dom)]  # TeX left untypeset
            title = re.search(r"<title>(.*?)</title>", dom, re.DOTALL)
            found = not (title and title.group(1).strip().startswith("Error response"))
            n_tex = len(left)
            ok = found and n_tex == 0
            bad += not ok
            print(f"{png}  title={title.group(1).strip() if title else '?'!r}  typeset={n_math}  "
                  f"untypeset={n_tex}  {'ok' if ok else 'NOT FOUND' if not found else 'MATH NOT RENDERED'}")
            if left:
                print("    first untypeset:", re.sub(r"<[^>]+>", "", dom[left[0] - 120:left[0] + 120]).replace("\n", " "))
    finally:
        srv.shutdown()
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())

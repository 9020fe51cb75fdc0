"""The documentation that is generated when the site is built, and never stored in the checkout.

What these parts say changes with the files of the checkout rather than with their subject: line counts, which
GPU suite certificate is stale since which commit, which unit test calls which function. A stored copy goes
stale at the next commit, and regenerating it changes a tracked file, so that a certificate made after a docs
build says "with uncommitted changes". So `mkdocs build` / `mkdocs serve` make them in memory
(`docs/mkdocs_hooks.py`: `on_files` adds the pages, `on_page_markdown` fills the marked part of a tracked page),
from the generators of `docs/gen_pages.py`:

* pages: `coverage.md` (spec ID -> status -> implementing functions), `traceability.md` (spec ID -> function ->
  unit tests -> verify rows), `verification/gpu.md` (the state of every GPU suite certificate);
* parts of tracked pages, between `<!-- NAME:begin ... -->` and `<!-- NAME:end -->`: the module table of
  `architecture.md` ("modules") and the GPU suite table of `verification/index.md` ("gpu-suites"); the tracked
  page holds a one-line note there.

`python docs/gen_pages.py --show PAGE` prints one of them (a part: its page, filled).  Generated pages that are
stored, because a test holds each equal to its rendering, are not here: `errata.md` (tests/test_errata.py) and
`papers-numbers.md` (tests/test_papers_numbers.py).
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

DOCS = Path(__file__).resolve().parent

#: page (relative to docs/) -> the generator of docs/gen_pages.py that writes it
PAGES = {
    "coverage.md": "coverage_markdown",
    "traceability.md": "traceability_markdown",
    "verification/gpu.md": "gpu_status_markdown",
}
#: tracked page -> {marker name: the generator of its part}
PARTS = {
    "architecture.md": {"modules": "architecture_modules_markdown"},
    "verification/index.md": {"gpu-suites": "gpu_status_table"},
}


def gen_pages() -> ModuleType:
    """docs/gen_pages.py, loaded once (it is a script beside this file, not a package module)."""
    if "grokclocks_gen_pages" in sys.modules:
        return sys.modules["grokclocks_gen_pages"]
    spec = importlib.util.spec_from_file_location("grokclocks_gen_pages", DOCS / "gen_pages.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def page(name: str) -> str:
    """The Markdown of the generated page `name` (a key of `PAGES`)."""
    return getattr(gen_pages(), PAGES[name])()


def _marker(name: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- {re.escape(name)}:begin[^\n]*-->\n)(.*?)(<!-- {re.escape(name)}:end -->)", re.DOTALL)


def fill(name: str, markdown: str) -> str:
    """`markdown` of the tracked page `name` with each of its generated parts (`PARTS`) filled in.

    Raises ValueError when a marker pair is missing: a part silently not shown would be a page that lies.
    """
    for part, generator in PARTS.get(name, {}).items():
        pattern = _marker(part)
        if not pattern.search(markdown):
            raise ValueError(f"docs/{name}: no '<!-- {part}:begin -->' ... '<!-- {part}:end -->' pair to fill")
        body = getattr(gen_pages(), generator)().strip("\n")
        markdown = pattern.sub(lambda m: m.group(1) + "\n" + body + "\n\n" + m.group(3), markdown, count=1)
    return markdown


def show(name: str) -> str:
    """A generated page, or a tracked page with its parts filled, as the site shows it."""
    name = name.removeprefix("docs/")
    if name in PAGES:
        return page(name)
    if name in PARTS:
        return fill(name, (DOCS / name).read_text())
    raise ValueError(f"{name!r} is not generated at build time (pages: {', '.join(sorted(PAGES))}; pages with "
                     f"generated parts: {', '.join(sorted(PARTS))})")

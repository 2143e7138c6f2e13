"""Write one section of docs/benchmarks.md, leaving the others alone.

Each benchmark owns the text between `<!-- begin NAME -->` and
`<!-- end NAME -->`; running it again replaces just that text.
"""

from __future__ import annotations

import datetime
import platform
import re
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
TITLE = "# nbcli benchmarks\n\nEach section is written by the script named in it; run that command to reproduce it.\n"


def machine() -> str:
    import os

    return (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{datetime.date.today().isoformat()}"
    )


def _pattern(name: str) -> re.Pattern:
    return re.compile(rf"<!-- begin {re.escape(name)} -->\n?(.*?)\n?<!-- end {re.escape(name)} -->", re.S)


def block(name: str, markdown: str) -> str:
    """`markdown` between the markers of section `name`."""
    return f"<!-- begin {name} -->\n{markdown.rstrip()}\n<!-- end {name} -->"


def section(name: str) -> str | None:
    """The text docs/benchmarks.md has in section `name` (None: no such section)."""
    found = _pattern(name).search(DOC.read_text(encoding="utf-8")) if DOC.exists() else None
    return found[1] if found else None


def update_section(name: str, markdown: str, inside: str | None = None) -> Path:
    """Replace section `name` with `markdown`; a new section goes at the end
    of section `inside` (a part of that section that its script can write
    alone), else at the end of the document."""
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else TITLE
    new = block(name, markdown)
    pattern = _pattern(name)
    end = f"<!-- end {inside} -->"
    if pattern.search(text):
        text = pattern.sub(lambda m: new, text)
    elif inside and end in text:
        text = text.replace(end, new + "\n" + end, 1)
    else:
        text = text.rstrip() + "\n\n" + new + "\n"
    DOC.parent.mkdir(parents=True, exist_ok=True)
    DOC.write_text(text, encoding="utf-8")
    return DOC


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)

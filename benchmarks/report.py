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


def update_section(name: str, markdown: str) -> Path:
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else TITLE
    block = f"<!-- begin {name} -->\n{markdown.rstrip()}\n<!-- end {name} -->"
    pattern = re.compile(rf"<!-- begin {re.escape(name)} -->.*?<!-- end {re.escape(name)} -->", re.S)
    if pattern.search(text):
        text = pattern.sub(lambda m: block, text)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    DOC.parent.mkdir(parents=True, exist_ok=True)
    DOC.write_text(text, encoding="utf-8")
    return DOC


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)

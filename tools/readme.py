"""Keep the README's and the user guide's examples real.

Every `$ nbcli ...` line in a ```console block of README.md and then of the
guide's pages (docs/guide/, in GUIDE order: a page may use a model an
earlier one made) is run, in that order, in one scratch folder that links
to sample_corpora/, and the output shown under it is compared with (or,
with --update, replaced by) what it printed.
Outputs containing "..." are elided by hand and only run, not compared;
commands mentioning path/to are illustrations and not run.

Every ```python block is run too, as a script in the same kind of scratch
folder: each line that calls print( ends with `# WHAT IT PRINTS` (one line
per print, in order), and those comments are compared with (or replaced
by) what the script printed; a script that fails, or prints another number
of lines, makes the block differ, with its error or its extra lines.

    python tools/readme.py            # exit 1 and show the differences if any
    python tools/readme.py --update   # rewrite the outputs in README.md
"""

from __future__ import annotations

import difflib
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
GUIDE = [
    "text-classification",
    "evaluation",
    "mail",
    "imap",
    "learning",
    "calibration",
    "daemon",
    "unlabelled",
    "python-api",
    "tables",
    "math",
    "model-file",
    "speed",
    "dask",
    "exit-codes",
    "development",
]
DOCS = [README] + [REPO / "docs" / "guide" / f"{name}.md" for name in GUIDE]
BLOCK = re.compile(r"(```console\n)(.*?)(```)", re.S)
PYTHON = re.compile(r"(```python\n)(.*?)(```)", re.S)
PRINTED = re.compile(r"^(?P<code>.*\bprint\(.*?)(?:  # (?P<shown>.*))?$")
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00")


def normal(text: str) -> list[str]:
    return [STAMP.sub("<time>", line.rstrip()) for line in text.splitlines() if line.strip()]


def run_all(workdir: Path, python_bin: Path) -> dict[Path, tuple[str, str]]:
    """{page: (its text now, the text with every example's output as it
    prints now)}, for every page of DOCS, run in order in one folder."""
    out = {}
    for path in DOCS:
        current = path.read_text(encoding="utf-8")
        out[path] = (current, run_examples(current, workdir, python_bin))
    return out


def run_examples(readme: str, workdir: Path, python_bin: Path) -> str:
    """A page with each runnable example's output replaced by what it
    prints now (trailing blanks stripped)."""
    if not (workdir / "sample_corpora").exists():
        (workdir / "sample_corpora").symlink_to(REPO / "sample_corpora")
    env = dict(os.environ, PATH=f"{python_bin}{os.pathsep}{os.environ['PATH']}", COLUMNS="80", NO_COLOR="1")

    def block(match):
        pieces = re.split(r"(?m)^\$ ", match.group(2))
        out = [pieces[0]]
        for piece in pieces[1:]:
            command, _, shown = piece.partition("\n")
            runnable = command.startswith("nbcli") and "path/to" not in command
            if runnable:
                proc = subprocess.run(
                    ["bash", "-c", command + " 2>&1"], cwd=workdir, env=env, capture_output=True, text=True, timeout=600
                )
                if shown.strip() and "..." not in shown:
                    shown = "".join(line.rstrip() + "\n" for line in proc.stdout.splitlines() if line.strip())
            out.append("$ " + command + "\n" + shown)
        return match.group(1) + "".join(out) + match.group(3)

    return PYTHON.sub(lambda m: python_block(m, workdir, python_bin), BLOCK.sub(block, readme))


def python_block(match, workdir: Path, python_bin: Path) -> str:
    """A ```python block with each print line's comment replaced by the line
    the script printed there (see the module docstring)."""
    code = match.group(2)
    python = python_bin / "python" if (python_bin / "python").exists() else Path(sys.executable)
    proc = subprocess.run(
        [str(python), "-c", code], cwd=workdir, capture_output=True, text=True, timeout=600, env=dict(os.environ)
    )
    printed = proc.stdout.splitlines()
    lines = code.splitlines()
    prints = [i for i, line in enumerate(lines) if PRINTED.match(line)]
    for i, out in zip(prints, printed):
        lines[i] = f"{PRINTED.match(lines[i]).group('code')}  # {out}"
    problems = printed[len(prints) :] if len(printed) > len(prints) else []
    if proc.returncode != 0 or len(printed) < len(prints):
        problems.append(f"exit status {proc.returncode}: {proc.stderr.strip()[-500:]}")
    tail = "".join(f"# NOT SHOWN: {p}\n" for p in problems)
    return match.group(1) + "\n".join(lines) + "\n" + tail + match.group(3)


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        pages = run_all(Path(tmp), Path(sys.executable).parent)
    stale = 0
    for path, (current, fresh) in pages.items():
        if "--update" in sys.argv:
            path.write_text(fresh, encoding="utf-8")
        elif normal(fresh) != normal(current):
            name = str(path.relative_to(REPO))
            sys.stdout.writelines(difflib.unified_diff(normal(current), normal(fresh), name, "now", lineterm="\n"))
            stale = 1
    return stale


if __name__ == "__main__":
    sys.exit(main())

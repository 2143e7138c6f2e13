"""Check the release: build the wheel and the sdist, check them, install the
wheel where the source tree cannot help it, and run it (`make dist-check`).

    python tools/dist_check.py          # what `make dist-check` runs
    python tools/dist_check.py --keep   # leave the temporary folder for a look

Everything happens in a temporary folder (mktemp), outside the source tree:

1. `python -m build` (the standard front end, in its isolated build
   environment) writes the sdist, then builds the wheel from that sdist, so a
   wheel that builds proves the sdist holds what a build needs.
2. `twine check --strict` on both: the long description renders, and the
   metadata has what an index needs.
3. The contents: every module of nbcli/ and the `py.typed` marker in the sdist
   and in the wheel, pyproject.toml and README.md in the sdist and nothing
   else (no tests: see MANIFEST.in), nothing but the package in the wheel; the wheel's metadata (name, version, licence,
   requires-python, description type, classifiers, extras) and its `nbcli`
   command.
4. A fresh virtual environment gets the wheel and its runtime dependencies
   from the index (no extras). From a folder outside the source tree, with
   PYTHONPATH unset: `nbcli --version` (one line, the wheel's version), the
   package is imported from that environment, a train/predict round trip on
   the sample topics (one line per test document, in order, each a known
   label, and byte for byte what the source tree's nbcli predicts with its own
   model), `nbcli serve --help`, and a real daemon on a Unix socket answering
   spamc's PING and a CHECK of a sample spam message with a model trained on
   the sample mail.

Prints one line per step with its seconds; exits 1 with the failing step's
reason. The distribution is called nbcli-bayes (see pyproject.toml); the
command and the package stay nbcli.
"""

from __future__ import annotations

import argparse
import email.parser
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DIST_NAME = "nbcli-bayes"
VERSION_LINE = re.compile(r"nbcli (?P<version>\S+) \(model format \d+, Python \d+\.\d+\.\S+\)")
EXTRAS = {"plot", "dask", "test"}


class Failed(Exception):
    """A check that did not pass: its one-line reason."""


def sh(args, cwd: Path, env: dict | None = None, input: bytes | None = None, timeout: float = 900) -> str:
    """Run a command; its stdout, or Failed with its stderr."""
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=env, input=input, capture_output=True, timeout=timeout)
    if proc.returncode != 0:
        tail = proc.stderr.decode(errors="replace").strip().splitlines()[-15:]
        raise Failed(f"{' '.join(map(str, args))} exited {proc.returncode}:\n  " + "\n  ".join(tail))
    return proc.stdout.decode()


def check(condition: bool, reason: str) -> None:
    if not condition:
        raise Failed(reason)


def package_files() -> set[str]:
    """The files of the nbcli package in the source tree, as paths like
    nbcli/cli/main.py: every module and the py.typed marker."""
    files = {p for p in (REPO / "nbcli").rglob("*.py") if "__pycache__" not in p.parts}
    return {p.relative_to(REPO).as_posix() for p in files} | {"nbcli/py.typed"}


def build(out: Path) -> tuple[Path, Path]:
    sh([sys.executable, "-m", "build", "--outdir", out, REPO], cwd=out.parent)
    sdists, wheels = sorted(out.glob("*.tar.gz")), sorted(out.glob("*.whl"))
    check(len(sdists) == 1 and len(wheels) == 1, f"python -m build wrote {[p.name for p in out.iterdir()]}")
    return sdists[0], wheels[0]


def check_sdist(sdist: Path, version: str) -> None:
    top = f"{DIST_NAME.replace('-', '_')}-{version}"
    check(sdist.name == f"{top}.tar.gz", f"the sdist is {sdist.name}, not {top}.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {m.name.removeprefix(top + "/") for m in tar.getmembers() if m.isfile()}
    missing = sorted((package_files() | {"pyproject.toml", "README.md", "PKG-INFO"}) - names)
    check(not missing, f"the sdist lacks {missing}")
    top_files = {"PKG-INFO", "README.md", "pyproject.toml", "setup.cfg", "MANIFEST.in"}
    strays = sorted(n for n in names - top_files if not n.startswith(("nbcli/", "nbcli_bayes.egg-info/")))
    check(not strays, f"the sdist holds files a build does not need: {strays[:5]}")


def check_wheel(wheel: Path, version: str) -> None:
    stem = f"{DIST_NAME.replace('-', '_')}-{version}"
    check(wheel.name == f"{stem}-py3-none-any.whl", f"the wheel is {wheel.name}, not a pure {stem} wheel")
    with zipfile.ZipFile(wheel) as whl:
        names = set(whl.namelist())
        metadata = email.parser.Parser().parsestr(whl.read(f"{stem}.dist-info/METADATA").decode())
        entry_points = whl.read(f"{stem}.dist-info/entry_points.txt").decode()
    missing = sorted(package_files() - names)
    check(not missing, f"the wheel lacks {missing}")
    strays = sorted(n for n in names if not n.startswith(("nbcli/", f"{stem}.dist-info/")))
    check(not strays, f"the wheel holds files outside the package: {strays[:5]}")
    expected = {
        "Name": DIST_NAME,
        "Version": version,
        "Requires-Python": ">=3.11",
        "License-Expression": "MIT",
        "Description-Content-Type": "text/markdown",
    }
    for field, value in expected.items():
        check(metadata.get(field) == value, f"the wheel's METADATA has {field}: {metadata.get(field)!r}, not {value!r}")
    check(len(metadata.get_all("Classifier") or []) >= 5, "the wheel's METADATA has too few classifiers")
    check(set(metadata.get_all("Provides-Extra") or []) == EXTRAS, "the wheel's extras are not plot, dask, test")
    check("# nbcli" in metadata.get_payload(), "the wheel's long description is not the README")
    check(re.search(r"(?m)^nbcli = nbcli\.cli\.main:main$", entry_points) is not None, "the wheel has no nbcli command")


def install(wheel: Path, venv: Path) -> Path:
    """A fresh environment with the wheel and its runtime dependencies; its bin."""
    sh([sys.executable, "-m", "venv", venv], cwd=venv.parent)
    sh([venv / "bin" / "python", "-m", "pip", "install", "--quiet", wheel], cwd=venv.parent)
    return venv / "bin"


def outside_env(bin_: Path) -> dict:
    """The environment of a user of the installed wheel: its bin first on
    PATH, no PYTHONPATH, no virtual environment of ours active."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = f"{bin_}{os.pathsep}{env.get('PATH', '')}"
    return env


def check_version(bin_: Path, work: Path, env: dict, version: str) -> str:
    line = sh([bin_ / "nbcli", "--version"], cwd=work, env=env)
    match = VERSION_LINE.fullmatch(line.rstrip("\n"))
    check(match is not None and line.count("\n") == 1, f"nbcli --version printed {line!r}")
    check(match["version"] == version, f"nbcli --version says {match['version']}, the wheel is {version}")
    where = sh([bin_ / "python", "-c", "import nbcli; print(nbcli.__file__)"], cwd=work, env=env).strip()
    check(Path(where).is_relative_to(bin_.parent), f"the installed nbcli imports nbcli from {where}")
    return line.strip()


def round_trip(bin_: Path, work: Path, env: dict) -> int:
    """Train and predict on the sample topics with the installed nbcli; the
    number of documents predicted."""
    topics = REPO / "sample_corpora" / "topics"
    rows = [json.loads(line) for line in (topics / "test.jsonl").read_text(encoding="utf-8").splitlines() if line]
    labels = {json.loads(line)["label"] for line in (topics / "train.jsonl").read_text(encoding="utf-8").splitlines()}
    sh([bin_ / "nbcli", "train", topics / "train.jsonl", "-o", work / "topics.nb", "-q"], cwd=work, env=env)
    out = sh([bin_ / "nbcli", "predict", work / "topics.nb", topics / "test.jsonl"], cwd=work, env=env)
    lines = out.splitlines()
    check(len(lines) == len(rows), f"predict printed {len(lines)} lines for {len(rows)} documents")
    for line, row in zip(lines, rows):
        fields = line.split("\t")
        check(len(fields) == 3 and fields[0] == row["id"], f"predict's line for {row['id']} is {line!r}")
        check(fields[1] in labels, f"predict's label {fields[1]!r} is not one of the training labels {sorted(labels)}")
    # The source tree's nbcli, with the model the wheel's nbcli wrote: the same predictions.
    ours = sh([sys.executable, "-m", "nbcli", "predict", work / "topics.nb", topics / "test.jsonl"], cwd=REPO)
    check(ours == out, "the installed nbcli and the source tree's predict differently with the same model")
    return len(lines)


def serve(bin_: Path, work: Path, env: dict) -> str:
    """`nbcli serve --help`, then a real daemon: PING and CHECK over its socket."""
    help_text = sh([bin_ / "nbcli", "serve", "--help"], cwd=work, env=env)
    check(help_text.startswith("Usage: nbcli serve") and "Example:" in help_text, "nbcli serve --help: no usage")
    mail = REPO / "sample_corpora" / "mail"
    sh([bin_ / "nbcli", "train", mail / "train", "-o", work / "mail.nb", "-q"], cwd=work, env=env)
    path = work / "spamd.sock"
    args = ["serve", work / "mail.nb", "--socket", path, "--workers", "1", "-q"]
    daemon = subprocess.Popen([str(bin_ / "nbcli"), *map(str, args)], cwd=work, env=env, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not path.exists():
            if daemon.poll() is not None:
                raise Failed(f"nbcli serve exited {daemon.returncode}: {daemon.stderr.read().decode().strip()}")
            check(time.monotonic() < deadline, "nbcli serve did not open its socket in 60 s")
            time.sleep(0.1)
        pong = spamd(path, b"PING SPAMC/1.5\r\n\r\n")
        check(re.match(rb"SPAMD/1\.\d 0 PONG\r\n", pong) is not None, f"PING was answered {pong!r}")
        message = (mail / "test" / "spam" / "0001.eml").read_bytes()
        answer = spamd(path, b"CHECK SPAMC/1.5\r\nContent-length: %d\r\n\r\n" % len(message) + message)
        check(re.match(rb"SPAMD/1\.\d 0 EX_OK\r\nSpam: True ;", answer) is not None, f"CHECK of a spam: {answer!r}")
        return answer.split(b"\r\n")[1].decode()
    finally:
        daemon.terminate()
        try:
            daemon.wait(timeout=30)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
        daemon.stderr.close()


def spamd(path: Path, request: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(30)
        conn.connect(str(path))
        conn.sendall(request)
        conn.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    keep = parser.parse_args().keep
    sys.path.insert(0, str(REPO))
    from nbcli import __version__ as version

    tmp = Path(tempfile.mkdtemp(prefix="nbcli-dist-check-")).resolve()
    check(not tmp.is_relative_to(REPO), f"the temporary folder {tmp} is inside the source tree")
    (tmp / "work").mkdir()
    started = time.monotonic()

    def step(what: str, since: float, detail: str = "") -> float:
        now = time.monotonic()
        print(f"dist-check: {what:<44} {now - since:6.1f} s{'  ' + detail if detail else ''}", flush=True)
        return now

    try:
        t = started
        sdist, wheel = build(tmp / "dist")
        t = step("python -m build (sdist, wheel from it)", t, f"{sdist.name}, {wheel.name}")
        sh([sys.executable, "-m", "twine", "check", "--strict", sdist, wheel], cwd=tmp)
        t = step("twine check --strict", t)
        check_sdist(sdist, version)
        check_wheel(wheel, version)
        t = step("contents and metadata", t, f"{len(package_files())} package files in both")
        bin_ = install(wheel, tmp / "venv")
        t = step("fresh venv + pip install the wheel", t, str(tmp / "venv"))
        env, work = outside_env(bin_), tmp / "work"
        t = step("nbcli --version", t, check_version(bin_, work, env, version))
        t = step("train + predict sample_corpora/topics", t, f"{round_trip(bin_, work, env)} lines, known labels")
        t = step("nbcli serve --help, PING, CHECK", t, serve(bin_, work, env))
    except (Failed, subprocess.TimeoutExpired, OSError) as exc:
        print(f"dist-check: FAILED: {exc}", file=sys.stderr)
        return 1
    finally:
        if keep:
            print(f"dist-check: kept {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"dist-check: passed in {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

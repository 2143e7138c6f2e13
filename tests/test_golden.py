"""Golden outputs: what the commands print on the sample corpora, recorded.

Issue 13 (the "one house" refactor) must not change any command's output
by a byte. These files were recorded after the hardening of issue 12,
before that refactor; a change of output that is meant (a new key, a fixed
bug) is recorded again, on purpose, with

    NBCLI_GOLDEN_UPDATE=1 .venv/bin/python -m pytest tests/test_golden.py

and the diff of tests/golden/ is then part of the change, to be read.

Commands run in a scratch folder that links to sample_corpora/, with
relative paths, so the ids and model names in the outputs do not depend on
where the checkout is; the one varying value, the training time in `info`,
is blanked.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from conftest import REPO

GOLDEN = REPO / "tests" / "golden"
UPDATE = os.environ.get("NBCLI_GOLDEN_UPDATE") == "1"
_STAMP = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d")


_WORKDIR: list = []  # the scratch folder, set by the fixture


def _nbcli(*args: str, stdin: bytes | None = None) -> bytes:
    proc = subprocess.run(
        [sys.executable, "-m", "nbcli", *args],
        cwd=_WORKDIR[0],
        input=stdin,
        capture_output=True,
        timeout=300,
        env=dict(os.environ, PYTHONIOENCODING="utf-8"),
    )
    assert proc.returncode in (0, 1), proc.stderr.decode(errors="replace")
    return proc.stdout


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("golden")
    (folder / "sample_corpora").symlink_to(REPO / "sample_corpora")
    _WORKDIR[:] = [folder]
    _nbcli("train", "sample_corpora/mail/train", "-o", "mail.nb", "-q", "-j", "1")
    _nbcli("train", "sample_corpora/topics/train.jsonl", "--ngrams", "2", "-o", "topics.nb", "-q", "-j", "1")
    return {"mail": "mail.nb", "topics": "topics.nb"}


CASES = {
    "predict-mail.jsonl": lambda m: _nbcli(
        "predict", m["mail"], "sample_corpora/mail/test", "--json", "--explain", "3", "-j", "1"
    ),
    "predict-mail.tsv": lambda m: _nbcli(
        "predict", m["mail"], "sample_corpora/mail/test", "sample_corpora/mail/inbox.mbox", "-j", "1"
    ),
    "predict-topics.jsonl": lambda m: _nbcli(
        "predict", m["topics"], "sample_corpora/topics/test.jsonl", "--json", "-j", "1"
    ),
    "eval-mail.json": lambda m: _nbcli(
        "eval", m["mail"], "sample_corpora/mail/test", "--json", "--target-fpr", "0.01", "-j", "1"
    ),
    "eval-mail.txt": lambda m: _nbcli("eval", m["mail"], "sample_corpora/mail/test", "-j", "1"),
    "eval-topics.json": lambda m: _nbcli("eval", m["topics"], "sample_corpora/topics/test.jsonl", "--json", "-j", "1"),
    "eval-cv-mail.json": lambda m: _nbcli("eval", "--cv", "3", "sample_corpora/mail/train", "--json", "-j", "1"),
    "filter-inbox.mbox": lambda m: _nbcli(
        "filter", m["mail"], "sample_corpora/mail/inbox.mbox", "--explain", "4", "-j", "1"
    ),
    "filter-one.eml": lambda m: _nbcli(
        "filter", m["mail"], stdin=(REPO / "sample_corpora/mail/test/spam/0004.eml").read_bytes()
    ),
    "info-mail.json": lambda m: _STAMP.sub(b"<time>", _nbcli("info", m["mail"], "--json", "--top", "8")),
    "info-topics.txt": lambda m: _STAMP.sub(b"<time>", _nbcli("info", m["topics"], "--top", "5")),
    "tokens-mail.txt": lambda m: _nbcli(
        "tokens",
        "sample_corpora/mail/test/spam/0004.eml",
        "sample_corpora/mail/test/ham/0003.eml",
        "sample_corpora/mail/inbox.mbox",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_output_is_what_was_recorded(models, name):
    got = CASES[name](models)
    path = GOLDEN / name
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_bytes(got)
    assert path.exists(), f"no recording of {name}: run with NBCLI_GOLDEN_UPDATE=1"
    want = path.read_bytes()
    if got != want:
        for k, (a, b) in enumerate(zip(got.splitlines(), want.splitlines()), 1):
            assert a == b, f"{name}, line {k} differs"
        assert got == want, f"{name}: {len(got.splitlines())} lines against {len(want.splitlines())} recorded"
    if name.endswith(".json") or name.endswith(".jsonl"):
        for line in got.splitlines():
            json.loads(line)  # still valid JSON lines

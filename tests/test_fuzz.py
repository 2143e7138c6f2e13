"""The fuzz harness (issue 12, "How it is checked") on a small seeded sample:
mutated real messages through the real `nbcli predict` and `nbcli filter`,
checked for tracebacks, hangs, exit status, one header per message,
byte-exact passthrough and count in = count out. `make fuzz` runs the same
on 2,000 messages (tools/fuzz.py); the harness is tests/fuzzing.py."""

from __future__ import annotations

import subprocess
import sys

import pytest

import fuzzing
from fuzzing import REPO, check_filter_output, message_starts

REAL = b"From a@b.example Mon Jan  1 00:00:00 2024\n"


def nbcli_command() -> list[str]:
    exe = REPO / ".venv" / "bin" / "nbcli"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "nbcli"]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "mail.nb"
    subprocess.run(
        [*nbcli_command(), "train", str(REPO / "sample_corpora" / "mail" / "train"), "-o", str(path), "-q"],
        check=True,
        timeout=120,
    )
    return path


# -- the harness's own rules, so that a fuzz failure means a defect in nbcli


def test_mbox_rule_cuts_only_at_a_from_line_after_a_blank_line():
    body_line = REAL + b"Subject: a\n\nhello\nFrom here on\nbye\n"
    assert message_starts(body_line) == [0]
    after_text = REAL + b"Subject: a\n\nhi\n" + REAL + b"Subject: b\n\nx\n"
    assert message_starts(after_text) == [0]  # not after a blank line
    two = REAL + b"Subject: a\n\nhi\n\n" + REAL + b"Subject: b\n\nx\n"
    assert message_starts(two) == [0, len(REAL + b"Subject: a\n\nhi\n\n")]
    crlf = REAL + b"Subject: a\r\n\r\nhi\r\n\r\n" + REAL
    assert len(message_starts(crlf)) == 2
    quoted = REAL + b"Subject: a\n\nhi\n\n>From a@b.example Mon Jan  1 00:00:00 2024\n"
    assert len(message_starts(quoted)) == 1
    not_from_line = REAL + b"\n\nFrom here on, all is well\n"
    assert len(message_starts(not_from_line)) == 1
    assert message_starts(b"From here on\n\n" + REAL) == [0]  # not an mbox: one message
    assert message_starts(b"Subject: x\n\n\n" + REAL) == [0]
    assert message_starts(b"") == []


def test_filter_output_check_finds_a_header_in_the_body_and_a_missing_one():
    two = REAL + b"Subject: a\n\nhi\nFrom here on\n\n" + REAL + b"Subject: b\n\nx\n"
    good = (
        REAL
        + b"X-NB-Class: ham; p=0.0000\nSubject: a\n\nhi\nFrom here on\n\n"
        + REAL
        + b"X-NB-Class: spam; p=1.0000\nSubject: b\n\nx\n"
    )
    assert check_filter_output(two, good) == ([b"ham", b"spam"], None)
    in_body = good.replace(b"From here on\n", b"From here on\nX-NB-Class: ham; p=0.0000\n")
    assert check_filter_output(two, in_body)[1] == 0
    missing = good.replace(b"X-NB-Class: spam; p=1.0000\n", b"")
    assert check_filter_output(two, missing) == ([b"ham", None], None)
    assert check_filter_output(two, good + b"x")[1] == 2
    plain = b"Subject: a\r\n\r\nhi\r\n"
    assert check_filter_output(plain, b"X-NB-Class: ham; p=0.0000\r\n" + plain) == ([b"ham"], None)


def test_mutations_are_seeded():
    seeds = fuzzing.sample_messages()
    assert [c.data for c in fuzzing.make_cases(seeds, 20, 7, 1 << 16)] == [
        c.data for c in fuzzing.make_cases(seeds, 20, 7, 1 << 16)
    ]


# -- the sample run


def test_fuzzed_messages_through_predict_and_filter(model, tmp_path):
    """The issue's stalling constructs at 256 KB, and 80 mutated sample
    messages (seeded, up to 128 KB): any failure names its kind and a
    reproducer under the test's tmp_path."""
    cases = fuzzing.adversarial_cases(1 << 18) + fuzzing.make_cases(
        fuzzing.sample_messages(), 80, 12, max_bytes=1 << 17
    )
    harness = fuzzing.Harness(
        nbcli_command(), model, tmp_path / "work", tmp_path / "findings", timeout=20, batch=40, single_every=8
    )
    report = harness.run(cases)
    if report.failures:
        pytest.fail(
            fuzzing.summary(report) + "".join(f"\n{f.kind}: {f.detail} {f.reproducer}" for f in report.failures),
            pytrace=False,
        )


# A stand-in for nbcli with the defects the harness must catch: it cuts an
# mbox at every "\nFrom " (issue 12, defect 3), writes a traceback for
# "<script>" and hangs on "HANG".
FAKE_NBCLI = r"""
import json, sys, time
args = sys.argv[1:]
paths = [a for a in args[1:] if not a.startswith("-")][1:]  # after MODEL
datas = [open(p, "rb").read() for p in paths] or [sys.stdin.buffer.read()]
if any(b"<script>" in d for d in datas):
    sys.exit("Traceback (most recent call last):\n  boom\nValueError: x")
if any(b"HANG" in d for d in datas):
    time.sleep(60)
def parts(d):
    if not d.startswith(b"From "):
        return [d]
    out = d.split(b"\nFrom ")
    return [out[0] + b"\n"] + [b"From " + p + b"\n" for p in out[1:-1]] + ([b"From " + out[-1]] if len(out) > 1 else [])
if args[0] == "predict":
    for p, d in zip(paths, datas):
        for n, _ in enumerate(parts(d), 1):
            print(json.dumps({"id": f"{p}:{n}"}))
else:
    for m in parts(datas[0]):
        at = m.find(b"\n") + 1 if m.startswith(b"From ") else 0
        sys.stdout.buffer.write(m[:at] + b"X-NB-Class: ham; p=0.0000\n" + m[at:])
    sys.exit(1 if "--exit-codes" in args else 0)
"""


def test_the_harness_catches_wrong_cuts_tracebacks_and_hangs(tmp_path):
    fake = tmp_path / "fake_nbcli.py"
    fake.write_text(FAKE_NBCLI)
    msg = b"Subject: a\n\nhello\n"
    cases = [
        fuzzing.Case("plain", "t", [], msg),
        fuzzing.Case("body-from", "t", [], REAL + b"Subject: a\n\nhi\nFrom here on\nbye\n"),
        fuzzing.Case("script", "t", [], b"Subject: s\n\n<script>\n"),
        fuzzing.Case("hang", "t", [], b"Subject: s\n\nHANG\n"),
    ]
    harness = fuzzing.Harness(
        [sys.executable, str(fake)],
        "model.nb",
        tmp_path / "work",
        tmp_path / "findings",
        timeout=3,
        slow_floor=1,
        single_every=1,
        batch=10,
    )
    report = harness.run(cases)
    kinds = {(f.kind, f.case) for f in report.failures}
    assert ("slow", "hang") in kinds
    assert ("traceback", "script") in kinds
    assert ("filter-bytes", "body-from") in kinds  # a header written into the body
    assert ("predict-count", "body-from") in kinds
    assert not any(f.case == "plain" for f in report.failures)
    assert (tmp_path / "findings" / "filter-bytes-body-from.mbox").exists()

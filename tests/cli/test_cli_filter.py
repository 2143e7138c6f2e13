"""`nbcli filter`: pass-through with a verdict header, split, exit codes."""

import mailbox
import os
import re

import numpy as np
import pytest

from nbcli.spam import filtering

from conftest import SAMPLES, run, run_process
from mailfixtures import MESSAGES, mbox_of

ALL = [MESSAGES[k] for k in sorted(MESSAGES)]
OUR_LINE = re.compile(rb"X-NB-Class: [^\r\n]*\r?\n")


@pytest.fixture(scope="module")
def spam_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "mail.nb"
    assert run(["train", SAMPLES / "mail" / "train", "-o", path, "-q"]).exit_code == 0
    return path


def strip_ours(data: bytes) -> bytes:
    return OUR_LINE.sub(b"", data)


def test_mbox_bytes_are_preserved_exactly(tmp_path, spam_model):
    original = mbox_of(ALL + [b"Subject: 8-bit \xe9\xff and no final newline\n\nbody \x80\x81"])
    assert not original.endswith(b"\n")
    (tmp_path / "in.mbox").write_bytes(original)
    result = run(["filter", spam_model, tmp_path / "in.mbox"])
    assert result.exit_code == 0, result.stderr
    out = result.stdout_bytes
    assert len(OUR_LINE.findall(out)) == len(ALL) + 1
    assert strip_ours(out) == original
    # the header sits right after each From_ line
    for entry in re.split(rb"(?m)^(?=From )", out)[1:]:
        assert re.match(rb"From [^\n]*\nX-NB-Class: (spam|ham|unsure); p=[01]\.\d{4}; model=[0-9a-f]{6}\r?\n", entry)
    # stdin works the same
    assert run(["filter", spam_model], input=original).stdout_bytes == out


def test_single_messages_and_crlf(spam_model):
    for raw in ALL:
        out = run(["filter", spam_model, "-"], input=raw).stdout_bytes
        assert strip_ours(out) == raw
        line = OUR_LINE.match(out).group()
        assert line.endswith(b"\r\n") == raw.startswith(b"Return-Path: <eve")  # the CRLF message gets CRLF


def test_an_earlier_header_is_replaced_not_stacked(spam_model):
    raw = (
        b"From: a@example.com\nX-NB-Class: ham; p=0.0000\n  old continuation\nSubject: s\nx-nb-class: "
        b"spam\n\nbody\nX-NB-Class: in the body stays\n"
    )
    out = run(["filter", spam_model], input=raw).stdout_bytes
    assert out.count(b"X-NB-Class") == 2  # ours, and the body line
    assert out.startswith(b"From: a@example.com\nX-NB-Class: ")
    assert b"old continuation" not in out and b"x-nb-class: spam" not in out
    assert out.endswith(b"\n\nbody\nX-NB-Class: in the body stays\n")


def test_split_writes_one_mbox_per_verdict(tmp_path, spam_model):
    ham = (SAMPLES / "mail" / "test" / "ham" / "0001.eml").read_bytes()
    spam = (SAMPLES / "mail" / "test" / "spam" / "0001.eml").read_bytes()
    (tmp_path / "in.mbox").write_bytes(mbox_of([ham, spam, ham]))
    result = run(["filter", spam_model, tmp_path / "in.mbox", "--split", tmp_path / "out"])
    assert result.exit_code == 0 and result.stdout_bytes == b""
    boxes = {p.name: mailbox.mbox(str(p)) for p in (tmp_path / "out").iterdir()}
    assert sorted(boxes) == ["ham.mbox", "spam.mbox"]
    assert len(boxes["ham.mbox"]) == 2 and len(boxes["spam.mbox"]) == 1
    assert all(m["X-NB-Class"].startswith("spam") for m in boxes["spam.mbox"])
    # a single message (no From_ line) becomes a proper mbox entry, appended
    run(["filter", spam_model, "--split", tmp_path / "out"], input=spam)
    assert len(mailbox.mbox(str(tmp_path / "out" / "spam.mbox"))) == 2


def test_exit_codes_for_each_verdict(tmp_path, spam_model):
    ham = (SAMPLES / "mail" / "test" / "ham" / "0001.eml").read_bytes()
    spam = (SAMPLES / "mail" / "test" / "spam" / "0001.eml").read_bytes()
    assert run(["filter", spam_model, "--exit-codes"], input=spam).exit_code == 0
    assert run(["filter", spam_model, "--exit-codes"], input=ham).exit_code == 1
    vague = b"Subject: hello\n\nhello\n"
    unsure = run(["filter", spam_model, "--exit-codes", "--spam-cutoff", "1", "--ham-cutoff", "0"], input=vague)
    assert unsure.exit_code == 2 and b"X-NB-Class: unsure; p=" in unsure.stdout_bytes
    (tmp_path / "broken.nb").write_bytes(b"\x80\x04garbage")
    error = run(["filter", tmp_path / "broken.nb", "--exit-codes"], input=spam)
    assert error.exit_code == 3
    assert error.stdout_bytes == spam  # failed open: passed through unchanged
    assert error.stderr.startswith("nbcli: error: ") and error.stderr.endswith("passing messages through unchanged\n")
    assert error.stderr.count("\n") == 1
    # without --exit-codes a failure is status 1, still passing mail through
    plain = run(["filter", tmp_path / "missing.nb"], input=spam)
    assert plain.exit_code == 1 and plain.stdout_bytes == spam


def test_exit_codes_in_a_real_process(spam_model):
    spam = (SAMPLES / "mail" / "test" / "spam" / "0002.eml").read_bytes()
    proc = run_process(["filter", "--exit-codes", spam_model], input=spam)
    assert proc.returncode == 0 and strip_ours(proc.stdout) == spam and proc.stderr == b""


def test_a_message_that_cannot_be_classified_passes_through_and_the_run_goes_on():
    class Picky:
        classes = ["ham", "spam"]

        def score(self, docs, kinds, explain=0):
            if any(b"POISON" in d for d in docs):
                raise ValueError("cannot read this one")
            return np.log(np.tile([0.999, 0.001], (len(docs), 1)))

    messages = [b"Subject: a\n\nfine\n", b"Subject: b\n\nPOISON\n", b"Subject: c\n\nfine too\n", b""]
    written, warnings = [], []
    seen = filtering.run(
        iter(messages), Picky(), filtering.Verdicts(Picky.classes), lambda v, m: written.append(m), warnings.append
    )
    assert seen == ["ham", "error", "ham", "error"]
    assert written[1] == messages[1] and written[3] == b""
    assert written[0].startswith(b"X-NB-Class: ham; p=0.0010\n")
    assert "message 2: cannot read this one; passed through unchanged" in warnings[0]


def test_usage_errors(tmp_path, spam_model):
    result = run(["filter", spam_model, "--ham-cutoff", "0.9", "--spam-cutoff", "0.5"], input=b"x")
    assert result.exit_code == 2 and "is above --spam-cutoff" in result.stderr
    result = run(["filter", spam_model, tmp_path / "nope.mbox"])
    assert result.exit_code == 1 and result.stderr == (
        f"nbcli: error: {tmp_path / 'nope.mbox'}: no such file or folder; give a message, an mbox, a folder or a "
        "Maildir, or - for stdin\n"
    )


@pytest.mark.parametrize("where", ["stdout", "split"])
def test_explain_fails_open_too(tmp_path, where):
    """With --explain and a model that cannot be used, every message was
    lost (an internal error before the first was written) and the exit
    status said ham under --exit-codes."""
    (tmp_path / "broken.nb").write_bytes(b"garbage")
    inbox = (SAMPLES / "mail" / "inbox.mbox").read_bytes()
    spam = (SAMPLES / "mail" / "test" / "spam" / "0001.eml").read_bytes()
    for model in (tmp_path / "broken.nb", tmp_path / "missing.nb"):
        out = ["--split", tmp_path / "out"] if where == "split" else []
        result = run(["filter", model, "--explain", "2", *out, "-"], input=inbox)
        said = result.stderr.splitlines()
        assert result.exit_code == 1 and said[0].endswith("passing messages through unchanged"), result.stderr
        if where == "split":  # kept, every one, under its verdict
            assert said[1:] == [f"nbcli: filed 6 messages: error 6 ({tmp_path / 'out' / 'error.mbox'})"]
            assert len(mailbox.mbox(str(tmp_path / "out" / "error.mbox"))) == 6 * (1 + (model.name == "missing.nb"))
        else:
            assert result.stdout_bytes == inbox and len(said) == 1
        assert run(["filter", model, "--explain", "2", "--exit-codes"], input=spam).exit_code == 3


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
def test_an_output_that_cannot_be_written_is_an_error_never_ham(spam_model):
    """stdout on a full disk: exit 3 under --exit-codes (it was 1, ham), one line that says what failed."""
    import subprocess
    import sys

    spam = (SAMPLES / "mail" / "test" / "spam" / "0001.eml").read_bytes()
    for codes, status in ((["--exit-codes"], 3), ([], 1)):
        with open("/dev/full", "wb") as full:
            proc = subprocess.run(
                [sys.executable, "-m", "nbcli", "filter", *codes, str(spam_model)],
                input=spam,
                stdout=full,
                stderr=subprocess.PIPE,
                timeout=60,
            )
        assert proc.returncode == status
        assert proc.stderr == b"nbcli: error: cannot write the output: No space left on device; make room (or fix " + (
            b"where stdout goes) and filter again\n"
        )


def test_a_usage_error_under_exit_codes_is_an_error_never_unsure(spam_model):
    """filter --exit-codes speaks bogofilter's codes, where 2 is unsure: a
    typo in a procmail recipe's options said "unsure" of every message."""
    spam = (SAMPLES / "mail" / "test" / "spam" / "0001.eml").read_bytes()
    for args in (["--bogus"], ["--spam-cutoff", "0.1", "--ham-cutoff", "0.9"]):
        assert run(["filter", "--exit-codes", spam_model, *args], input=spam).exit_code == 3
        assert run(["filter", spam_model, *args], input=spam).exit_code == 2  # without it, a usage error as ever

"""How mail streams are cut into messages (issue 12, defect 3 and friction).

The rule (see nbcli/text/sources.py): a message starts at a "From " line that is
at the start of the stream or follows a blank line AND looks like a From_
line (sender and date); everything else stays in the message it is in.
"""

import os
import subprocess
import sys
import time
import tracemalloc

import pytest

from nbcli.text.mbox import is_from_line, mbox_entries
from nbcli.text.raw_messages import read_messages
from nbcli.text.sources import ReadOptions, documents_in

from conftest import SAMPLES, run

FROM_ = b"From sender@example.org Mon Jan  1 00:00:00 2024\n"
ONE = FROM_ + (
    b"Subject: one\n\nFirst body.\n\nFrom here on, this line is body text.\n>From quoted, mboxo\n>>From quoted, "
    b"mboxrd\n\n"
)
TWO = (
    FROM_
    + b"Subject: two\n\nSecond body.\nFrom sender@example.org Mon Jan  1 00:00:00 2024\nnot after a blank line\n\n"
)
THREE = b"From MAILER-DAEMON Tue Mar  3 10:00:00 2026\nSubject: three\n\nno final newline"
BOX = ONE + TWO + THREE


def entries(data: bytes, chunk: int) -> list[bytes]:
    it = iter([data[i : i + chunk] for i in range(chunk, len(data), chunk)])
    return list(mbox_entries(lambda: next(it, b""), data[:chunk]))


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 6, 7, 13, 64, 1 << 20])
def test_cut_only_at_from_lines_after_a_blank_line_byte_exact(chunk):
    got = entries(BOX, chunk)
    assert got == [ONE, TWO, THREE]  # whatever the reads return
    assert b"".join(got) == BOX
    # a forced mbox reading: what comes before the first From_ line is an entry
    assert entries(b"\n" + BOX, chunk) == [b"\n", ONE, TWO, THREE]
    assert entries(b"text\n\n" + BOX, chunk) == [b"text\n\n", ONE, TWO, THREE]


def test_crlf_mbox_is_cut_at_crlf_blank_lines():
    crlf = BOX.replace(b"\n", b"\r\n")
    for chunk in (1, 4, 1 << 20):
        got = entries(crlf, chunk)
        assert got == [e.replace(b"\n", b"\r\n") for e in (ONE, TWO, THREE)]
        assert b"".join(got) == crlf


def test_from_line_shapes():
    good = [
        b"From sender@host Mon Jan  1 00:00:00 2024",
        b"From MAILER-DAEMON Fri Jul  8 12:08:34 2011",
        b"From - Tue Mar  3 10:00:00 2026",
        b'From "a b"@example.org Wed Dec 31 23:59:59 +0000 2003',
        b"From xxxx@yyyyyyy.fr Wed Aug  2 00:39:12 MET DST 1995",
        b"From  Mon Jan  1 00:00:00 2024",  # no sender
        b"From user@host Mon Jan  1 00:00 2024\r\n",
    ]
    bad = [
        b"from sender@host Mon Jan  1 00:00:00 2024",
        b"From here on, this is text.",
        b"From Monday on we start at 9",
        b"From: a@b",
        b"From a@b Mon Jan",
        b">From a@b Mon Jan  1 00:00:00 2024",
    ]
    assert all(is_from_line(line) for line in good)
    assert not any(is_from_line(line) for line in bad)


def test_the_issue_case_predict_filter_and_split_agree(tmp_path):
    """A body line "From here on..." after a blank line: two messages, not
    three, in predict, filter and --split."""
    box = tmp_path / "in.mbox"
    box.write_bytes(BOX[: len(ONE) + len(TWO)])
    model = tmp_path / "m.nb"
    assert run(["train", SAMPLES / "mail" / "train", "-o", model, "-q"]).exit_code == 0
    predicted = run(["predict", model, box]).stdout.splitlines()
    assert [line.split("\t")[0] for line in predicted] == [f"{box}:1", f"{box}:2"]
    out = run(["filter", model, box]).stdout_bytes
    assert out.count(b"X-NB-Class:") == 2
    assert b"\n\nFrom here on, this line is body text.\n" in out  # no header put into the body
    run(["filter", model, box, "--split", tmp_path / "sorted"])
    filed = [m for p in (tmp_path / "sorted").iterdir() for m in read_messages(str(p))]
    assert len(filed) == 2 and all(m.count(b"X-NB-Class:") == 1 for m in filed)
    assert any(b"\n\nFrom here on, this line is body text.\n" in m for m in filed)  # head and tail filed together


def test_a_file_with_one_message_is_identified_by_its_path(tmp_path):
    single = tmp_path / "0001.eml"
    single.write_bytes(ONE)  # starts with a From_ line, as SpamAssassin's files do
    several = tmp_path / "box.mbox"
    several.write_bytes(BOX)
    for opts in (ReadOptions(), ReadOptions(max_doc_bytes=64)):  # read whole, and streamed
        assert [d.id for d in documents_in(str(single), opts)[0]()] == [str(single)]
        assert [d.id for d in documents_in(str(several), opts)[0]()] == [f"{several}:{i}" for i in (1, 2, 3)]


def test_cutting_is_linear_in_adversarial_input():
    """Many candidate lines that are not From_ lines, and long lines after
    blank lines: time grows with the input, not its square (a hang guard)."""
    n = 200_000
    nasty = FROM_ + b"\n" + b"\nFrom here on\n" * n + (b"\nFrom " + b"x" * 5000 + b"\n") * 200
    for chunk in (1 << 16, 1 << 20):
        start = time.perf_counter()
        got = entries(nasty, chunk)
        assert time.perf_counter() - start < 10 and got == [nasty]
    many = (FROM_ + b"Subject: s\n\nb\n\n") * n
    start = time.perf_counter()
    assert len(entries(many, 1 << 16)) == n
    assert time.perf_counter() - start < 10


def test_a_long_stream_is_cut_in_bounded_memory():
    """64 MB of 1 KB messages, read 64 KB at a time: the cutter holds about
    a message plus a read, never the stream."""
    message = FROM_ + b"Subject: s\n\n" + b"x" * 960 + b"\n\n"
    chunk = message * 64
    reads = iter(range(1000))

    def read():
        return chunk if next(reads, None) is not None else b""

    tracemalloc.start()
    try:
        count = sum(1 for _ in mbox_entries(read))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert count == 64_000
    assert peak < 4 << 20, peak


def test_read_messages_of_a_crlf_mbox_file(tmp_path):
    path = tmp_path / "crlf.mbox"
    path.write_bytes(BOX.replace(b"\n", b"\r\n"))
    assert len(list(read_messages(str(path)))) == 3
    assert b"".join(read_messages(str(path))) == path.read_bytes()


def test_filter_on_a_pipe_writes_each_message_once_it_is_complete(tmp_path):
    """A long-lived stream: the first message comes out as soon as the next
    From_ line arrives, while stdin is still open."""
    model = tmp_path / "m.nb"
    assert run(["train", SAMPLES / "mail" / "train", "-o", model, "-q"]).exit_code == 0
    proc = subprocess.Popen(
        [sys.executable, "-m", "nbcli", "filter", str(model)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        proc.stdin.write(ONE + FROM_)
        proc.stdin.flush()
        os.set_blocking(proc.stdout.fileno(), False)
        got, deadline = b"", time.monotonic() + 60
        while not got.endswith(b"mboxrd\n\n") and time.monotonic() < deadline:
            piece = proc.stdout.read()
            got += piece or b""
            time.sleep(0.05)
        assert got.startswith(FROM_ + b"X-NB-Class: ") and got.endswith(b">>From quoted, mboxrd\n\n"), got
        assert proc.poll() is None  # still running: stdin is open
        proc.stdin.write(b"Subject: two\n\nsecond\n")
        proc.stdin.close()
        os.set_blocking(proc.stdout.fileno(), True)
        rest = proc.stdout.read()
        assert proc.wait(timeout=60) == 0
        assert rest.startswith(FROM_ + b"X-NB-Class: ") and rest.endswith(b"\n\nsecond\n")
    finally:
        proc.kill()
        proc.wait()


def test_filter_with_workers_on_a_quiet_pipe_hands_back_every_message(tmp_path):
    """With a worker pool (-j 2), results held for messages already sent to
    the workers come out when the input goes quiet, not only once more
    input (or its end) arrives."""
    model = tmp_path / "m.nb"
    assert run(["train", SAMPLES / "mail" / "train", "-o", model, "-q"]).exit_code == 0
    n = 300
    stream = b"".join(FROM_ + b"Subject: number %d\n\nbody of message %d\n\n" % (i, i) for i in range(n)) + FROM_
    proc = subprocess.Popen(
        [sys.executable, "-m", "nbcli", "filter", str(model), "-j", "2"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        proc.stdin.write(stream)
        proc.stdin.flush()
        os.set_blocking(proc.stdout.fileno(), False)
        got, deadline = b"", time.monotonic() + 60
        while got.count(b"X-NB-Class: ") < n and time.monotonic() < deadline:
            got += proc.stdout.read() or b""
            time.sleep(0.05)
        assert got.count(b"X-NB-Class: ") == n
        assert proc.poll() is None  # still running: stdin is open
        proc.stdin.write(b"Subject: last\n\nthe end\n")
        proc.stdin.close()
        os.set_blocking(proc.stdout.fileno(), True)
        rest = proc.stdout.read()
        assert proc.wait(timeout=60) == 0
        assert rest.count(b"X-NB-Class: ") == 1 and rest.endswith(b"the end\n")
    finally:
        proc.kill()
        proc.wait()

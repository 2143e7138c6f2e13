"""Damage a reader must not take for a torn tail, files at a journal's path
that are not a journal, and last-seen days no date can hold.

A torn tail (a crash part-way through an append) is a prefix of the last
record: it never holds a complete record after it. A record whose length
runs past the end (a flipped bit in its length field) with good records
after it is corruption, a one-line error naming the journal, and never cut
off by a writer; `nbcli compact --drop-bad-tail` keeps the updates before
it. A FIFO or a device at MODEL.journal is a one-line error for every
reader and writer, never a hang or a read without end. A last-seen day
outside what a date can hold is refused in a journal's record and in a
model file, so that `nbcli dump` never meets one."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import zlib

import numpy as np
import pytest
from test_journal import analysed
from test_journal_checkpoints import checkpointing, learn, records, rolled, without_checkpoints  # noqa: F401
from test_journal_deltas import rewritten_delta
from test_journal_records import STEPS, after_images, journalled, last_update, one_line_error, rewritten  # noqa: F401

from nbcli.errors import ModelFileError
from nbcli.fit import learning
from nbcli.store import journal, journal_updates, modelfile

from conftest import run

pytestmark = pytest.mark.usefixtures("checkpointing")  # small models keep a journal, with checkpoints


def info(path) -> dict:
    result = run(["info", path, "--json"])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def journal_bytes(path: str) -> bytes:
    with open(journal.path_of(path), "rb") as fh:
        return fh.read()


def with_journal(folder: str, path: str, data: bytes, name: str) -> str:
    """A copy of the model file `path` in `folder` with `data` as its journal."""
    copy = os.path.join(folder, name)
    shutil.copyfile(path, copy)
    with open(journal.path_of(copy), "wb") as fh:
        fh.write(data)
    return copy


def flip_length(path: str, at: int) -> None:
    """Flip a bit of the highest byte of the length of the record at byte
    `at` of the journal of `path`: the length runs far past the end."""
    data = bytearray(journal_bytes(path))
    data[at + 11] ^= 1
    with open(journal.path_of(path), "wb") as fh:
        fh.write(data)


# -- a record's length flipped ----------------------------------------------------


@pytest.mark.parametrize("kind", ["multinomial", "bernoulli"])  # read from the last checkpoint; replayed, none
def test_a_length_run_past_the_end_with_good_records_after_it_is_corruption_not_a_torn_tail(kind, tmp_path):
    path = journalled(str(tmp_path), **({"kind": kind} if kind != "multinomial" else {}))
    whole, data = records(path), journal_bytes(path)
    assert len(whole) >= 3 and (kind == "bernoulli") == all(magic == b"NBJR" for magic, _, _ in whole)
    for index in range(len(whole) - 1):  # the last record's: a torn tail (below)
        _, at, _ = whole[index]
        damaged = with_journal(str(tmp_path), path, data, f"d{index}.nb")
        oracle = with_journal(str(tmp_path), path, data[:at], f"o{index}.nb")  # the updates before the damage
        flip_length(damaged, at)
        before = journal_bytes(damaged)
        for command in (["info", damaged, "--json"], ["predict", damaged, "-"], ["compact", damaged]):
            message = one_line_error(run(command, input="apple bread\n"))
            assert f"{journal.path_of(damaged)} is corrupt" in message and "--drop-bad-tail" in message, message
        for mapped in (True, False):
            snapshot = journal.read(damaged, mapped=mapped)
            assert snapshot.problem is not None and not snapshot.torn
        with pytest.raises(ModelFileError, match="is corrupt"):  # a writer refuses: nothing cut off
            learn(damaged, ("learn", 9, "a"), 99)
        assert journal_bytes(damaged) == before
        result = run(["compact", damaged, "--drop-bad-tail"])
        assert result.exit_code == 0, result.stderr
        assert not os.path.exists(journal.path_of(damaged))
        kept, expected = info(damaged), info(oracle)
        assert kept["documents"] == expected["documents"] and kept["model_id"] == expected["model_id"]


def test_the_last_records_length_run_past_the_end_is_still_a_torn_tail(tmp_path):
    path = journalled(str(tmp_path), kind="bernoulli")
    _, at, _ = records(path)[-1]
    oracle = with_journal(str(tmp_path), path, journal_bytes(path)[:at], "oracle.nb")
    flip_length(path, at)
    snapshot = journal.read(path)
    assert snapshot.torn and snapshot.problem is None and snapshot.end == at
    assert info(path)["documents"] == info(oracle)["documents"]
    assert learn(path, ("learn", 9, "a"), 99)  # the next writer cuts the torn tail off
    assert [at2 for _, at2, _ in records(path)][-1] == at


def test_a_writer_that_read_the_journal_before_the_damaged_record_never_cuts_the_records_after_it(tmp_path):
    """A writer reads only what follows the end it read (`journal.read`'s
    since): a record there whose length runs past the end, with good
    records after it, is damage it refuses, not a torn tail to cut off."""
    path = journalled(str(tmp_path), kind="bernoulli")
    with modelfile.locked(path):
        view = modelfile.load_view(path)
    update = learning.learn_update(view, analysed(view, ("learn", 9, "a"), 99))[0]
    end = view.journal_state[1]
    for n, op in enumerate([("learn", 8, "b"), ("learn", 10, "a"), ("learn", 11, "b")], start=len(STEPS)):
        assert learn(path, op, n)  # another writer, meanwhile
    assert [at for _, at, _ in records(path)][-3] == end
    flip_length(path, end)
    before = journal_bytes(path)
    with modelfile.locked(path), pytest.raises(ModelFileError, match="is corrupt"):
        modelfile.append_update(path, update, since=view)
    assert journal_bytes(path) == before


def test_looking_for_good_records_after_a_length_run_past_the_end_stays_linear(tmp_path, monkeypatch):
    """Bytes after a record whose length runs past the end that look like
    heads of records (their magic, a length that fits) but fail their
    checksums: each is not checked over its whole length, or a reader
    would be quadratic in them."""
    path = journalled(str(tmp_path), kind="bernoulli")
    _, at, _ = records(path)[1]
    data = journal_bytes(path)
    rest = 1 << 20
    fake = bytearray(rest)
    for pos in range(0, rest - 16, 16):
        fake[pos : pos + 16] = journal._HEAD.pack(b"NBJR", rest - pos - 16 - 8, 0)
    head = journal._HEAD.pack(b"NBJR", 1 << 40, 0)
    with open(journal.path_of(path), "wb") as fh:
        fh.write(data[:at] + head + bytes(fake))
    checked = []

    class Counting:
        @staticmethod
        def crc32(data, value=0):
            checked.append(len(data))
            return zlib.crc32(data, value)

    monkeypatch.setattr(journal, "zlib", Counting)
    snapshot = journal.read(path)
    assert snapshot.torn and snapshot.problem is None and snapshot.end == at
    assert sum(checked) <= 4 * (rest + 16) + os.path.getsize(journal.path_of(path))


def test_a_good_record_after_a_length_run_past_the_end_is_found_behind_heads_that_fail(tmp_path):
    """Bytes that look like a record's head inside the damaged record (a
    checksum that fails) do not hide the good record after them."""
    path = journalled(str(tmp_path), kind="bernoulli")
    whole, data = records(path), journal_bytes(path)
    _, at, n = whole[1]
    body = bytearray(data[at + 16 : at + n])
    body[-40:-24] = journal._HEAD.pack(b"NBJR", 8, 0)  # in its arrays' bytes: a head that fits, a bad checksum
    length = len(body).to_bytes(8, "little")
    record = b"NBJR" + length + zlib.crc32(bytes(body), zlib.crc32(length)).to_bytes(4, "little") + bytes(body)
    with open(journal.path_of(path), "wb") as fh:
        fh.write(data[:at] + record + data[at + n :])
    assert journal.read(path).problem is None
    flip_length(path, at)
    assert "is corrupt" in one_line_error(run(["info", path, "--json"]))


# -- a journal that is not a regular file ---------------------------------------


def _limited() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))  # a read of /dev/zero fails, not the machine


def nbcli(*args, input=b""):
    """nbcli in a process of its own, which may neither hang nor eat the machine's memory."""
    return subprocess.run(
        [sys.executable, "-m", "nbcli", *map(str, args)],
        input=input,
        capture_output=True,
        timeout=30,
        preexec_fn=_limited,
    )


def process_error(result) -> str:
    lines = result.stderr.decode().splitlines()
    assert result.returncode == 1 and len(lines) == 1 and lines[0].startswith("nbcli: error: "), result.stderr
    assert "internal error" not in lines[0]
    return lines[0]


@pytest.mark.parametrize("what", ["fifo", "device"])
def test_a_fifo_or_a_device_at_the_journals_path_is_a_one_line_error_never_a_hang(what, tmp_path):
    path = journalled(str(tmp_path))
    jpath = journal.path_of(path)
    os.unlink(jpath)
    if what == "fifo":
        os.mkfifo(jpath)
    else:
        os.symlink("/dev/zero", jpath)
    words = "is a named pipe" if what == "fifo" else "is a device"
    doc = tmp_path / "doc.txt"
    doc.write_text("apple bread honey\n")
    for args in (
        ["info", path, "--json"],
        ["predict", path, doc],
        ["dump", path],
        ["compact", path],
        ["compact", path, "--drop-bad-tail"],
        ["learn", "-q", path, "--class", "a", doc],
    ):
        message = process_error(nbcli(*args))
        assert f"{jpath} {words}, not a journal" in message, message
    assert os.path.lexists(jpath) and not os.path.isfile(jpath) or what == "device"  # left as it was


def _timeout(signum, frame):
    raise TimeoutError("blocked")


@contextlib.contextmanager
def no_longer_than(seconds: float):
    previous = signal.signal(signal.SIGALRM, _timeout)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_a_writer_refuses_a_fifo_put_at_the_journals_path_after_it_read_it(tmp_path):
    path = journalled(str(tmp_path))
    snapshot = journal.read(path)
    jpath = journal.path_of(path)
    os.unlink(jpath)
    os.mkfifo(jpath)
    with no_longer_than(10), pytest.raises(ModelFileError, match=f"{jpath} is a named pipe, not a journal"):
        journal.append(snapshot, snapshot.base, b"")
    with no_longer_than(10):
        for read in (journal.read, journal.read_records):
            with pytest.raises(ModelFileError, match="is a named pipe"):
                read(path)
        with pytest.raises(ModelFileError, match="is a named pipe"):
            journal.read(path, since=(snapshot.base, snapshot.end))


def test_a_follower_meeting_a_fifo_at_the_journals_path_reads_the_model_again(tmp_path):
    """`nbcli serve`'s worker follows its model's journal (`modelfile.followed`):
    a FIFO put there is damage, which makes it read the model again (and
    keep serving the last good model when that fails), never a hang."""
    path = journalled(str(tmp_path))
    held = modelfile.load_view(path)
    assert learn(path, ("learn", 9, "a"), 99)
    jpath = journal.path_of(path)
    os.unlink(jpath)
    os.mkfifo(jpath)
    with no_longer_than(10):
        assert modelfile.followed(held, path) is None
        with pytest.raises(ModelFileError, match="is a named pipe, not a journal"):
            modelfile.load_view(path)


def test_a_link_to_a_journal_and_a_folder_at_its_path(tmp_path):
    path = journalled(str(tmp_path))
    expected = info(path)["documents"]
    jpath = journal.path_of(path)
    os.rename(jpath, str(tmp_path / "elsewhere"))
    os.symlink(str(tmp_path / "elsewhere"), jpath)
    assert info(path)["documents"] == expected  # a link to a regular file is read
    os.unlink(jpath)
    os.mkdir(jpath)
    assert jpath in one_line_error(run(["info", path, "--json"]))


# -- last-seen days ----------------------------------------------------------------

FIRST_DAY, LAST_DAY = 1 - 719163, 3652059 - 719163  # 0001-01-01 and 9999-12-31, as days since 1970-01-01


def _set_day(day: int, name: str = "last_seen"):
    def change(plain, arrays):
        arrays[name] = np.array(arrays[name], dtype=np.int64)
        arrays[name][0] = day

    return change


@pytest.mark.usefixtures("after_images")
@pytest.mark.parametrize("day", [2**31 - 1, -(2**31), LAST_DAY + 1, FIRST_DAY - 1, 2**40])
@pytest.mark.parametrize("checkpoint", [False, True])
def test_a_record_with_a_day_no_date_holds_is_refused_and_never_compacted(tmp_path, day, checkpoint):
    path = journalled(str(tmp_path))
    whole = records(path)
    index = max(i for i, (magic, _, _) in enumerate(whole) if (magic == b"NBJC") == checkpoint)
    _, at, _ = whole[index]
    if checkpoint:  # --drop-bad-tail reads the updates a checkpoint stands for, or the model file alone where
        # the journal was started anew at it (`journal.roll`: the checkpoint is their one copy)
        oracle = without_checkpoints(path, str(tmp_path), first=0 if rolled(path) and index == 1 else None)
    else:
        oracle = with_journal(str(tmp_path), path, journal_bytes(path)[:at], "oracle.nb")
    rewritten(path, index, _set_day(day))
    for command in (["info", path, "--json"], ["dump", path], ["compact", path]):
        message = one_line_error(run(command))
        assert "m.nb.journal is corrupt" in message and "last_seen" in message, message
    assert os.path.exists(journal.path_of(path))  # never compacted into the model file
    result = run(["compact", path, "--drop-bad-tail"])
    assert result.exit_code == 0, result.stderr
    assert info(path)["model_id"] == info(oracle)["model_id"]
    assert run(["dump", path]).exit_code == 0


@pytest.mark.usefixtures("after_images")
def test_the_first_and_last_days_a_date_holds_are_kept_and_dumped(tmp_path):
    path = journalled(str(tmp_path))
    rewritten(path, last_update(path), _set_day(LAST_DAY))
    rewritten(path, last_update(path) - 1, _set_day(FIRST_DAY))
    assert run(["compact", path]).exit_code == 0
    result = run(["dump", path])
    assert result.exit_code == 0 and '"9999-12-31"' in result.stdout and '"0001-01-01"' in result.stdout


@pytest.mark.parametrize("day", [2**31 - 1, FIRST_DAY - 1])
def test_a_difference_with_a_day_no_date_holds_is_refused(tmp_path, monkeypatch, day):
    monkeypatch.setattr(journal_updates, "DIFFERENCES", True)
    path = journalled(str(tmp_path), kind="bernoulli")

    def change(delta):
        delta.last_seen = np.array(delta.last_seen, dtype=np.int64)
        delta.last_seen[0] = day

    rewritten_delta(path, last_update(path), change)
    for command in (["info", path, "--json"], ["dump", path], ["compact", path]):
        message = one_line_error(run(command))
        assert "m.nb.journal does not fit" in message and "'last_seen' has days outside" in message, message
    assert run(["compact", path, "--drop-bad-tail"]).exit_code == 0
    assert run(["dump", path]).exit_code == 0


@pytest.mark.parametrize("day", [2**31 - 1, LAST_DAY + 1, FIRST_DAY - 1, 2**40])
def test_a_model_file_with_a_day_no_date_holds_is_corrupt(tmp_path, day):
    path = journalled(str(tmp_path))
    assert run(["compact", path]).exit_code == 0
    payload = dict(modelfile.read_payload(path))
    days = np.array(payload["term_last_seen"], dtype=np.int64 if day >= 2**31 else np.int32)
    days[0] = day
    payload["term_last_seen"] = days
    crafted = str(tmp_path / "crafted.nb")
    modelfile.write_payload(payload, crafted)
    for command in (["info", crafted, "--json"], ["dump", crafted], ["predict", crafted, "-"]):
        message = one_line_error(run(command, input="apple\n"))
        assert "crafted.nb is corrupt" in message and "term_last_seen" in message, message


def test_a_model_without_last_seen_days_created_at_the_edge_of_time_dumps(tmp_path):
    """A model from before nbcli kept last-seen days dumps its terms' days as
    its creation day: one at the edge of what a date holds, in a time zone
    that puts it past the edge in UTC, is a date still."""
    path = journalled(str(tmp_path))
    assert run(["compact", path]).exit_code == 0
    for created, dumped in (("9999-12-31T23:59:59-12:00", "9999-12-31"), ("0001-01-01T00:00:00+14:00", "0001-01-01")):
        payload = dict(modelfile.read_payload(path))
        payload.pop("term_last_seen")
        payload["meta"] = {**payload["meta"], "created": created}
        crafted = str(tmp_path / "old.nb")
        modelfile.write_payload(payload, crafted)
        result = run(["dump", crafted])
        assert result.exit_code == 0 and f'"{dumped}"' in result.stdout, result.stderr

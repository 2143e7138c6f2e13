"""A journal's checkpoints (store/journal.py, store/journal_updates.py,
`JournalView.as_checkpoint`): a reader starting at the last checkpoint
reads the model that replaying every update gives, bit for bit; a
follower skips checkpoints; damage before the last checkpoint is never
read, damage in it or after it is an error or a torn tail as for any
record; and a reader decodes at most the last checkpoint and about as
many bytes again."""

from __future__ import annotations

import mmap
import os
import shutil

import numpy as np
import pytest
from hypothesis import given
from test_journal import OPS, PROPERTY, analysed, trained
from test_journal_view import VIEWED, assert_same_scores

from nbcli.errors import ModelFileError, NbcliError
from nbcli.fit import learning
from nbcli.store import journal, journal_updates, modelfile

BASE = [("apple bread cider", "a"), ("dough eagle fjord", "b")]


@pytest.fixture
def checkpointing(monkeypatch):
    monkeypatch.setattr(modelfile, "JOURNAL_MIN_BYTES", 0)  # the small test models keep a journal
    monkeypatch.setattr(modelfile, "COMPACT_FRACTION", 1e9)
    monkeypatch.setattr(journal_updates, "CHECKPOINT_MIN_BYTES", 0)  # due once the records reach half the last one
    monkeypatch.setattr(learning, "_now_text", lambda: "2026-11-26T06:00:00+00:00")
    monkeypatch.setattr(journal_updates, "_marks", {})


def records(path: str) -> list[tuple[bytes, int, int]]:
    """(magic, offset, length) of every record of the journal of `path`."""
    data = open(journal.path_of(path), "rb").read()
    pos, out = data.index(b"\n") + 1, []
    while pos < len(data):
        magic, length, _ = journal._HEAD.unpack_from(data, pos)
        out.append((magic, pos, journal._HEAD.size + length))
        pos += journal._HEAD.size + length
    return out


WRITTEN: dict[str, list[tuple[str, bytes]]] = {}  # model file -> (base, record) of every update `learn` appended


def without_checkpoints(path: str, folder: str, first: int | None = None) -> str:
    """A copy of the model and a journal of the updates alone (the first
    `first` of them), every one `learn` appended since the model file was
    written, whatever the journal still holds of them (a checkpoint starts
    it anew: `journal.roll`), which the reader then replays one by one."""
    copy = os.path.join(folder, "oracle.nb")
    shutil.copyfile(path, copy)
    base = modelfile.read_payload(path)[modelfile.CHECKSUM_KEY]
    kept = [record for bound, record in WRITTEN.get(path, []) if bound == base][:first]
    with open(journal.path_of(copy), "wb") as fh:
        fh.write(journal.header(base) + b"".join(kept))
    return copy


def rolled(path: str) -> tuple[int, int] | None:
    """(where its first record stands in the journal's updates, the update
    records before it) of the journal of `path` if it was started anew at a
    checkpoint (`journal.roll`), else None."""
    line = open(journal.path_of(path), "rb").readline().split()
    return (int(line[3]), int(line[4])) if line[1] == b"2" else None


def learn(path: str, op, n: int) -> bool:
    """One learn or forget through `load_view` and `append_update`, as
    `nbcli learn` does: whether it changed the model."""
    with modelfile.locked(path):
        view = modelfile.load_view(path)
        docs = analysed(view, op, n)
        try:
            update = learning.learn_update(view, docs, forgetting=op[0] == "forget")[0]
        except NbcliError:
            return False
        if update is None:
            return False
        base = view.journal_state[0]
        modelfile.append_update(path, update, since=view)
        WRITTEN.setdefault(path, []).append((base, journal_updates.encoded(update)))
        return True


@pytest.mark.parametrize("kind", list(VIEWED))
@given(ops=OPS)
@PROPERTY
def test_a_journal_with_checkpoints_reads_as_its_updates_replayed(kind, ops, tmp_path_factory, checkpointing):
    """Learns, moves, forgets and a new class (c): after every step the
    model read from the last checkpoint (as a view, and built) is the one
    replaying every update gives, and so is its compaction."""
    folder = str(tmp_path_factory.mktemp("cp"))
    path = os.path.join(folder, "m.nb")
    modelfile.save(trained(BASE, **VIEWED[kind]), path)
    WRITTEN.pop(path, None)
    for n, op in enumerate(ops):
        if not learn(path, op, n):
            continue
        oracle = modelfile.load(without_checkpoints(path, folder))
        assert_same_scores(modelfile.load_view(path), oracle)
        assert_same_scores(modelfile.load(path), oracle)
        updates = len(WRITTEN[path])
        assert modelfile._load(path)[1] == updates  # a checkpoint is not counted as an update
        assert journal.read(path).updates == updates and journal.read_records(path).updates == updates
    oracle = modelfile.load(without_checkpoints(path, folder)) if os.path.exists(journal.path_of(path)) else None
    modelfile.compact(path)
    if oracle is not None:
        assert modelfile.model_id(modelfile.load(path)) == modelfile.model_id(oracle)


def learned_many(path: str, n: int) -> None:
    modelfile.save(trained(BASE), path)
    WRITTEN.pop(path, None)
    for i in range(n):
        assert learn(path, ("learn", i % 12, "ab"[i % 2]), i) or i >= 12


def learned_until(path: str, ending: list[bytes], monkeypatch) -> None:
    """After `learned_many(path, 12)`: more learns (each a move to the other
    class) until the journal's last records are of the kinds `ending`. The
    records after a checkpoint may reach its whole length before the next
    one here: in these small models one record is about half a checkpoint,
    so at the default half no two records ever follow one."""
    monkeypatch.setattr(journal_updates, "CHECKPOINT_TAIL", 1.0)
    for n in range(12, 60):
        if [magic for magic, _, _ in records(path)[-len(ending) :]] == ending:
            return
        assert learn(path, ("learn", n % 12, "ab"[(n + n // 12) % 2]), n)
    raise AssertionError(f"the journal never ended with {ending}")


def test_checkpoints_are_written_when_the_records_after_the_last_reach_half_its_length(tmp_path, checkpointing):
    path = str(tmp_path / "m.nb")
    learned_many(path, 12)
    kinds = [magic for magic, _, _ in records(path)]
    assert kinds[0] == b"NBJR" and b"NBJC" in kinds
    last = max(i for i, k in enumerate(kinds) if k == b"NBJC")
    cp_length = records(path)[last][2]
    after = sum(n for _, _, n in records(path)[last + 1 :])
    assert after < cp_length * journal_updates.CHECKPOINT_TAIL  # else the last record's writer would have added one
    # a reader decodes the last checkpoint and what follows, nothing before it
    snapshot = journal.read(path)
    assert snapshot.starts_with_checkpoint and len(snapshot.bodies) == len(kinds) - last
    assert snapshot.updates == len(WRITTEN[path]) == 12
    # each checkpoint but the first started the journal anew: the update that made it due, then it
    assert rolled(path) is not None and kinds.count(b"NBJC") == 1 and last == 1
    start, before = rolled(path)
    assert before == 12 - len(kinds) + 1  # the updates the checkpoint stands for, but the one before it
    assert snapshot.end == start + os.path.getsize(journal.path_of(path)) - records(path)[0][1]


def test_damage_before_the_last_checkpoint_is_never_read(tmp_path, checkpointing):
    path = str(tmp_path / "m.nb")
    learned_many(path, 12)
    before = modelfile.load(path)
    first = records(path)[0]
    with open(journal.path_of(path), "r+b") as fh:  # a bit flipped in the first update's body
        fh.seek(first[1] + first[2] - 3)
        byte = fh.read(1)
        fh.seek(-1, os.SEEK_CUR)
        fh.write(bytes([byte[0] ^ 0xFF]))
    assert modelfile.model_id(modelfile.load(path)) == modelfile.model_id(before)


def _flip(path: str, at: int) -> None:
    with open(journal.path_of(path), "r+b") as fh:
        fh.seek(at)
        byte = fh.read(1)
        fh.seek(-1, os.SEEK_CUR)
        fh.write(bytes([byte[0] ^ 0xFF]))


def test_damage_in_a_journals_checkpoint_or_after_it_and_what_compact_keeps(tmp_path, checkpointing, monkeypatch):
    """A journal started anew at its checkpoint holds no update from before
    it: damage in the checkpoint leaves the model file alone as the last
    good state (the hint says so: 0 updates kept), damage in a record after
    it keeps the checkpoint and the records between, counted as the updates
    they stand for."""
    path = str(tmp_path / "m.nb")
    learned_many(path, 12)
    learned_until(path, [b"NBJC", b"NBJR", b"NBJR"], monkeypatch)  # two records after the checkpoint
    assert rolled(path) is not None
    data = open(journal.path_of(path), "rb").read()
    all_records = records(path)
    _, at, length = all_records[1]  # the checkpoint, after the update that made it due
    _flip(path, at + length - 3)
    with pytest.raises(ModelFileError, match=r"m\.nb\.journal is corrupt .*fails its checksum"):
        modelfile.load(path)
    with pytest.raises(ModelFileError) as caught:
        modelfile.load_view(path)
    assert "keeps the 0 update(s) before it" in caught.value.hint
    alone = modelfile.model_id(modelfile.load(without_checkpoints(path, str(tmp_path), first=0)))
    keep = str(tmp_path / "keep.nb")  # the same, to damage after the checkpoint instead
    shutil.copyfile(path, keep)
    with open(journal.path_of(keep), "wb") as fh:
        fh.write(data)
    WRITTEN[keep] = WRITTEN[path]
    assert modelfile.compact(path, drop_bad_tail=True)[0] == 0
    assert modelfile.model_id(modelfile.load(path)) == alone
    _flip(keep, all_records[-2][1] + all_records[-2][2] - 3)  # the record before the last: damage, not a torn tail
    good = len(WRITTEN[keep]) - 2
    with pytest.raises(ModelFileError) as caught:
        modelfile.load_view(keep)
    assert f"keeps the {good} update(s) before it" in caught.value.hint
    oracle = modelfile.model_id(modelfile.load(without_checkpoints(keep, str(tmp_path), first=good)))
    assert modelfile.compact(keep, drop_bad_tail=True)[0] == good
    assert modelfile.model_id(modelfile.load(keep)) == oracle


def test_a_torn_checkpoint_is_ignored_and_cut_off_by_the_next_writer(tmp_path, checkpointing):
    path = str(tmp_path / "m.nb")
    modelfile.save(trained(BASE), path)
    assert learn(path, ("learn", 0, "a"), 0)
    kinds = records(path)
    assert [k for k, _, _ in kinds] == [b"NBJR", b"NBJC"]  # the first update's records outweigh no checkpoint
    state = modelfile.load(path)
    _, at, n = kinds[1]
    with open(journal.path_of(path), "r+b") as fh:
        fh.truncate(at + n // 2)  # kill -9 part-way through the checkpoint
    assert modelfile.model_id(modelfile.load(path)) == modelfile.model_id(state)
    assert modelfile.model_id(modelfile.load_view(path)) == modelfile.model_id(state)
    assert learn(path, ("learn", 1, "b"), 1)
    assert [k for k, _, _ in records(path)][:2] == [b"NBJR", b"NBJR"]  # the torn bytes were cut off


def test_a_follower_reads_on_across_a_journal_started_anew_and_from_its_checkpoint_when_behind(tmp_path, checkpointing):
    """The daemon's worker follows the journal from the end it has. A
    checkpoint stands for updates it has, and is skipped; a journal started
    anew at the update after its end (`journal.roll`) is read on from that
    update; one started anew past its end lays the new journal over the
    model file's classifier it holds, as a fresh reader would."""
    path = str(tmp_path / "m.nb")
    modelfile.save(trained(BASE), path)
    WRITTEN.pop(path, None)
    assert learn(path, ("learn", 0, "a"), 0)
    held = behind = modelfile.load_view(path)
    read_on = 0
    for i in range(1, 16):
        end = held.journal_state[1]
        assert learn(path, ("learn", i % 12, "ab"[(i + i // 12) % 2]), i)
        followed = modelfile.followed(held, path)
        assert followed is not None and followed.journal_state[1] == journal.read(path).end
        assert_same_scores(followed, modelfile.load(path))
        read_on += rolled(path) is not None and rolled(path)[0] == end  # started anew at the update after `end`
        held = followed
    assert read_on >= 2
    assert np.array_equal(modelfile.followed(held, path).log_proba(["apple bread"]), held.log_proba(["apple bread"]))
    # left behind a roll: the new journal laid over the model file's classifier it holds, the file not read again
    assert rolled(path)[0] > behind.journal_state[1]
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(modelfile, "read_payload", lambda *a, **k: pytest.fail("read the model file again"))
        caught_up = modelfile.followed(behind, path)
    assert caught_up is not None and caught_up.base is behind.base
    assert caught_up.journal_state[1] == journal.read(path).end
    assert_same_scores(caught_up, modelfile.load(path))
    assert modelfile.model_id(caught_up) == modelfile.model_id(modelfile.load(path))


def test_a_journal_with_checkpoints_is_compacted_at_four_times_the_plain_limit(tmp_path, checkpointing):
    """A reader of a journal with checkpoints decodes its last checkpoint and
    what follows, so the journal may grow further before the whole model is
    written again; but not once the checkpoint alone outweighs the limit."""
    path, base = str(tmp_path / "m.nb"), "sum64:0"
    due = journal_updates.compaction_due
    assert not due(path, base, 1000, 1000, checkpointed=False) and due(path, base, 1001, 1000, checkpointed=False)
    assert not due(path, base, 4000, 1000, checkpointed=True) and due(path, base, 4001, 1000, checkpointed=True)
    journal_updates.wrote(path, base, 100, 900)
    assert not due(path, base, 1500, 1000, checkpointed=True)
    journal_updates.wrote(path, base, 100, 1001)  # the last checkpoint alone passes the limit
    assert due(path, base, 1500, 1000, checkpointed=True)
    assert not due(path, "sum64:1", 1500, 1000, checkpointed=True)  # another base: that checkpoint is not its


def test_a_reader_takes_a_checkpoints_totals_as_it_carries_them(tmp_path, checkpointing, monkeypatch):
    """A checkpoint carries its view's totals, number of terms and term
    sum: a reader starting at it neither searches the base for its terms
    nor sums the base's table, and has what replaying every update gives;
    totals that are not what nbcli writes are a one-line error."""
    from nbcli.nb.overlay import JournalView
    from nbcli.store import journal_records

    path = str(tmp_path / "m.nb")
    learned_many(path, 12)
    learned_until(path, [b"NBJC"], monkeypatch)  # the journal ends with a checkpoint: nothing after it to search
    oracle = modelfile.load_view(without_checkpoints(path, str(tmp_path)))
    oracle_id = modelfile.model_id(oracle)

    def refused(*args, **kwargs):
        raise AssertionError("searched the base for the checkpoint's terms")

    with monkeypatch.context() as patched:
        patched.setattr(JournalView, "_where", refused)
        patched.setattr(JournalView, "_base_table", refused)  # the base's totals: a pass over its table
        view = modelfile.load_view(path)
        assert view.totals.units == oracle.totals.units and view.totals.integral == oracle.totals.integral
        assert view.n_terms == oracle.n_terms
        assert modelfile.model_id(view) == oracle_id
    assert_same_scores(view, modelfile.load(without_checkpoints(path, str(tmp_path))))
    _, at, length = records(path)[-1]
    data = open(journal.path_of(path), "rb").read()
    plain, arrays = journal.decode(memoryview(data)[at + journal._HEAD.size : at + length])
    assert journal_records.update_of(memoryview(data)[at + journal._HEAD.size : at + length]).totals is not None
    for totals, message in (
        ({**plain["totals"], "units": [-1] * len(plain["totals"]["units"])}, "has bad totals"),
        ({**plain["totals"], "integral": not plain["totals"]["integral"]}, "totals are not this model's"),
        ({**plain["totals"], "terms": 10**9}, "totals are not this model's"),
    ):
        with open(journal.path_of(path), "wb") as fh:
            fh.write(data[:at] + journal.encode({**plain, "totals": totals}, arrays, checkpoint=True))
        with pytest.raises(ModelFileError, match=message) as caught:
            modelfile.load_view(path)
        assert "\n" not in caught.value.message


def _buffer_of(array):
    """The bytearray (or mapping) an array decoded from a journal points into, if any."""
    base = array
    while base is not None and not isinstance(base, (bytearray, memoryview, mmap.mmap)):
        base = getattr(base, "base", None)
    return base.obj if isinstance(base, memoryview) else base


def test_a_reader_keeps_the_checkpoints_bytes_apart_from_the_records_after_it(tmp_path, checkpointing, monkeypatch):
    """Read from its last checkpoint, a journal's checkpoint is in a buffer
    of its own (the view's layer points into it), so that the records after
    it are freed once decoded; damage after it names its byte in the file,
    and a record cut short at the end is a torn tail, as in a whole read."""
    path = str(tmp_path / "m.nb")
    learned_many(path, 12)
    learned_until(path, [b"NBJC", b"NBJR", b"NBJR"], monkeypatch)  # two records after the last one
    kinds = records(path)
    last = max(i for i, (magic, _, _) in enumerate(kinds) if magic == b"NBJC")
    _, at, length = kinds[last]
    head = open(journal.path_of(path), "rb").read().index(b"\n") + 1
    for mapped in (False, True):  # read into memory (a daemon's copy), or mapped from the file
        snapshot = journal.read(path, mapped=mapped)
        assert snapshot.starts_with_checkpoint and len(snapshot.bodies) == len(kinds) - last
        assert snapshot.bodies[0].obj is not snapshot.bodies[1].obj  # two buffers
        assert isinstance(snapshot.bodies[0].obj, mmap.mmap) == mapped
        assert isinstance(snapshot.bodies[1].obj, bytearray)
        if mapped:  # the checkpoint alone, from the page its offset lies in
            assert len(snapshot.bodies[0].obj) == at % mmap.ALLOCATIONGRANULARITY + length
        else:  # the header, a gap, the checkpoint
            assert len(snapshot.bodies[0].obj) - (head + length) in range(8)
        assert snapshot.end - snapshot.origin == os.path.getsize(journal.path_of(path))
        # its arrays (the widest first, after a text padded to 8 bytes: `journal.encode`) are decoded in
        # place, aligned where the checkpoint is: in memory, placed 8-aligned; mapped, if its offset is
        _, arrays = journal.decode(snapshot.bodies[0])
        assert any(a.base is not None for a in arrays.values())
        assert all(a.flags.aligned for a in arrays.values()) or (mapped and at % 8)
    for copy in (True, False):
        view = modelfile.load_view(path, copy=copy)
        buffers = {id(b): b for b in (_buffer_of(layer.top.blob) for layer in view.layers) if b is not None}
        # the checkpoint's texts point into its buffer (or mapping), never into the records after it
        held = [len(b) - (head + length) in range(8) if copy else isinstance(b, mmap.mmap) for b in buffers.values()]
        assert held == [True]
        assert view.layers[0].hashes.flags.aligned and view.layers[0].table("tf").flags.aligned
    data = open(journal.path_of(path), "rb").read()
    _, after, _ = kinds[last + 1]
    damaged = bytearray(data)
    damaged[after + journal._HEAD.size + 2] ^= 0xFF
    with open(journal.path_of(path), "wb") as fh:
        fh.write(damaged)  # not the last record: damage, not a torn tail
    with pytest.raises(ModelFileError, match=f"the update at byte {after} fails its checksum"):
        modelfile.load_view(path)
    with open(journal.path_of(path), "wb") as fh:
        fh.write(data[:-5])  # the last record cut short: a torn tail
    torn = journal.read(path)
    assert torn.torn and torn.problem is None and len(torn.bodies) == len(kinds) - last - 1


def test_a_checkpoint_cut_short_after_its_head_was_found_reads_as_a_torn_tail(tmp_path, checkpointing):
    """The journal cut short between finding the last checkpoint and reading
    it (a compaction, or a writer cutting a torn tail): what is there is read
    in one buffer, and parses as a torn tail, never an internal error."""
    path = str(tmp_path / "m.nb")
    learned_many(path, 12)
    _, at, length = next(r for r in reversed(records(path)) if r[0] == b"NBJC")
    head = open(journal.path_of(path), "rb").read(200).split(b"\n")[0] + b"\n"
    for cut in (at + journal._HEAD.size + length // 2, at + 5):  # shorter each time
        os.truncate(journal.path_of(path), cut)
        with open(journal.path_of(path), "rb") as fh:
            first, rest, gap = journal._read_checkpoint(fh, head, at)
        there = open(journal.path_of(path), "rb").read()[at:]
        assert rest is None and bytes(first) == head + bytes(gap) + there
        snapshot = journal.Snapshot(path, first, at - len(head) - gap, gap=gap)
        assert snapshot.torn and snapshot.problem is None and snapshot.bodies == []


def _read_alike(path: str) -> None:
    """The journal of `path` reads the same with its checkpoint mapped and
    read into memory (`journal.read`'s mapped), and the model through it."""
    mapped, copied = journal.read(path), journal.read(path, mapped=False)
    for name in ("base", "end", "size", "torn", "problem", "updates", "starts_with_checkpoint"):
        assert getattr(mapped, name) == getattr(copied, name), name
    assert [bytes(b) for b in mapped.bodies] == [bytes(b) for b in copied.bodies]
    try:
        through_map = modelfile.load_view(path)
    except ModelFileError as exc:
        with pytest.raises(ModelFileError) as caught:
            modelfile.load_view(path, copy=True)
        assert caught.value.message == exc.message and "\n" not in exc.message
        return
    assert_same_scores(through_map, modelfile.load_view(path, copy=True))


def test_a_damaged_journal_reads_the_same_with_its_checkpoint_mapped_or_in_memory(tmp_path, checkpointing, monkeypatch):
    """Cut short, a byte changed, zeros or another record's bytes appended,
    anywhere, over and after the last checkpoint: the mapped read finds
    what the read into memory finds, bytes, damage and model alike."""
    import random

    path = str(tmp_path / "m.nb")
    learned_many(path, 12)
    learned_until(path, [b"NBJC", b"NBJR", b"NBJR"], monkeypatch)
    data = open(journal.path_of(path), "rb").read()
    _, at, length = next(r for r in reversed(records(path)) if r[0] == b"NBJC")
    rng = random.Random(27)
    for trial in range(60):
        damaged = bytearray(data)
        where = rng.choice([rng.randrange(at, at + length), rng.randrange(at, len(data)), rng.randrange(len(data))])
        how = trial % 4
        if how == 0:
            del damaged[where:]
        elif how == 1:
            damaged[where] ^= 1 << rng.randrange(8)
        elif how == 2:
            damaged += bytes(rng.randrange(1, 4000))
        else:
            damaged += data[at : at + rng.randrange(1, length)]
        with open(journal.path_of(path), "wb") as fh:
            fh.write(damaged)
        _read_alike(path)


def test_a_rolled_journals_header_that_is_not_one_nbcli_writes_is_damage(tmp_path, checkpointing):
    """A journal started anew says where its first record stands and how
    many updates came before it; a header without both as numbers, or
    with a start inside the header itself, is a one-line error."""
    path = str(tmp_path / "m.nb")
    learned_many(path, 12)
    assert rolled(path) is not None
    line, rest = open(journal.path_of(path), "rb").read().split(b"\n", 1)
    base = line.split(b" ")[2]
    for bad in (b" 100000", b" x 3", b" 5 3", b" 100000 3 9", b" -100000 3"):
        with open(journal.path_of(path), "wb") as fh:
            fh.write(b"nbcli-journal 2 " + base + bad + b"\n" + rest)
        with pytest.raises(ModelFileError, match=r"m\.nb\.journal is corrupt \(its header is damaged\)") as caught:
            modelfile.load_view(path)
        assert "\n" not in caught.value.message


def test_a_writer_appends_in_one_open_only_to_the_journal_as_it_was_read(tmp_path, checkpointing):
    """`journal.append_at` (a TELL's append under the lock) writes only where
    the journal is bound to the base and ends where the writer read it to;
    anything else (another base, records or a torn tail after that end, no
    journal) is left to the reading append, which sees what it is."""
    path = str(tmp_path / "m.nb")
    learned_many(path, 3)
    assert rolled(path) is not None  # positions are not byte offsets in the file
    snapshot = journal.read(path)
    base, end = snapshot.base, snapshot.end
    data = open(journal.path_of(path), "rb").read()
    record = journal.encode({"x": 1}, {})
    assert journal.append_at(path, "sum64:0", end, record) is None
    assert journal.append_at(path, base, end - 1, record) is None
    with open(journal.path_of(path), "ab") as fh:
        fh.write(b"NBJR\x01")  # a torn tail after the end
    assert journal.append_at(path, base, end, record) is None
    assert open(journal.path_of(path), "rb").read() == data + b"NBJR\x01"
    os.truncate(journal.path_of(path), len(data))
    assert journal.append_at(path, base, end, record) == (end + len(record), len(data) + len(record))
    assert bytes(journal.read(path, since=(base, end)).bodies[0]) == record[journal._HEAD.size :]
    os.unlink(journal.path_of(path))
    assert journal.append_at(path, base, end, record) is None

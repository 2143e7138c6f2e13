"""A model's journal (store/journal.py, nb/updates.py, modelfile.load/save/compact):
exactness of the model read through it, compaction, torn tails, corruption,
binding to the base file, and what each update writes."""

from __future__ import annotations

import os
import shutil
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbcli.errors import ModelFileError, NbcliError
from nbcli.fit import learning
from nbcli.fit.analysed import analyse_for_learning
from nbcli.fit.training import train
from nbcli.fit.training_options import training_options
from nbcli.store import journal, modelfile
from nbcli.text.sources import Document

WORDS = ["apple", "bread", "cider", "dough", "eagle", "fjord", "grape", "honey", "igloo", "jelly", "kiwi", "lemon"]
POOL = [" ".join(WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(1 + i % 5)) + f" only{i}" for i in range(12)]
BASE = [("apple bread cider", "a"), ("dough eagle fjord", "b"), ("apple grape", "a"), ("honey igloo bread", "b")]
TEST_TEXTS = ["apple bread", "cider cider dough eagle", "jelly kiwi lemon only3", "zebra", "honey honey bread"]
KINDS = {
    "multinomial": {},
    "bernoulli": {"kind": "bernoulli"},
    "complement-tflog-norm": {"kind": "complement", "tf_log": True, "length_norm": True},
    "complement-idf": {"kind": "complement", "idf": True},
    "map-alpha-2": {"estimate": "map", "alpha": 2.0},
}
PROPERTY = settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
OPS = st.lists(
    st.tuples(st.sampled_from(["learn", "learn", "forget"]), st.integers(0, len(POOL) - 1), st.sampled_from("aabc")),
    min_size=1,
    max_size=10,
)


def docs_of(pairs, prefix):
    return [Document(f"{prefix}{i}", label, text, "text") for i, (text, label) in enumerate(pairs)]


def trained(pairs, **fields):
    analyzer_options, options = training_options(**fields)
    return train(docs_of(pairs, "d"), analyzer_options, options)


def assert_same(a, b):
    """The same counts, record, terms, last-seen days, meta (but its time
    stamps), model id and predictions."""
    assert a.classes == b.classes
    for x, y in ((a.vocabulary.hashes, b.vocabulary.hashes), (a.vocabulary.blob, b.vocabulary.blob)):
        assert np.array_equal(x, y)
    assert np.array_equal(a.model.class_count, b.model.class_count)
    assert np.array_equal(a.model.feature_count, b.model.feature_count)
    assert a.model.feature_count.dtype == b.model.feature_count.dtype
    if a.model.doc_freq is not None or b.model.doc_freq is not None:
        assert np.array_equal(a.model.doc_freq, b.model.doc_freq)
    fa, fb = getattr(a.model, "fit_count", None), getattr(b.model, "fit_count", None)
    assert (fa is None) == (fb is None) and (fa is None or np.array_equal(fa, fb))
    assert np.array_equal(a.last_seen, b.last_seen)
    for name, x in a.record.arrays().items():
        assert np.array_equal(x, b.record.arrays()[name]), name
    stamps = ("updated", "nbcli_version")
    assert {k: v for k, v in a.meta.items() if k not in stamps} == {k: v for k, v in b.meta.items() if k not in stamps}
    assert modelfile.model_id(a) == modelfile.model_id(b)
    assert np.array_equal(a.log_proba(TEST_TEXTS), b.log_proba(TEST_TEXTS))


def analysed(classifier, op, n):
    action, i, label = op
    doc = [Document(f"x{n}", label if action == "learn" else None, POOL[i], "text")]
    return analyse_for_learning(classifier.analyzer, doc)  # once: its date is when it is learned


def step(classifier, op, n, docs=None):
    """One learn or forget of `op` on `classifier`: (updated, changed), or None if refused."""
    action = op[0]
    docs = docs if docs is not None else analysed(classifier, op, n)
    try:
        if action == "learn":
            updated, _ = learning.learn(classifier, docs)
            return updated, updated is not classifier
        updated, outcome = learning.forget(classifier, docs)
        return updated, outcome.forgotten > 0
    except NbcliError:
        return None


def run_sequence(folder, fields, ops, fraction, monkeypatch, direct=False):
    """Learn and forget `ops` two ways: in memory, model to model (what
    rewriting the file gave), and through the model file and its journal
    (load, learn, save since=; direct: the Update `learning.learn_update`
    computes without building the model, which must equal the one `learn`
    or `forget` notes array for array, appended by `append_update`).
    Returns (in memory, the file's path)."""
    if direct:
        monkeypatch.setattr(learning, "_now_text", lambda: "2026-11-26T06:00:00+00:00")
    monkeypatch.setattr(modelfile, "COMPACT_FRACTION", fraction)
    monkeypatch.setattr(modelfile, "JOURNAL_MIN_BYTES", 0)  # the small test models keep a journal too
    path = os.path.join(folder, "m.nb")
    memory = trained(BASE, **fields)
    modelfile.save(memory, path)
    for n, op in enumerate(ops):
        with modelfile.locked(path):
            current = modelfile.load(path)
            assert_same(current, memory)
            docs = analysed(current, op, n)
            done = step(current, op, n, docs)
            expected = step(memory, op, n, docs)
            assert (done is None) == (expected is None)
            quick = direct_step(current, op, docs) if direct else None
            assert not direct or (quick is None) == (done is None)
            if done is None:
                continue
            if quick is not None:
                update, _, learned = quick
                assert (update is not None) == done[1]
                if update is not None:
                    assert_same_update(update, done[0].update)
                    assert learned.classes == done[0].classes
                    assert np.array_equal(learned.model.class_count, done[0].model.class_count)
                    assert len(learned.vocabulary) == len(done[0].vocabulary)
                    assert learned.meta == done[0].meta
                    assert learned.calibration is done[0].calibration
                    modelfile.append_update(path, update, since=current)
            elif done[1]:
                modelfile.save(done[0], path, since=current)
            memory = expected[0]
    return memory, path


def direct_step(classifier, op, docs):
    """`learning.learn_update` of `op`: (Update or None, outcome, learned), or None if refused."""
    try:
        return learning.learn_update(classifier, docs, forgetting=op[0] == "forget")
    except NbcliError:
        return None


def assert_same_update(a, b):
    """Two journal Updates (nb/updates.py) equal array for array, dtypes included."""
    assert a.known == b.known and a.meta == b.meta
    assert a.image.classes == b.image.classes and a.image.mail_docs == b.image.mail_docs
    for name in ("class_count", "hashes", "blob", "offsets", "tf", "df", "fit", "last_seen"):
        x, y = getattr(a.image, name), getattr(b.image, name)
        assert (x is None) == (y is None), name
        if x is not None:
            assert x.dtype == y.dtype and np.array_equal(x, y), name
    for name, x in a.image.record.arrays().items():
        y = b.image.record.arrays()[name]
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    for x, y in ((a.removed_digest, b.removed_digest), (a.removed_label, b.removed_label)):
        assert x.dtype == y.dtype and np.array_equal(x, y)
    # the totals before it: carried by an update made from a view alone (checked against the model built
    # before it: tests/store/test_journal_view.py)
    plain_a, plain_b = modelfile.update_record(a)[0], modelfile.update_record(b)[0]
    plain_a.pop("before", None), plain_b.pop("before", None)
    assert plain_a == plain_b


@pytest.mark.parametrize("direct", [False, True], ids=["save-since", "direct"])
@pytest.mark.parametrize("fraction", [1e9, 0.02], ids=["journal-only", "compacting"])
@pytest.mark.parametrize("kind", list(KINDS))
@given(ops=OPS)
@PROPERTY
def test_the_model_read_through_the_journal_is_the_model_learned_in_memory_and_compacts_to_it(
    kind, fraction, direct, ops, monkeypatch
):
    """Learns, moves (the same text in another class), forgets and a class
    new to the model (c), journalled by save(since=) or, direct, by
    `learning.learn_update`'s Update (no model built), which equals the one
    `learn`/`forget` note array for array (`run_sequence`)."""
    with tempfile.TemporaryDirectory() as folder:
        memory, path = run_sequence(folder, KINDS[kind], ops, fraction, monkeypatch, direct)
        assert_same(modelfile.load(path), memory)
        modelfile.compact(path)
        assert not os.path.exists(journal.path_of(path))
        assert_same(modelfile.load(path), memory)


@pytest.mark.parametrize("kind", list(KINDS))
def test_learning_directly_through_the_journal_is_training_on_all_the_documents(kind, tmp_path, monkeypatch):
    later = [(POOL[i], "ab"[i % 2]) for i in range(8)]
    ops = [("learn", i, label) for i, (_, label) in enumerate(later)]
    memory, path = run_sequence(str(tmp_path), KINDS[kind], ops, 1e9, monkeypatch, direct=True)
    assert len(journal.read(path).bodies) == len(later)
    scratch = trained(BASE + later, **KINDS[kind])
    through = modelfile.load(path)
    assert modelfile.model_id(through) == modelfile.model_id(scratch)
    assert np.array_equal(through.log_proba(TEST_TEXTS), scratch.log_proba(TEST_TEXTS))


@pytest.mark.parametrize("kind", list(KINDS))
def test_learning_through_the_journal_is_training_on_all_the_documents(kind, tmp_path, monkeypatch):
    later = [(POOL[i], "ab"[i % 2]) for i in range(8)]
    ops = [("learn", i, label) for i, (_, label) in enumerate(later)]
    memory, path = run_sequence(str(tmp_path), KINDS[kind], ops, 1e9, monkeypatch)
    assert len(journal.read(path).bodies) == len(later)
    scratch = trained(BASE + later, **KINDS[kind])
    through = modelfile.load(path)
    assert modelfile.model_id(through) == modelfile.model_id(scratch)
    assert np.array_equal(through.log_proba(TEST_TEXTS), scratch.log_proba(TEST_TEXTS))
    modelfile.compact(path)
    assert modelfile.model_id(modelfile.load(path)) == modelfile.model_id(scratch)


def test_a_class_learned_then_forgotten_through_the_journal(tmp_path, monkeypatch):
    ops = [("learn", 0, "c"), ("learn", 1, "a"), ("learn", 2, "c"), ("forget", 0, "c"), ("forget", 2, "c")]
    memory, path = run_sequence(str(tmp_path), {}, ops, 1e9, monkeypatch)
    assert modelfile.load(path).classes == ["a", "b"] == memory.classes


@pytest.fixture
def journalled(tmp_path, monkeypatch):
    """A model file with a journal of three learns: (path, the states after 0..3 updates)."""
    ops = [("learn", i, "ab"[i % 2]) for i in range(3)]
    monkeypatch.setattr(modelfile, "COMPACT_FRACTION", 1e9)
    monkeypatch.setattr(modelfile, "JOURNAL_MIN_BYTES", 0)
    path = str(tmp_path / "m.nb")
    modelfile.save(trained(BASE), path)
    states = [modelfile.load(path)]
    for n, op in enumerate(ops):
        current = modelfile.load(path)
        updated, _ = step(current, op, n)
        modelfile.save(updated, path, since=current)
        states.append(updated)
    return path, states


def record_offsets(path) -> list[int]:
    """Where each record of the journal of `path` starts, and its end."""
    snapshot = journal.read(path)
    data = open(journal.path_of(path), "rb").read()
    starts = [data.index(b"\n") + 1]
    for body in snapshot.bodies:
        starts.append(starts[-1] + 16 + len(body))
    return starts


def test_a_torn_tail_is_ignored_by_readers_and_cut_off_by_the_next_writer(journalled):
    path, states = journalled
    jpath = journal.path_of(path)
    offsets = record_offsets(path)
    whole = open(jpath, "rb").read()
    for cut in (offsets[2] + 3, offsets[2] + 16, (offsets[2] + offsets[3]) // 2, offsets[3] - 1):
        with open(jpath, "wb") as fh:
            fh.write(whole[:cut])
        assert_same(modelfile.load(path), states[2])  # the last update, cut short, is not there
    with open(jpath, "wb") as fh:  # a power cut: the record's length is there, its bytes are zeros
        fh.write(whole[: offsets[2]] + bytes(offsets[3] - offsets[2]))
    assert_same(modelfile.load(path), states[2])
    current = modelfile.load(path)
    updated, _ = step(current, ("learn", 9, "a"), 9)
    modelfile.save(updated, path, since=current)
    snapshot = journal.read(path)
    assert len(snapshot.bodies) == 3 and snapshot.end == snapshot.size and not snapshot.torn
    assert_same(modelfile.load(path), updated)


def test_a_corrupt_update_in_the_middle_is_an_error_naming_the_journal_and_compact_can_drop_it(journalled):
    path, states = journalled
    jpath = journal.path_of(path)
    offsets = record_offsets(path)
    data = bytearray(open(jpath, "rb").read())
    data[offsets[1] + 40] ^= 0xFF  # in the second update
    open(jpath, "wb").write(bytes(data))
    with pytest.raises(ModelFileError) as caught:
        modelfile.load(path)
    message = str(caught.value)
    assert jpath in message and "fails its checksum" in message
    assert f"nbcli compact {path} --drop-bad-tail" in caught.value.hint and "1 update(s)" in caught.value.hint
    with pytest.raises(ModelFileError):  # a writer refuses too: nothing is appended after damage
        modelfile.compact(path)
    assert modelfile.compact(path, drop_bad_tail=True)[0] == 1
    assert not os.path.exists(jpath)
    assert_same(modelfile.load(path), states[1])


def test_a_journal_bound_to_another_model_file_is_never_applied(journalled, tmp_path):
    path, states = journalled
    jpath = journal.path_of(path)
    old_journal = open(jpath, "rb").read()
    assert modelfile.compact(path)[0] == 3
    assert_same(modelfile.load(path), states[3])
    # a crash between the compaction's rename and the journal's removal leaves the old journal
    open(jpath, "wb").write(old_journal)
    assert_same(modelfile.load(path), states[3])  # not applied twice
    # the same journal beside another model: ignored too
    other = str(tmp_path / "other.nb")
    modelfile.save(trained(BASE[:3]), other)
    shutil.copyfile(jpath, journal.path_of(other))
    assert_same(modelfile.load(other), trained(BASE[:3]))
    # the next writer replaces a stale journal by its own
    current = modelfile.load(path)
    updated, _ = step(current, ("learn", 9, "a"), 9)
    modelfile.save(updated, path, since=current)
    assert len(journal.read(path).bodies) == 1
    assert_same(modelfile.load(path), updated)


def test_saving_a_whole_model_retires_its_journal_and_its_checksum_is_new(journalled):
    path, states = journalled
    before = modelfile.read_payload(path)["checksum"]
    modelfile.save(states[0], path)  # a full write (prune, train -o) of a state equal to the base
    assert not os.path.exists(journal.path_of(path))
    assert modelfile.read_payload(path)["checksum"] != before  # its journal nonce
    assert_same(modelfile.load(path), states[0])


def test_an_update_made_from_a_stale_model_is_refused(journalled):
    path, states = journalled
    first = modelfile.load(path)
    second = modelfile.load(path)
    updated, _ = step(second, ("learn", 9, "a"), 9)
    modelfile.save(updated, path, since=second)
    updated, _ = step(first, ("learn", 10, "b"), 10)
    with pytest.raises(NbcliError, match="changed while the update was made"):
        modelfile.save(updated, path, since=first)
    assert len(journal.read(path).bodies) == 4


def test_a_learn_appends_its_update_and_never_rewrites_the_model(journalled):
    path, _ = journalled
    before = os.stat(path)
    size = os.path.getsize(journal.path_of(path))
    current = modelfile.load(path)
    updated, _ = step(current, ("learn", 11, "b"), 11)
    modelfile.save(updated, path, since=current)
    after = os.stat(path)
    assert (after.st_ino, after.st_mtime_ns, after.st_size) == (before.st_ino, before.st_mtime_ns, before.st_size)
    grown = os.path.getsize(journal.path_of(path)) - size
    assert 0 < grown < 4096  # the message's terms, not the model


def test_the_journal_is_compacted_once_it_passes_a_quarter_of_the_model(tmp_path, monkeypatch):
    monkeypatch.setattr(modelfile, "JOURNAL_MIN_BYTES", 0)
    path = str(tmp_path / "m.nb")
    modelfile.save(trained(BASE), path)
    model_size = os.path.getsize(path)
    compactions = 0
    for n in range(40):
        current = modelfile.load(path)
        updated, _ = step(current, ("learn", n % len(POOL), "ab"[n % 2]), n)
        if updated is current:
            continue
        inode = os.stat(path).st_ino
        modelfile.save(updated, path, since=current)
        compactions += os.stat(path).st_ino != inode
        size = os.path.getsize(journal.path_of(path)) if os.path.exists(journal.path_of(path)) else 0
        assert size <= max(model_size, os.path.getsize(path)) * modelfile.COMPACT_FRACTION + 4096
        assert_same(modelfile.load(path), updated)
    assert compactions >= 1


def test_a_model_under_the_minimum_size_is_written_whole_and_keeps_no_journal(tmp_path):
    path = str(tmp_path / "m.nb")
    modelfile.save(trained(BASE), path)
    assert os.path.getsize(path) < modelfile.JOURNAL_MIN_BYTES
    inode = os.stat(path).st_ino
    current = modelfile.load(path)
    updated, _ = step(current, ("learn", 3, "a"), 3)
    modelfile.save(updated, path, since=current)
    assert os.stat(path).st_ino != inode and not os.path.exists(journal.path_of(path))
    assert_same(modelfile.load(path), updated)

"""Journal updates written as differences (nb/deltas.py): what they save, that
they read back as exactly the update that was learned (alone, after
after-images an older nbcli wrote, after a change of classes), and that a
crafted or damaged difference is a one-line error naming the journal, after
which `nbcli compact --drop-bad-tail` keeps the updates before it."""

from __future__ import annotations

import os
import zlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_journal import BASE, OPS, POOL, PROPERTY, analysed, assert_same, direct_step, step, trained
from test_journal_checkpoints import checkpointing, learn, records  # noqa: F401 (checkpointing: a fixture)
from test_journal_records import journalled, last_update, one_line_error

from nbcli.errors import NbcliError
from nbcli.fit import learning
from nbcli.fit.analysed import analyse_for_learning
from nbcli.nb.counts import Counts
from nbcli.nb.deltas import TABLES, Delta, delta_of, resolved
from nbcli.nb.updates import replay
from nbcli.store import journal, journal_records, journal_updates, modelfile
from nbcli.store.payload import _plain
from nbcli.text.sources import Document

from conftest import run

pytestmark = pytest.mark.usefixtures("checkpointing", "differences")  # small models keep a journal, with checkpoints


@pytest.fixture
def differences(monkeypatch):
    """Updates written as differences (not yet nbcli's default: store/journal_updates.py, DIFFERENCES)."""
    monkeypatch.setattr(journal_updates, "DIFFERENCES", True)


KINDS = {
    "multinomial": {},
    "bernoulli": {"kind": "bernoulli"},
    "complement-tflog-norm": {"kind": "complement", "tf_log": True, "length_norm": True},
}


def kinds_of(path: str) -> list[str]:
    """Each update record of the journal of `path`: "delta" or "image"."""
    data = open(journal.path_of(path), "rb").read()
    out = []
    for magic, at, n in records(path):
        if magic == b"NBJR":
            plain, _ = journal.decode(data[at + journal._HEAD.size : at + n])
            out.append("delta" if "delta" in plain else "image")
    return out


def test_a_learn_is_written_as_a_difference_a_fraction_of_its_after_image(tmp_path, monkeypatch):
    sizes = {}
    for differences in (True, False):
        monkeypatch.setattr(journal_updates, "DIFFERENCES", differences)
        path = str(tmp_path / f"{differences}.nb")
        # six classes over the same 400 terms: an after-image repeats every class's counts of each term
        modelfile.save(trained([(" ".join(f"w{i}" for i in range(400)), c) for c in "abcdef"]), path)
        with modelfile.locked(path):
            view = modelfile.load_view(path)
            text = " ".join(f"w{i}" for i in range(0, 400, 2)) + " brand new words"
            docs = analyse_for_learning(view.analyzer, [Document("x", "a", text, "text")])
            modelfile.append_update(path, learning.learn_update(view, docs)[0], since=view)
        assert kinds_of(path) == (["delta"] if differences else ["image"])
        sizes[differences] = sum(n for magic, _, n in records(path) if magic == b"NBJR")
    assert sizes[True] * 5 < sizes[False], sizes
    assert modelfile.model_id(modelfile.load(str(tmp_path / "True.nb"))) == modelfile.model_id(
        modelfile.load(str(tmp_path / "False.nb"))
    )


def learned_both_ways(folder: str, fields: dict, ops, monkeypatch, switch) -> tuple:
    """Learn `ops` in memory and through the journal by `learn_update`, each
    update written as a difference or an after-image as switch(n) says.
    Returns (in memory, path)."""
    monkeypatch.setattr(modelfile, "COMPACT_FRACTION", 1e9)
    path = os.path.join(folder, "m.nb")
    memory = trained(BASE, **fields)
    modelfile.save(memory, path)
    for n, op in enumerate(ops):
        monkeypatch.setattr(journal_updates, "DIFFERENCES", switch(n))
        with modelfile.locked(path):
            current = modelfile.load_view(path)
            docs = analysed(current, op, n)
            expected = step(memory, op, n, docs)
            quick = direct_step(current, op, docs)
            assert (quick is None) == (expected is None)
            if quick is None:
                continue
            if quick[0] is not None:
                modelfile.append_update(path, quick[0], since=current)
            memory = expected[0]
    return memory, path


@pytest.mark.parametrize("kind", list(KINDS))
@given(ops=OPS)
@PROPERTY
def test_differences_mixed_with_after_images_read_back_as_the_model_learned_in_memory(kind, ops, monkeypatch):
    """A journal an older nbcli began (after-images) and a newer one goes on
    with, or the reverse, and one where classes come and go in between."""
    import tempfile

    for pattern in (lambda n: n % 2 == 0, lambda n: n % 3 != 1):
        with tempfile.TemporaryDirectory() as folder:
            memory, path = learned_both_ways(folder, KINDS[kind], ops, monkeypatch, pattern)
            assert_same(modelfile.load(path), memory)
            assert modelfile.model_id(modelfile.load_view(path)) == modelfile.model_id(memory)
            modelfile.compact(path)
            assert_same(modelfile.load(path), memory)


SAME_CLASSES = st.lists(  # learns and forgets in the model's classes: every journal of them is read as a view
    st.tuples(st.sampled_from(["learn", "learn", "forget"]), st.integers(0, len(POOL) - 1), st.sampled_from("ab")),
    min_size=1,
    max_size=10,
)


@pytest.mark.parametrize("kind", ["multinomial", "complement-tflog-norm"])
@given(ops=SAME_CLASSES)
@PROPERTY
def test_a_view_through_differences_gives_every_terms_text(kind, ops, monkeypatch):
    """A reader laying differences over its view takes the texts of the terms
    the model had from the view when they are read (`nb.deltas.resolved`,
    texts_later; `nb.overlay.JournalView.plus`): each term's text, as an
    explanation or a learn reads it and as the model whole has it, is the
    model's learned in memory."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        memory, path = learned_both_ways(folder, KINDS[kind], ops, monkeypatch, lambda n: True)
        view = modelfile.load_view(path)
        assert hasattr(view, "plus") or not os.path.exists(path + ".journal")  # (a view, not the model built)
        expected = Counts.of(memory)
        for got in (Counts.of(view), Counts.of_terms(view, expected.hashes)):
            assert np.array_equal(got.hashes, expected.hashes)
            assert np.array_equal(got.offsets, expected.offsets)
            assert bytes(got.blob) == bytes(expected.blob)


def test_a_learn_that_adds_a_class_is_an_after_image_and_the_differences_after_it_resolve(tmp_path, monkeypatch):
    ops = [("learn", 1, "a"), ("learn", 2, "c"), ("learn", 3, "c"), ("forget", 1, "a"), ("learn", 4, "b")]
    memory, path = learned_both_ways(str(tmp_path), {}, ops, monkeypatch, lambda n: True)
    assert kinds_of(path) == ["delta", "image", "delta", "delta", "delta"]
    assert_same(modelfile.load(path), memory)


def same_image(a, b) -> bool:
    """Whether two updates' images are the same, array for array, dtypes included."""
    x, y = a.image, b.image
    for name in ("hashes", "blob", "offsets", "last_seen", "class_count", *TABLES):
        p, q = getattr(x, name), getattr(y, name)
        if (p is None) != (q is None):
            return False
        if p is not None and (np.asarray(p).dtype != np.asarray(q).dtype or not np.array_equal(p, q)):
            return False
    return list(x.classes) == list(y.classes) and x.mail_docs == y.mail_docs


def deltas_resolve_exactly(kind: str, ops) -> int:
    """Learn `ops` in memory; for each update `learn_update` computes, the
    Delta `delta_of` makes of it, resolved against the counts it was made
    from, is that update array for array, dtypes and meta included. Returns
    how many Deltas were made."""
    model, made = trained(BASE, **KINDS[kind]), 0
    for n, op in enumerate(ops):
        docs = analysed(model, op, n)
        quick = direct_step(model, op, docs)
        if quick is None or quick[0] is None:
            continue
        update = quick[0]
        before, meta = update.made_from or (None, None)  # (None: a change of classes, written whole)
        delta = None if before is None else delta_of(update, before, _plain(meta), _plain(update.meta))
        if delta is not None:
            (again,) = resolved([delta], lambda hashes, before=before: before, _plain(meta), replay)
            assert same_image(again, update)
            assert again.meta == _plain(update.meta)
            made += 1
        model = step(model, op, n, docs)[0]
    return made


@pytest.mark.parametrize("kind", list(KINDS))
@given(ops=OPS)
@PROPERTY
def test_every_difference_made_resolves_to_its_update_exactly(kind, ops):
    """What `delta_of` no longer checks before a TELL's reply (nb/deltas.py,
    "Exactness by construction"), over learns and forgets of every event model."""
    deltas_resolve_exactly(kind, ops)


@pytest.mark.parametrize("kind", list(KINDS))
def test_learns_and_forgets_that_keep_the_classes_are_all_made_differences(kind):
    ops = [("learn", 1, "a"), ("learn", 2, "b"), ("forget", 1, "a"), ("learn", 3, "a"), ("forget", 2, "b")]
    assert deltas_resolve_exactly(kind, ops) == 5


def test_a_difference_that_would_not_give_its_update_back_exactly_is_not_made(tmp_path):
    model = trained(BASE, kind="complement", tf_log=True, length_norm=True)
    docs = analysed(model, ("learn", 3, "a"), 0)
    update, _, _ = learning.learn_update(model, docs)
    before, meta = update.made_from
    assert delta_of(update, before, _plain(meta), _plain(update.meta)) is not None
    off = Counts(**{**before.__dict__, "fit": before.fit + 0.1})  # sums that are not whole fixed-point units
    assert delta_of(update, off, _plain(meta), _plain(update.meta)) is None
    assert delta_of(update, before, _plain(meta), {**_plain(update.meta), "n_documents": 1.0}) is not None


def rewritten_delta(path: str, index: int, change) -> None:
    """Difference record `index` of the journal of `path` decoded, changed by
    change(delta) and written again as nbcli writes one, its checksum
    recomputed: a record whose checksum is right but whose content is not
    a difference that fits."""
    data = open(journal.path_of(path), "rb").read()
    magic, at, n = records(path)[index]
    delta = journal_records.update_of(data[at + journal._HEAD.size : at + n])
    assert isinstance(delta, Delta)
    change(delta)
    record = journal.encode(*journal_updates.delta_record(delta))
    with open(journal.path_of(path), "wb") as fh:
        fh.write(data[:at] + record + data[at + n :])


def _steps_below_zero(delta):
    delta.steps["tf"] = delta.steps["tf"] - 1000


def _cells_out_of_range(delta):
    delta.cells["tf"] = np.append(delta.cells["tf"][:-1], delta.cells["tf"][-1] + 10**6)


def _a_term_without_its_text(delta):
    delta.new, delta.blob, delta.offsets = delta.new[:0], delta.blob[:0], delta.offsets[:1]


def _other_classes(delta):
    delta.classes = sorted([*delta.classes, "zz"])
    delta.class_count = np.append(delta.class_count, 1.0)


@pytest.mark.parametrize(
    "change, words",
    [
        (_steps_below_zero, "has values outside"),
        (_cells_out_of_range, "'cells_tf' is out of range"),
        (_a_term_without_its_text, "a difference's term without its text"),
        (_other_classes, "a difference made in other classes than the model's"),
    ],
    ids=["counts-below-zero", "cells-out-of-range", "term-without-text", "other-classes"],
)
def test_a_crafted_difference_is_a_one_line_error_and_compact_keeps_the_updates_before_it(tmp_path, change, words):
    path = journalled(str(tmp_path), kind="bernoulli")  # read by replaying: no checkpoint stands for the records
    assert kinds_of(path) == ["delta", "delta", "delta", "delta", "image", "delta"]  # class c added by the fifth
    bad = last_update(path)
    rewritten_delta(path, bad, change)
    message = one_line_error(run(["predict", path, "-"], input="apple bread\n"))
    assert "m.nb.journal" in message and words in message, message
    result = run(["compact", path, "--drop-bad-tail"])
    assert result.exit_code == 0 and "compacted 5 update(s)" in result.stderr, result.stderr
    assert run(["predict", path, "-"], input="apple bread\n").exit_code == 0


def test_packed_parts_that_would_inflate_past_their_bound_are_refused_before_inflating(tmp_path):
    path = journalled(str(tmp_path), kind="bernoulli")
    bad = last_update(path)
    data = open(journal.path_of(path), "rb").read()
    magic, at, n = records(path)[bad]
    plain, arrays = journal.decode(data[at + journal._HEAD.size : at + n])
    plain = {**plain, "parts": [*plain["parts"][:2], 8 << 20]}  # texts of 8 MB claimed, in a few bytes
    whole = zlib.compress(bytes(sum(plain["parts"])))
    record = journal.encode(plain, {"hashes": np.array(arrays["hashes"]), "packed": np.frombuffer(whole, np.uint8)})
    with open(journal.path_of(path), "wb") as fh:
        fh.write(data[:at] + record + data[at + n :])
    message = one_line_error(run(["predict", path, "-"], input="apple bread\n"))
    assert "m.nb.journal is corrupt" in message and "too long for their bytes" in message, message


WRONG = ["x", "", 10**30, -1, 0, 1e308, None, True, [], {}, [1, "a"], {"a": 1}, 2**63, [0, 0, [], 0, 0]]


@given(
    flips=st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(1, 255)), min_size=1, max_size=4),
    key=st.sampled_from(["", "classes", "known", "class_count", "tables", "meta_set", "sizes", "parts", "mail_docs"]),
    wrong=st.sampled_from(WRONG),
)
@PROPERTY
def test_a_damaged_difference_reads_as_a_model_or_a_one_line_error_never_a_crash(flips, key, wrong):
    """Bytes of a difference's packed parts changed (its checksum right), or
    one of its plain values replaced: every reader gives a model or
    nbcli's one-line error, nothing else."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = journalled(folder, kind="bernoulli")
        data = open(journal.path_of(path), "rb").read()
        magic, at, n = records(path)[last_update(path)]
        plain, arrays = journal.decode(data[at + journal._HEAD.size : at + n])
        whole = bytearray(b"".join(journal.unpacked(arrays["packed"], plain["parts"])))
        for where, bits in flips:
            if whole:
                whole[where % len(whole)] ^= bits
        if key:
            plain = {**plain, key: wrong}
        packed = np.frombuffer(zlib.compress(bytes(whole)), np.uint8)
        record = journal.encode(plain, {"hashes": np.array(arrays["hashes"]), "packed": packed})
        with open(journal.path_of(path), "wb") as fh:
            fh.write(data[:at] + record + data[at + n :])
        for read in (modelfile.load, modelfile.load_view):
            try:
                model = read(path)
            except NbcliError as exc:
                assert "\n" not in exc.message and "journal" in exc.message
            else:
                model.log_proba(["apple bread"])


def test_a_follower_lays_another_writers_differences_over_the_model_it_holds(tmp_path):
    """The daemon's worker follows the journal from where it read it: the
    differences another process appended meanwhile, resolved against the
    view it holds, give the model read afresh."""
    path = journalled(str(tmp_path), kind="multinomial")
    held = modelfile.load_view(path)
    for n, op in enumerate([("learn", 8, "a"), ("learn", 9, "b"), ("forget", 8, "a")], start=len(kinds_of(path))):
        assert learn(path, op, n)
    assert kinds_of(path)[-3:] == ["delta", "delta", "delta"]
    followed = modelfile.followed(held, path)
    assert followed is not None and followed is not held
    assert modelfile.model_id(followed) == modelfile.model_id(modelfile.load(path))
    texts = ["apple bread", POOL[8], POOL[9]]
    assert np.array_equal(followed.log_proba(texts), modelfile.load(path).log_proba(texts))

"""A model read through its journal without building it (nb/overlay.py,
`modelfile.load_view`, `modelfile.followed`): the view scores, explains,
learns and names its model exactly as the model built by replaying the
journal does, bit for bit, for every event model it covers; it follows new
updates (its own, or another writer's read from the journal's tail)
without reading the model file again; and what it does not cover is built."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
from hypothesis import given
from test_journal import OPS, POOL, PROPERTY, TEST_TEXTS, analysed, assert_same_update, trained

from nbcli.errors import NbcliError
from nbcli.fit import learning
from nbcli.fit.analysed import analyse_for_learning
from nbcli.nb import overlay, term_digests
from nbcli.nb.counts import Counts
from nbcli.nb.overlay import JournalView, source_of
from nbcli.nb.smoothing import ExactTotals
from nbcli.store import journal, journal_records, journal_updates, modelfile, payload
from nbcli.text import hashing
from nbcli.text.sources import Document

VIEWED = {
    "multinomial": {},
    "multinomial-smooth-mail-alpha": {"unknown": "smooth", "alpha": 0.0001},
    "complement-tflog-norm": {"kind": "complement", "tf_log": True, "length_norm": True},
    "complement-plain": {"kind": "complement"},
    "map-alpha-2": {"estimate": "map", "alpha": 2.0},
    "m-estimate": {"m_estimate": "3"},
}
BUILT = {
    "bernoulli": {"kind": "bernoulli"},
    "complement-idf": {"kind": "complement", "idf": True},
    "complement-weight-norm": {"kind": "complement", "weight_norm": True},
}
TERMS = hashing.hash_strings(sorted({w for text in POOL + TEST_TEXTS for w in text.split()} | {"nowhere"}))


@pytest.fixture
def journalled(monkeypatch):
    monkeypatch.setattr(modelfile, "JOURNAL_MIN_BYTES", 0)  # the small test models keep a journal
    monkeypatch.setattr(modelfile, "COMPACT_FRACTION", 1e9)
    monkeypatch.setattr(learning, "_now_text", lambda: "2026-11-26T06:00:00+00:00")


def assert_same_scores(view, built):
    """What a user sees of a model: classes, documents, predictions (bit for
    bit), explanations, model id, terms, record, and the counts of any term."""
    assert view.classes == built.classes and view.meta == built.meta
    assert np.array_equal(view.model.class_count, built.model.class_count)
    assert len(view.vocabulary) == len(built.vocabulary)
    assert np.array_equal(view.log_proba(TEST_TEXTS), built.log_proba(TEST_TEXTS))
    ours, theirs = view.score(TEST_TEXTS, explain=4)[1], built.score(TEST_TEXTS, explain=4)[1]
    assert ours == theirs
    assert modelfile.model_id(view) == modelfile.model_id(built)
    for name, x in view.record.arrays().items():
        assert np.array_equal(x, built.record.arrays()[name]), name
    a, b = Counts.of_terms(view, TERMS), Counts.of_terms(built, TERMS)
    for name in ("class_count", "hashes", "blob", "offsets", "tf", "df", "fit", "last_seen"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        assert x is None or (x.dtype == y.dtype and np.array_equal(x, y)), name
    assert a.mail_docs == b.mail_docs


@pytest.mark.parametrize("kind", list(VIEWED) + list(BUILT))
@given(ops=OPS)
@PROPERTY
def test_a_view_scores_learns_and_names_its_model_as_the_model_built_from_the_journal(
    kind, ops, tmp_path_factory, journalled
):
    """Learns, moves, forgets and a new class (c) through `load_view`, each
    update computed from the view (`learning.learn_update`) equal, array for
    array, to the one computed from the built model; after every step the
    view (read afresh, and the one before with the update laid over it:
    `plus`) is the built model as far as a user can tell."""
    fields = {**VIEWED, **BUILT}[kind]
    path = str(tmp_path_factory.mktemp("view") / "m.nb")
    modelfile.save(trained([("apple bread cider", "a"), ("dough eagle fjord", "b")], **fields), path)
    kept_classes = True  # the journal's updates all kept the model file's classes (a view's condition)
    for n, op in enumerate(ops):
        view, built = modelfile.load_view(path), modelfile.load(path)
        docs = analysed(built, op, n)
        try:
            ours = learning.learn_update(view, docs, forgetting=op[0] == "forget")
        except NbcliError as exc:
            with pytest.raises(NbcliError, match=re.escape(exc.message[:20])):
                learning.learn_update(built, docs, forgetting=op[0] == "forget")
            continue
        theirs = learning.learn_update(built, docs, forgetting=op[0] == "forget")
        assert (ours[0] is None) == (theirs[0] is None)
        if ours[0] is None:
            continue
        assert_same_update(ours[0], theirs[0])
        assert len(ours[2].vocabulary) == len(theirs[2].vocabulary)
        state = modelfile.append_update(path, ours[0], since=view)
        followed = modelfile.followed(view, path, own=(ours[0], state))
        now = modelfile.load(path)
        again = modelfile.load_view(path)
        kept_classes &= now.classes == ["a", "b"]
        covered = kind in VIEWED and kept_classes
        # made from a view, the update carries the totals of the model it was made from, as the built
        # model's table has them (what a reader of a run of records moves from: `JournalView.plus`)
        assert (ours[0].before is not None) == (covered and isinstance(view, JournalView))
        if ours[0].before is not None:
            totals, n_terms = ours[0].before
            table = built.model.fit_count if source_of(built.model) == "fit" else built.model.feature_count
            assert totals.units == ExactTotals.of(table, totals.integral).units
            assert n_terms == len(built.vocabulary)
        assert isinstance(again, JournalView) == covered
        assert_same_scores(again, now)
        if covered:  # every term's weights derived once (a daemon's worker): the same scores, to the bit
            again.flatten()
            assert again.flat is not None and len(again.flat) == len(now.vocabulary)
            assert_same_scores(again, now)
        assert followed is not None or not covered
        if followed is not None:  # a view, or a model built from the journal, with the update laid over it
            assert_same_scores(followed, now)
    modelfile.compact(path)
    assert not isinstance(modelfile.load_view(path), JournalView)


def learn(path, text, label, n):
    """`nbcli learn`'s step: under the lock, read as a view, append the update."""
    with modelfile.locked(path):
        current = modelfile.load_view(path)
        docs = analyse_for_learning(current.analyzer, [Document(f"t{n}", label, text, "text")])
        update = learning.learn_update(current, docs)[0]
        return modelfile.append_update(path, update, since=current)


def test_a_held_view_follows_another_writers_updates_from_the_journals_tail(tmp_path, journalled, monkeypatch):
    path = str(tmp_path / "m.nb")
    modelfile.save(trained([("apple bread cider", "a"), ("dough eagle fjord", "b")]), path)
    learn(path, POOL[0], "a", 0)
    held = modelfile.load_view(path)
    for n in range(1, 4):  # another process learns
        learn(path, POOL[n], "ab"[n % 2], n)
    read = []
    real = journal.read
    monkeypatch.setattr(journal, "read", lambda model, since=None, **kw: read.append(since) or real(model, since, **kw))
    monkeypatch.setattr(modelfile, "read_payload", lambda *a, **k: pytest.fail("the model file was read again"))
    followed = modelfile.followed(held, path)
    assert read == [held.journal_state[:2]]  # only what follows the records the view has
    assert len(journal.read(path, since=held.journal_state[:2]).bodies) == 3
    monkeypatch.undo()
    assert_same_scores(followed, modelfile.load(path))
    assert modelfile.followed(followed, path) is followed  # nothing new
    modelfile.compact(path)
    assert modelfile.followed(followed, path) is None  # a new model file: read it again


def _counting_term_sums(monkeypatch) -> list:
    """The number of terms each term sum hashes (`nb.term_digests.term_sum`,
    wherever it is called from), from now on."""
    hashed: list = []
    real = term_digests.term_sum

    def counted(hashes, *more):
        hashed.append(len(hashes))
        return real(hashes, *more)

    for module in (payload, overlay):
        monkeypatch.setattr(module, "term_sum", counted)
    return hashed


def test_a_views_model_id_hashes_the_terms_its_journal_changed_not_the_whole_model(tmp_path, journalled, monkeypatch):
    path = str(tmp_path / "m.nb")
    modelfile.save(trained([(" ".join(POOL), "a"), (" ".join(TEST_TEXTS), "b")]), path)
    for n in range(3):
        learn(path, POOL[n], "ab"[n % 2], n)
    built = payload.compute_model_id(modelfile.load(path))
    hashed = _counting_term_sums(monkeypatch)
    view = modelfile.load_view(path)  # the file's stored sum, moved by the journal's terms when the id is asked
    base_terms = len(view.base.vocabulary)
    assert hashed == []  # a reader that names no model (a bulk predict) hashes nothing
    assert modelfile.model_id(view) == built
    assert hashed and max(hashed) < base_terms
    hashed.clear()
    assert modelfile.model_id(view) == built and hashed == []
    real = modelfile.stored_notes
    monkeypatch.setattr(  # a model file written before the sum was kept: the base's, taken once
        modelfile, "stored_notes", lambda p, n: {k: v for k, v in real(p, n).items() if k != "term_sum"}
    )
    view = modelfile.load_view(path)
    assert view.carried_terms is None
    assert modelfile.model_id(view) == built
    assert base_terms in hashed and view.carried_terms is not None


def test_a_followers_model_id_hashes_only_the_terms_of_the_updates_since_its_last(tmp_path, journalled, monkeypatch):
    """A view whose id was taken (the daemon's worker) keeps its term sum,
    moved along by each update laid over it: its next id hashes the terms
    of those updates alone; a record whose term sum is not one is a
    one-line error."""
    monkeypatch.setattr(journal_updates, "DIFFERENCES", False)  # after-images, whose term sums are crafted below
    path = str(tmp_path / "m.nb")
    modelfile.save(trained([(" ".join(POOL), "a"), (" ".join(TEST_TEXTS), "b")]), path)
    for n in range(3):
        learn(path, POOL[n], "ab"[n % 2], n)
    held = modelfile.load_view(path)
    modelfile.model_id(held)
    for n in range(3, 5):  # another writer
        learn(path, POOL[n], "ab"[n % 2], n)
    new_terms = sum(len(journal_records.update_of(b).image.hashes) for b in journal.read(path).bodies[3:])
    built = payload.compute_model_id(modelfile.load(path))
    hashed = _counting_term_sums(monkeypatch)
    followed = modelfile.followed(held, path)  # the sum moved by each update's terms (the last when asked)
    assert isinstance(followed, JournalView)
    assert modelfile.model_id(followed) == built
    assert hashed and max(hashed) <= new_terms < len(held.base.vocabulary)
    monkeypatch.undo()
    plain, arrays = journal.decode(journal.read(path).bodies[-1])
    with open(journal.path_of(path), "ab") as fh:
        fh.write(journal.encode({**plain, "terms": "not a sum"}, arrays))
    with pytest.raises(NbcliError, match="bad term sum") as caught:
        modelfile.load_view(path)
    assert "\n" not in caught.value.message


@pytest.mark.parametrize("differences", [False, True], ids=["after-images", "differences"])
def test_a_reader_takes_the_totals_the_last_record_carries_and_refuses_ones_that_cannot_be_the_models(
    tmp_path, journalled, monkeypatch, differences
):
    """Updates learned through a view carry the totals of the view they were
    made from: a reader of the journal lays the run over the model file
    searching only the last record's terms in it (not the run's), and
    scores as the built model; records without them (written by a model
    read whole, or before records carried them) are read as before; totals
    that cannot be the model's are a one-line error."""
    monkeypatch.setattr(journal_updates, "DIFFERENCES", differences)
    path = str(tmp_path / "m.nb")
    modelfile.save(trained([(" ".join(POOL), "a"), (" ".join(TEST_TEXTS), "b")]), path)
    for n in range(4):
        learn(path, POOL[n], "ab"[n % 2], n)
    # the first was learned into the model file as read, not a view: no totals (they would cost a pass); a
    # difference carries none (resolving a run of them puts the run's terms in its last update's image)
    bodies = journal.read(path).bodies
    carried = [False] * 4 if differences else [False, True, True, True]
    assert ["before" in journal.decode(b)[0] for b in bodies] == carried
    searched: list = []  # the terms each search of a view's terms looked for, while a run is laid (`plus`)
    real_where, real_plus = JournalView._where, JournalView.plus
    monkeypatch.setattr(
        JournalView, "_where", lambda self, h: searched.append(len(h) * self.laying) or real_where(self, h)
    )
    monkeypatch.setattr(JournalView, "laying", False, raising=False)

    def laying(self, *args, **kwargs):
        self.laying = True
        try:
            return real_plus(self, *args, **kwargs)
        finally:
            self.laying = False

    monkeypatch.setattr(JournalView, "plus", laying)
    view = modelfile.load_view(path)
    assert isinstance(view, JournalView)
    read = [journal_records.update_of(b) for b in bodies]
    hashes = [u.hashes if hasattr(u, "hashes") else u.image.hashes for u in read]  # a difference's, an after-image's
    last, run = len(hashes[-1]), len(np.unique(np.concatenate(hashes)))
    # the last record's terms that no earlier one holds, not the run's; differences: the run's (their
    # values before are looked up to resolve them, and then no search of the view is left to spare)
    assert sum(searched) <= last < run if not differences else sum(searched) == run
    built = modelfile.load(path)
    assert_same_scores(view, built)
    assert modelfile.model_id(view) == payload.compute_model_id(built)  # the search a model id needs, made then
    assert searched
    monkeypatch.setattr(journal_updates, "DIFFERENCES", False)
    learn(path, POOL[4], "a", 4)  # an after-image, carrying them, after differences (whose images are the run's)
    assert "before" in journal.decode(journal.read(path).bodies[-1])[0]
    assert_same_scores(modelfile.load_view(path), modelfile.load(path))
    with modelfile.locked(path):  # a writer holding the model read whole: its record carries no totals
        current = modelfile.load(path)
        docs = analyse_for_learning(current.analyzer, [Document("t9", "b", POOL[5], "text")])
        update = learning.learn_update(current, docs)[0]
        assert update.before is None
        modelfile.append_update(path, update, since=current)
    searched.clear()
    view = modelfile.load_view(path)
    assert searched  # computed, as before records carried them
    assert_same_scores(view, modelfile.load(path))
    monkeypatch.undo()
    if differences:  # (a run with differences moves from no update's totals: they are not read)
        return
    plain, arrays = journal.decode(journal.read(path).bodies[-2])
    for units, n_terms in (([1, 2, 3], 5), ([1, 2], 10**9)):  # a class too many; more terms than there can be
        crafted = {**plain, "before": {"units": units, "integral": True, "terms": n_terms}}
        before = os.path.getsize(journal.path_of(path))
        with open(journal.path_of(path), "ab") as fh:
            fh.write(journal.encode(crafted, arrays))
        with pytest.raises(NbcliError, match="totals") as caught:
            modelfile.load_view(path)
        assert journal.path_of(path) in caught.value.message and "\n" not in caught.value.message
        os.truncate(journal.path_of(path), before)


def test_reading_a_journal_since_a_point_gives_the_records_after_it_and_the_whole_journals_damage(tmp_path, journalled):
    path = str(tmp_path / "m.nb")
    modelfile.save(trained([("apple bread cider", "a"), ("dough eagle fjord", "b")]), path)
    for n in range(3):
        learn(path, POOL[n], "ab"[n % 2], n)
    whole = journal.read(path)
    assert len(whole.bodies) == 3
    first_end = whole.end - sum(len(b) + 16 for b in whole.bodies[1:])
    tail = journal.read(path, since=(whole.base, first_end))
    assert tail.bodies == whole.bodies[1:] and tail.end == whole.end and tail.size == whole.size
    assert journal.read(path, since=("0" * 16, first_end)).bodies == whole.bodies  # bound to another base: whole
    data = bytearray(open(journal.path_of(path), "rb").read())
    data[whole.end - 5] ^= 0xFF  # the last record's body: a torn tail
    data[first_end + 30] ^= 0xFF  # the second record: corruption
    open(journal.path_of(path), "wb").write(bytes(data))
    damaged = journal.read(path, since=(whole.base, first_end))
    assert damaged.problem is not None and "fails its checksum" in damaged.problem
    assert len(damaged.bodies) == 1  # counted from the start: the one good update before the damage
    assert os.path.getsize(journal.path_of(path)) == whole.size


@pytest.mark.parametrize("kind", ["multinomial", "complement-tflog-norm"])
def test_a_view_following_many_updates_merges_its_layers_and_stays_exact(kind, tmp_path, journalled, monkeypatch):
    """The daemon's worker lays each TELL over the view it holds; the
    newest layers are merged (by size, LAYER_RATIO; never more than
    MAX_LAYERS), and every state is the model built from the journal."""
    from nbcli.nb import overlay

    monkeypatch.setattr(overlay, "MAX_LAYERS", 3)
    for ratio, deepest in ((0, 3), (overlay.LAYER_RATIO, 2)):  # 0: merged only past MAX_LAYERS
        monkeypatch.setattr(overlay, "LAYER_RATIO", ratio)
        path = str(tmp_path / f"m{ratio}.nb")
        modelfile.save(trained([("apple bread cider", "a"), ("dough eagle fjord", "b")], **VIEWED[kind]), path)
        held = modelfile.load_view(path)
        depths = []
        for n in range(10):
            op = ("forget", n - 1, None) if n % 4 == 3 else ("learn", n, "ab"[n % 2])  # a forget of the last learned
            with modelfile.locked(path):
                docs = analysed(held, op, n)
                update = learning.learn_update(held, docs, forgetting=op[0] == "forget")[0]
                if update is None:
                    continue
                held = modelfile.followed(held, path, own=(update, modelfile.append_update(path, update, since=held)))
            depths.append(len(held.layers))
            assert_same_scores(held, modelfile.load(path))
        assert max(depths) == deepest, (ratio, depths)


def test_a_layer_holds_a_checkpoints_tables_as_decoded_and_clips_only_what_needs_it():
    """A reader's memory: the checkpoint's tables (most of what it reads)
    are not copied to be clipped when no value needs it."""
    import dataclasses

    from nbcli.nb.layers import Layer

    top = Counts.of(trained([("apple bread cider", "a"), ("dough eagle fjord", "b")]))
    layer = Layer.of(top)
    assert layer.tf is top.tf and (layer.fit is None or layer.fit is top.fit)
    below = dataclasses.replace(top, tf=top.tf - 1)  # a forgotten document's terms go below zero
    clipped = Layer.of(below)
    assert (below.tf < 0).any() and clipped.tf.min() == 0 and clipped.tf is not below.tf
    assert np.array_equal(clipped.tf, np.maximum(below.tf, 0)) and not clipped.alive.any()


def test_a_compaction_between_reading_the_model_file_and_its_journal_makes_the_reader_read_again(
    tmp_path, journalled, monkeypatch
):
    """The model file is read before its journal (`modelfile._load`): a
    compaction landing in between (a new file renamed in, a journal bound to
    it) is seen by the file's changed identity, and the read is made again,
    so the reader gets the model with every update, never the old file
    without its journal's."""
    path = str(tmp_path / "m.nb")
    modelfile.save(trained([("apple bread cider", "a"), ("dough eagle fjord", "b")]), path)
    for n, text in enumerate(["apple grape", "honey igloo bread"]):
        learn(path, text, "ab"[n], n)
    expected = modelfile.model_id(modelfile.load(path))
    real_read, raced = journal.read, []

    def racing(model, *args, **kwargs):
        if not raced:
            raced.append(model)
            modelfile.compact(model)  # lands after the file was read, before its journal is
        return real_read(model, *args, **kwargs)

    monkeypatch.setattr(journal, "read", racing)
    got = modelfile.load_view(path)
    assert raced and not os.path.exists(journal.path_of(path))  # it did land in between
    assert modelfile.model_id(got) == expected
    assert np.array_equal(got.log_proba(TEST_TEXTS), modelfile.load(path).log_proba(TEST_TEXTS))

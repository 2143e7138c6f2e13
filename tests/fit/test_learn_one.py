"""The one-pass learn of one new message (`fit.learn_one`, what a TELL
and `nbcli learn MODEL MSG` take) against the general path it stands in
for (`learning.plan_learning` then `learning.apply`): the same counts and
record entry, array for array, dtypes included, for every event model
nbcli can update, from a model file and from a model read through its
journal; and it declines every case it is not written for."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_learning import KINDS, WORDS  # tests/fit: the event models nbcli can update

from nbcli.fit import learn_one, learning
from nbcli.fit.analysed import analyse_for_learning
from nbcli.fit.training import train
from nbcli.fit.training_options import training_options
from nbcli.nb.counts import Counts
from nbcli.store import modelfile
from nbcli.text.sources import Document

BASE = [
    ("apple bread cider", "a"),
    ("dough eagle eagle", "b"),
    ("fjord grape apple", "a"),
    ("honey igloo dough dough", "b"),
]
FIELDS = ("class_count", "hashes", "blob", "offsets", "tf", "df", "fit", "last_seen")
MESSAGE = st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join)


def trained(pairs, **fields):
    analyzer_options, options = training_options(**fields)
    docs = [Document(f"d{i}", label, text, "text") for i, (text, label) in enumerate(pairs)]
    return train(docs, analyzer_options, options)


def analysed(classifier, texts, label):
    return analyse_for_learning(classifier.analyzer, [Document(f"x{i}", label, t, "text") for i, t in enumerate(texts)])


def general(counts, docs, classifier):
    """What the general path gives: (counts after, the record entries added)."""
    changes, entries, _, _ = learning.plan_learning(counts, docs)
    return learning.apply(counts, docs, changes, learning._transforms(classifier)), entries


def assert_same_counts(a: Counts, b: Counts):
    assert a.classes == b.classes and a.mail_docs == b.mail_docs
    for name in FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            assert x.dtype == y.dtype and np.array_equal(x, y), name


def assert_same_record(a, b):
    for name, x in a.arrays().items():
        y = b.arrays()[name]
        assert x.dtype == y.dtype and np.array_equal(x, y), name


def assert_same_update(a, b):
    assert a.known == b.known and a.meta == b.meta
    assert_same_counts(a.image, b.image)
    assert_same_record(a.image.record, b.image.record)
    for x, y in ((a.removed_digest, b.removed_digest), (a.removed_label, b.removed_label)):
        assert x.dtype == y.dtype and np.array_equal(x, y)
    assert modelfile.encoded(a) == modelfile.encoded(b)


@pytest.mark.parametrize("kind", list(KINDS))
@given(text=MESSAGE, label=st.sampled_from(["a", "b"]))
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
def test_one_pass_gives_the_general_paths_counts_and_entry(kind, text, label):
    assume(text not in [t for t, _ in BASE])  # a message the model learned already takes the general path
    model = trained(BASE, **KINDS[kind])
    docs = analysed(model, [text], label)
    counts = Counts.of_terms(model, docs.pair_hash)
    cls = learn_one.new_message_class(counts, docs)
    assert cls == model.classes.index(label)
    after, entry = learn_one.learned(counts, docs, cls, learning._transforms(model))
    expected, entries = general(counts, docs, model)
    assert_same_counts(after, expected)
    assert_same_record(entry, entries)


@pytest.mark.parametrize("kind", ["multinomial", "complement-tflog-norm"])
def test_a_learn_through_a_journal_takes_the_one_pass_and_writes_what_the_general_path_writes(
    kind, tmp_path, monkeypatch
):
    """Through a model read as a view of its journal (a spamd worker's), the
    Update of each learn is the general path's, and the one pass was taken."""
    monkeypatch.setattr(learning, "_now_text", lambda: "2026-11-27T20:00:00+00:00")
    monkeypatch.setattr(modelfile, "JOURNAL_MIN_BYTES", 0)
    path = str(tmp_path / "m.nb")
    modelfile.save(trained(BASE, **KINDS[kind]), path)
    taken = []
    real = learn_one.learned
    monkeypatch.setattr(learn_one, "learned", lambda *a: taken.append(1) or real(*a))
    texts = ["apple zebra quagga", "eagle eagle grape", "quagga quagga honey bread", "igloo apple"]
    for n, text in enumerate(texts):
        with modelfile.locked(path):
            view = modelfile.load_view(path)
            docs = analysed(view, [text], "ab"[n % 2])
            update = learning.learn_update(view, docs)[0]
            with monkeypatch.context() as m:
                m.setattr(learn_one, "new_message_class", lambda counts, docs: None)
                assert_same_update(update, learning.learn_update(view, docs)[0])
            modelfile.append_update(path, update, since=view)
    assert len(taken) == len(texts)
    scratch = trained(BASE + [(t, "ab"[n % 2]) for n, t in enumerate(texts)], **KINDS[kind])
    assert modelfile.model_id(modelfile.load(path)) == modelfile.model_id(scratch)


def test_it_declines_what_it_is_not_written_for():
    """Two messages, a class the model does not have, a message the record
    holds (in its class: nothing to do; in the other: a move) each take the
    general path; so do counts holding a term the message does not have."""
    model = trained(BASE)
    learned_b, _ = learning.learn(model, analysed(model, ["zebra quagga"], "b"))

    def cls_of(classifier, texts, label):
        docs = analysed(classifier, texts, label)
        return learn_one.new_message_class(Counts.of_terms(classifier, docs.pair_hash), docs)

    assert cls_of(model, ["zebra quagga"], "b") == 1
    assert cls_of(model, ["zebra", "quagga"], "b") is None
    assert cls_of(model, ["zebra quagga"], "c") is None
    assert cls_of(learned_b, ["zebra quagga"], "b") is None
    assert cls_of(learned_b, ["zebra quagga"], "a") is None
    docs = analysed(model, ["zebra quagga apple"], "a")
    whole = Counts.of(model)  # every term of the model, not only the message's
    assert learn_one.learned(whole, docs, 0, None) is None
    after, _ = general(whole, docs, model)
    assert after.tf.sum() == whole.tf.sum() + 3

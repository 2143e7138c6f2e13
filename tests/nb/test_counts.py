"""A model's counts (nb/counts.py) and the Classifier of counts
(`classifier.classifier_of`): what learning, merging, pruning and the dump
stand on."""

from __future__ import annotations

import numpy as np
import pytest

from nbcli.errors import NbcliError
from nbcli.fit.training import train
from nbcli.fit.training_options import training_options
from nbcli.nb.classifier import classifier_of
from nbcli.nb.counts import Counts, found_in, gather_texts, merged_distinct, sorted_distinct
from nbcli.text.sources import Document

PAIRS = [
    ("apple bread cider", "ham"),
    ("apple apple dough", "ham"),
    ("fjord grape honey", "spam"),
    ("grape igloo", "spam"),
]


def trained(pairs=PAIRS, **fields):
    analyzer_options, options = training_options(**fields)
    docs = [Document(f"d{i}", label, text, "text") for i, (text, label) in enumerate(pairs)]
    return train(docs, analyzer_options, options)


def texts(counts: Counts) -> list[str]:
    return [bytes(counts.blob[counts.offsets[i] : counts.offsets[i + 1]]).decode() for i in range(len(counts.hashes))]


def rebuilt(classifier, counts: Counts):
    model = classifier.model
    settings = {k: v for k, v in model.settings().items() if k not in ("doc_freq", "fit_count", "idf")}
    idf = model.kind == "complement" and model.idf is not None
    return classifier_of(counts, model.kind, settings, idf, classifier.analyzer_options, classifier.meta)


@pytest.mark.parametrize("fields", [{}, {"kind": "bernoulli"}, {"kind": "complement", "tf_log": True}])
def test_the_classifier_of_a_models_counts_is_the_model(fields):
    classifier = trained(**fields)
    again = rebuilt(classifier, Counts.of(classifier))
    assert again.classes == classifier.classes
    assert np.array_equal(again.vocabulary.hashes, classifier.vocabulary.hashes)
    probe = ["apple grape", "honey zebra", "dough"]
    np.testing.assert_allclose(again.log_proba(probe), classifier.log_proba(probe), rtol=0, atol=1e-12)


def test_counts_of_a_model_hold_its_documents_terms_and_record():
    counts = Counts.of(trained())
    assert counts.classes == ["ham", "spam"]
    assert counts.class_count.tolist() == [2, 2]
    assert (counts.hashes[1:] > counts.hashes[:-1]).all()  # the vocabulary sorted by term hash
    apple = texts(counts).index("apple")
    assert counts.tf[:, apple].tolist() == [3, 0]  # counted three times in ham, never in spam
    assert len(counts.record) == 4 and len(counts.last_seen) == len(counts.hashes)


def test_with_classes_adds_empty_classes_in_name_order_and_only_classes_takes_them_out():
    counts = Counts.of(trained())
    grown = counts.with_classes(["eggs"])
    assert grown.classes == ["eggs", "ham", "spam"]
    assert grown.class_count.tolist() == [0, 2, 2]
    assert grown.tf[0].sum() == 0 and np.array_equal(grown.tf[1:], counts.tf)
    assert counts.with_classes(["ham"]) is counts  # nothing new: the same counts
    back = grown.only_classes(["ham", "spam"])
    assert back.classes == ["ham", "spam"] and np.array_equal(back.tf, counts.tf)


def test_columns_keep_the_chosen_terms_with_their_texts():
    counts = Counts.of(trained())
    keep = np.array([t in ("apple", "grape") for t in texts(counts)])
    narrowed = counts.columns(keep)
    assert sorted(texts(narrowed)) == ["apple", "grape"]
    assert np.array_equal(narrowed.tf, counts.tf[:, keep])
    assert np.array_equal(narrowed.last_seen, counts.last_seen[keep])


def test_settled_drops_terms_without_counts_and_never_goes_below_zero():
    counts = Counts.of(trained())
    honey = texts(counts).index("honey")
    counts.tf[:, honey] = 0  # forgotten everywhere: the term leaves
    counts.tf[0, 0] -= 100  # more forgotten than there was (a pruned model): clipped to zero
    counts.class_count[0] = -1
    settled = counts.settled()
    assert "honey" not in texts(settled)
    assert settled.tf.min() >= 0 and settled.class_count.min() >= 0


def test_gather_texts_takes_each_term_from_its_source():
    a = (np.frombuffer(b"appleberry", np.uint8), np.array([0, 5, 10]))
    b = (np.frombuffer(b"kiwi", np.uint8), np.array([0, 4]))
    blob, offsets = gather_texts([a, b], np.array([1, 0, 0]), np.array([0, 1, 0]))
    assert [bytes(blob[offsets[i] : offsets[i + 1]]) for i in range(3)] == [b"kiwi", b"berry", b"apple"]
    empty_blob, empty_offsets = gather_texts([a], np.zeros(0, np.int64), np.zeros(0, np.int64))
    assert len(empty_blob) == 0 and empty_offsets.tolist() == [0]


def test_empty_counts_have_the_classes_and_no_terms():
    counts = Counts.empty(["spam", "ham"], doc_freq=True, fit=False)
    assert counts.classes == ["ham", "spam"] and counts.tf.shape == (2, 0)
    assert counts.df is not None and counts.fit is None and len(counts.record) == 0


def test_classifier_of_refuses_a_prior_without_a_weight_for_every_class():
    classifier = trained(prior="ham=0.3,spam=0.7")
    counts = Counts.of(classifier).with_classes(["eggs"])
    with pytest.raises(NbcliError, match="gives weights for ham, spam only, so it cannot learn class eggs"):
        rebuilt(classifier, counts)


@pytest.mark.parametrize("order", ["runs", "scattered", "scattered-chunks"])
def test_gather_texts_copies_runs_and_scattered_terms_alike(order, monkeypatch):
    """gather_texts copies long runs as slices and scattered terms byte by
    byte (a few bytes from several sources: through one index of them all):
    all give each term's text from its source."""
    if order == "scattered-chunks":
        monkeypatch.setattr("nbcli.nb.counts._COPY_CHUNK", 16)  # a few terms at a time
    if order == "runs":
        monkeypatch.setattr("nbcli.nb.counts._COPY_CHUNK", 1024)  # more bytes than one index takes: by source
    rng = np.random.default_rng(3)
    sources, texts = [], []
    longest = 60 if order == "runs" else 9  # a few long runs are copied as slices, short scattered terms by index
    for n in (500, 7):
        words = [bytes(rng.integers(97, 123, rng.integers(0, longest)).astype(np.uint8)) for _ in range(n)]
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum([len(w) for w in words], out=offsets[1:])
        sources.append((np.frombuffer(b"".join(words), dtype=np.uint8), offsets))
        texts.append(words)
    if order == "runs":  # a big vocabulary with a few terms inserted: few runs
        which = np.zeros(507, dtype=np.int64)
        cols = np.arange(507, dtype=np.int64)
        inserted = np.sort(rng.choice(507, 7, replace=False))
        which[inserted] = 1
        cols[inserted] = np.arange(7)
        cols[which == 0] = np.arange(500)
    else:
        which = rng.integers(0, 2, 300)
        cols = np.where(which == 0, rng.integers(0, 500, 300), rng.integers(0, 7, 300))
    blob, offsets = gather_texts(sources, which, cols)
    got = [bytes(blob[offsets[i] : offsets[i + 1]]) for i in range(len(which))]
    assert got == [texts[w][c] for w, c in zip(which.tolist(), cols.tolist())]


def test_insert_texts_puts_new_terms_before_the_old_ones_they_precede():
    from nbcli.nb.counts import insert_texts

    def packed(words):
        offsets = np.zeros(len(words) + 1, dtype=np.int64)
        np.cumsum([len(w) for w in words], out=offsets[1:])
        return np.frombuffer(b"".join(words), dtype=np.uint8), offsets

    old = [b"bb", b"", b"dddd", b"f"]
    new = [b"a", b"cc", b"", b"c2", b"zzz"]
    at = np.array([0, 2, 2, 2, 4])  # ties keep their order; 4: after the last
    blob, offsets = insert_texts(*packed(old), at, *packed(new))
    got = [bytes(blob[offsets[i] : offsets[i + 1]]) for i in range(len(offsets) - 1)]
    assert got == [b"a", b"bb", b"", b"cc", b"", b"c2", b"dddd", b"f", b"zzz"]
    blob, offsets = insert_texts(*packed([]), np.array([0, 0]), *packed([b"x", b"yy"]))
    assert bytes(blob) == b"xyy" and offsets.tolist() == [0, 1, 3]


def test_inserted_is_np_insert_for_positions_in_order():
    from nbcli.nb.counts import inserted

    rng = np.random.default_rng(3)
    for n, k in ((0, 3), (5, 0), (1, 1), (50, 20), (200, 7)):
        a = rng.integers(0, 1 << 62, n).astype(np.uint64)
        at = np.sort(rng.integers(0, n + 1, k))  # repeats and the end included
        values = rng.integers(0, 1 << 62, k)  # another dtype: cast to a's, as np.insert does
        got, want = inserted(a, at, values), np.insert(a, at, values)
        assert got.dtype == want.dtype and np.array_equal(got, want)


def test_found_in_tells_where_each_value_is_in_a_sorted_array_and_whether_it_is_there():
    sorted_values = np.array([3, 8, 20], dtype=np.uint64)
    pos, hit = found_in(sorted_values, np.array([8, 1, 20, 99], dtype=np.uint64))
    assert hit.tolist() == [True, False, True, False] and pos[hit].tolist() == [1, 2]
    pos, hit = found_in(np.zeros(0, dtype=np.uint64), np.array([5], dtype=np.uint64))
    assert not hit.any() and pos.tolist() == [0]


@pytest.mark.parametrize("sizes", [[], [0], [5], [300, 0, 7], [1000, 1000], [50, 3, 200, 1]])
def test_merged_distinct_of_ascending_arrays_is_np_unique_of_them_all(sizes):
    rng = np.random.default_rng(len(sizes))
    pool = rng.integers(0, 2**64 - 1, 700, dtype=np.uint64)  # shared values: the arrays overlap
    arrays = [np.unique(rng.choice(pool, n)) for n in sizes]
    expected = np.unique(np.concatenate(arrays)) if arrays else np.zeros(0, np.uint64)
    assert np.array_equal(merged_distinct(arrays), expected)
    assert np.array_equal(sorted_distinct(np.concatenate(arrays) if arrays else []), expected)

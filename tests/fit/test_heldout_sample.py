"""The held-out sample a count table keeps (fit/heldout_sample.py): the
documents of smallest digest per class, whatever the order or the workers,
and its stratified groups."""

from __future__ import annotations

import numpy as np

from nbcli.fit.heldout_sample import GROUPS, Sample, groups_for


def offer(sample, keys, classes, lengths=None):
    """Offer documents with these keys and classes, document i having one
    token of term i (or lengths[i] tokens of it)."""
    n = len(keys)
    lengths = np.ones(n, dtype=np.int64) if lengths is None else np.asarray(lengths, dtype=np.int64)
    ids = np.repeat(np.arange(n, dtype=np.int64), lengths)
    sample.add(np.asarray(keys, dtype=np.uint64), np.asarray(classes, dtype=np.int64), ids, lengths)


def test_sample_keeps_ties_at_the_bound():
    sample = Sample(cap=2)
    ids = np.array([0, 1, 2, 3], dtype=np.int64)
    sample.add(np.array([5, 1, 5, 9], dtype=np.uint64), np.zeros(4, dtype=np.int64), ids, np.ones(4, dtype=np.int64))
    held = sample.finish({0: 0}, np.arange(4), 4)
    assert held.keys.tolist() == [1, 5, 5]


def test_the_sample_keeps_the_smallest_keys_of_each_class_in_any_batches():
    rng = np.random.default_rng(1)
    keys = rng.permutation(200).astype(np.uint64) + 1
    classes = np.arange(200) % 2
    whole = Sample(cap=7)
    offer(whole, keys, classes)
    pieces = Sample(cap=7)
    for part in np.array_split(np.arange(200), 9):
        pieces_keys, pieces_classes = keys[part], classes[part]
        n = len(part)
        pieces.add(pieces_keys, pieces_classes, part.astype(np.int64), np.ones(n, dtype=np.int64))
    a = whole.finish({0: 0, 1: 1}, np.arange(200), 200)
    b = pieces.finish({0: 0, 1: 1}, np.arange(200), 200)
    for c in (0, 1):
        assert a.keys[a.cls == c].tolist() == sorted(keys[classes == c].tolist())[:7]
    assert np.array_equal(a.keys, b.keys) and np.array_equal(a.indices, b.indices)


def test_a_sample_merged_from_workers_is_the_sample_of_all():
    keys = np.arange(40, 0, -1).astype(np.uint64)
    classes = np.arange(40) % 2
    one = Sample(cap=5)
    offer(one, keys, classes)
    left, right = Sample(cap=5), Sample(cap=5)
    offer(left, keys[:20], classes[:20])
    offer(right, keys[20:], classes[20:])
    names = ["a", "b"]
    term_keys = np.arange(40, dtype=np.int64)
    left.merge(right.state(names, term_keys[20:]), names.index, lambda hashes: hashes)
    a = one.finish({0: 0, 1: 1}, np.arange(40), 40)
    b = left.finish({0: 0, 1: 1}, np.arange(40), 40)
    assert np.array_equal(a.keys, b.keys) and np.array_equal(a.cls, b.cls)
    assert np.array_equal(a.indices, b.indices)  # each document keeps its own term


def test_rows_give_each_documents_counts():
    sample = Sample(cap=10)
    offer(sample, [3, 1, 2], [0, 0, 1], lengths=[2, 1, 4])
    held = sample.finish({0: 0, 1: 1}, np.arange(3), 3)
    assert held.keys.tolist() == [1, 3, 2]  # by class, then by key
    indptr, indices, data = held.rows(np.array([1, 2]))
    assert indptr.tolist() == [0, 1, 2] and indices.tolist() == [0, 2] and data.tolist() == [2.0, 4.0]


def test_groups_are_stratified_and_copies_share_one():
    sample = Sample(cap=100)
    keys = [1, 2, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]  # key 2 twice: copies of one document
    offer(sample, keys, [0] * 6 + [1] * 6)
    held = sample.finish({0: 0, 1: 1}, np.arange(12), 12)
    groups = held.groups(3)
    copies = np.flatnonzero(held.keys == 2)
    assert groups[copies[0]] == groups[copies[1]]
    for c in (0, 1):
        distinct = np.unique(held.keys[held.cls == c])
        per_group = np.bincount([groups[np.flatnonzero(held.keys == k)[0]] for k in distinct], minlength=3)
        assert per_group.max() - per_group.min() <= 1


def test_a_small_corpus_is_cross_validated_in_five_groups_a_big_one_in_two():
    assert groups_for(100, 100) == GROUPS == 5
    assert groups_for(2500, 9000) == 5  # more than a quarter sampled
    assert groups_for(2500, 20000) == 2

"""The record of learned documents (`nb.record.Record`): sorted, combined
entries, lookups, relabelling and the model file's checked arrays."""

from __future__ import annotations

import numpy as np
import pytest

from nbcli.nb.record import ENTRY_BYTES, Record


def _record() -> Record:
    # documents (digests) 9, 3, 9 again in the same class, 3 in another class
    return Record.build(
        [[9, 1], [3, 0], [9, 1], [3, 0]],
        [1, 0, 1, 1],
        [1, 2, 1, 1],
        [0, 77, 55, 0],
        [100, 50, 300, 10],
    )


def test_build_sorts_by_digest_and_class_and_combines_repeats():
    r = _record()
    assert len(r) == 3
    assert r.digest.tolist() == [[3, 0], [3, 0], [9, 1]]
    assert r.label.tolist() == [0, 1, 1]
    assert r.copies.tolist() == [2, 1, 2]  # the two learnings of document 9 in class 1 add up
    assert r.when.tolist() == [50, 10, 300]  # the latest date of the combined entry
    assert r.message_id.tolist() == [77, 0, 55]  # the first Message-ID met
    assert r.documents_per_class(3).tolist() == [2, 3, 0]


def test_find_without_plus_and_relabelled():
    r = _record()
    assert r.find(np.array([3, 0], np.uint64)).tolist() == [0, 1]
    assert r.find(np.array([4, 0], np.uint64)).tolist() == []
    smaller = r.without([0])
    assert len(smaller) == 2 and smaller.find(np.array([3, 0], np.uint64)).tolist() == [0]
    both = smaller.plus(Record.build([[3, 0]], [0], [2], [77], [50]))
    assert all(np.array_equal(a, b) for a, b in zip(both.arrays().values(), r.arrays().values()))
    swapped = r.relabelled(np.array([1, 0]))
    assert swapped.documents_per_class(2).tolist() == [3, 2]
    assert len(Record.empty()) == 0 and Record.empty().relabelled(np.array([0])).label.size == 0


def test_the_model_files_arrays_round_trip_and_are_checked():
    r = _record()
    arrays = r.arrays()
    assert all(len(a) == len(r) for a in arrays.values())
    assert sum(a.nbytes for a in arrays.values()) == len(r) * ENTRY_BYTES  # what info reports
    again = Record.from_arrays(arrays, 2)
    assert all(np.array_equal(a, b) for a, b in zip(again.arrays().values(), arrays.values()))
    assert len(Record.from_arrays({}, 2)) == 0  # a model without a record
    with pytest.raises(ValueError, match="record_class"):
        Record.from_arrays(arrays, 1)  # class 1 out of range
    unsorted = dict(arrays, record_digest=arrays["record_digest"][::-1].copy())
    with pytest.raises(ValueError, match="record_digest"):
        Record.from_arrays(unsorted, 2)
    with pytest.raises(ValueError, match="record_copies"):
        Record.from_arrays(dict(arrays, record_copies=np.zeros(3, np.int64)), 2)
    with pytest.raises(ValueError, match="record_when"):
        Record.from_arrays(dict(arrays, record_when=np.zeros(2, np.int64)), 2)


def _same(a: Record, b: Record) -> bool:
    return all(x.dtype == y.dtype and np.array_equal(x, y) for x, y in zip(a.arrays().values(), b.arrays().values()))


@pytest.mark.parametrize(
    "entry",
    [([3, 0], 2), ([3, 0], 3), ([9, 1], 0), ([9, 0], 1), ([1, 5], 0), ([99, 0], 1), ([3, 1], 0)],
    ids=["same-digest-after", "same-digest-last", "before-the-class", "same-high-lower-low", "first", "last", "mid"],
)
def test_inserting_one_entry_is_building_with_it(entry):
    """A TELL adds one entry to a record of every message ever learned: put
    in its place, as sorting all of them would."""
    r = _record()
    digest, label = entry
    got = r.inserted([digest], [label], [4], [8], [1234])
    want = Record.build(
        np.concatenate([r.digest, [digest]]),
        np.concatenate([r.label, [label]]),
        np.concatenate([r.copies, [4]]),
        np.concatenate([r.message_id, [8]]),
        np.concatenate([r.when, [1234]]),
    )
    assert _same(got, want)
    with pytest.raises(ValueError, match="already has"):
        r.inserted([[9, 1]], [1], [1], [0], [0])
    assert _same(
        Record.empty().inserted([digest], [label], [4], [8], [1234]), Record.build([digest], [label], [4], [8], [1234])
    )


def test_the_changes_from_one_record_to_another_make_it():
    """What a journal's checkpoint holds of the record: the entries to take
    out (any that differ, even only in copies or date) and those to add."""
    before = _record()
    after = before.without([2]).plus(Record.build([[3, 0], [5, 5]], [0, 1], [1, 1], [0, 6], [60, 70]))
    removed, added = before.changes_to(after)
    assert removed.tolist() == [0, 2]  # document 3 in class 0 gained a copy; document 9 left
    assert added.digest.tolist() == [[3, 0], [5, 5]] and added.copies.tolist() == [3, 1]
    assert _same(before.without(removed).plus(added), after)
    none_removed, none_added = after.changes_to(after)
    assert len(none_removed) == 0 and len(none_added) == 0


def test_positions_finds_many_entries_at_once_as_find_does():
    r = Record.build([[3, 0], [3, 0], [3, 1], [9, 1], [12, 4]], [0, 1, 0, 1, 2], [1, 1, 1, 1, 1], [0] * 5, [0] * 5)
    asked = [[3, 0], [3, 0], [3, 1], [3, 1], [9, 1], [9, 1], [12, 4], [5, 5], [0, 0]]
    labels = [0, 1, 0, 1, 1, 0, 2, 0, -1]
    want = []
    for digest, label in zip(asked, labels):
        hits = [e for e in r.find(np.array(digest, np.uint64)).tolist() if r.label[e] == label]
        want.append(hits[0] if hits else -1)
    assert r.positions(asked, labels).tolist() == want == [0, 1, 2, -1, 3, -1, 4, -1, -1]
    assert Record.empty().positions(asked, labels).tolist() == [-1] * len(asked)

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

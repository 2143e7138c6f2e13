"""The held-out sample a count table keeps while counting: per class, the
documents of smallest content digest (a bottom-k sketch), with their term
counts; and its groups. How the sample is used for calibration is
`heldout`'s docstring.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SAMPLE_PER_CLASS = 2500
GROUPS = 5


def groups_for(sampled: int, documents: int) -> int:
    """Groups for a sample of `sampled` of `documents`: 5 when the sample
    is more than a quarter of the corpus (plain 5-fold cross-validation of
    a small corpus); 2 when it is a smaller part, since each group's model
    then still learns more than 7/8 of the corpus and costs a full model's
    derivation (two instead of five on a big vocabulary)."""
    return GROUPS if 4 * sampled > documents else 2


class Sample:
    """The bottom-`cap` documents by digest key, per class, with their term
    counts in the owning table's term ids (local ids, first-seen order)."""

    def __init__(self, cap: int = SAMPLE_PER_CLASS):
        self.cap = cap
        # per local class id: lists of (keys (n,) u64, ids concatenated, counts, ptr (n+1,))
        self._parts: dict[int, list[tuple]] = {}
        self._size: dict[int, int] = {}
        self._bound: dict[int, int] = {}  # per class: a key no kept document exceeds once full

    def add(self, keys: np.ndarray, cls_doc: np.ndarray, ids: np.ndarray, doc_len: np.ndarray) -> None:
        """Offer a batch's documents: their digest keys (u64), class ids, and
        their tokens' term ids (concatenated, doc_len per document)."""
        n = len(doc_len)
        take = np.ones(n, dtype=bool)
        for cid, bound in self._bound.items():  # a full class takes only keys up to its bound
            take &= ~((cls_doc == cid) & (keys > np.uint64(bound)))
        rows = np.flatnonzero(take)
        if not len(rows):
            return
        # every taken document's distinct terms and their counts, at once
        doc_of = np.repeat(np.arange(n, dtype=np.int64), doc_len)
        chosen = take[doc_of]
        width = int(ids.max()) + 1 if len(ids) else 1
        pairs, counts = np.unique(doc_of[chosen] * width + ids[chosen], return_counts=True)
        terms = pairs % width
        ptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(np.bincount(pairs // width, minlength=n)[rows], out=ptr[1:])
        taken = (keys[rows], terms, counts.astype(np.int64), ptr)
        for cid in np.unique(cls_doc[rows]).tolist():
            self._offer(cid, *_rows(*taken, np.flatnonzero(cls_doc[rows] == cid)))

    def _offer(self, cid: int, keys, ids, counts, ptr) -> None:
        self._parts.setdefault(cid, []).append((np.asarray(keys, dtype=np.uint64), ids, counts, ptr))
        self._size[cid] = self._size.get(cid, 0) + len(keys)
        if self._size[cid] >= 2 * self.cap:
            self._prune(cid)

    def _prune(self, cid: int) -> None:
        keys, ids, counts, ptr = _join(self._parts[cid])
        keep = _smallest(keys, self.cap)
        part = _rows(keys, ids, counts, ptr, keep)
        self._parts[cid] = [part]
        self._size[cid] = len(part[0])
        if len(part[0]) >= self.cap:
            self._bound[cid] = int(part[0].max())

    def state(self, class_names: list[str], term_keys: np.ndarray) -> dict:
        """Picklable: per class name, (digest keys, term hashes, counts, ptr)."""
        out = {}
        for cid in list(self._parts):
            self._prune(cid)
            keys, ids, counts, ptr = self._parts[cid][0]
            out[class_names[cid]] = (keys, term_keys[ids], counts, ptr)
        return out

    def merge(self, state: dict, class_id, term_ids) -> None:
        """Add another table's `state()`; class_id(name) and term_ids(hashes)
        map into this table's ids."""
        for name, (keys, hashes, counts, ptr) in state.items():
            if len(keys):
                self._offer(class_id(name), keys, term_ids(hashes), counts, ptr)

    def finish(self, column_of_class: dict[int, int], column_of_term: np.ndarray, n_terms: int) -> HeldOut:
        """The sample on the final columns (classes and terms), in class
        order and by increasing key within a class, each row's terms sorted."""
        keys, cls, indices, data, lengths = [], [], [], [], []
        for cid in sorted(self._parts, key=column_of_class.get):
            self._prune(cid)
            k, ids, counts, ptr = self._parts[cid][0]
            k, ids, counts, ptr = _rows(k, ids, counts, ptr, np.argsort(k, kind="stable"))
            columns = column_of_term[ids]
            row_of = np.repeat(np.arange(len(k), dtype=np.int64), np.diff(ptr))
            order = np.lexsort((columns, row_of))
            keys.append(k)
            cls.append(np.full(len(k), column_of_class[cid], dtype=np.int64))
            indices.append(columns[order])
            data.append(counts[order].astype(np.float64))
            lengths.append(np.diff(ptr))
        indptr = np.zeros(sum(len(k) for k in keys) + 1, dtype=np.int64)
        np.cumsum(_cat(lengths), out=indptr[1:])
        return HeldOut(
            _cat(keys).astype(np.uint64), _cat(cls), indptr, _cat(indices), _cat(data).astype(np.float64), n_terms
        )


def _cat(arrays: list) -> np.ndarray:
    return np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)


def _join(parts: list[tuple]) -> tuple:
    if len(parts) == 1:
        return parts[0]
    keys = np.concatenate([p[0] for p in parts])
    ids = np.concatenate([p[1] for p in parts])
    counts = np.concatenate([p[2] for p in parts])
    lengths = np.concatenate([np.diff(p[3]) for p in parts])
    ptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    return keys, ids, counts, ptr


def _smallest(keys: np.ndarray, cap: int) -> np.ndarray:
    """Rows of the `cap` smallest keys, and every row tied with the largest
    of them (copies of a document stay together), in increasing key order."""
    order = np.argsort(keys, kind="stable")
    if len(order) <= cap:
        return order
    bound = keys[order[cap - 1]]
    return order[keys[order] <= bound]


def _rows(keys, ids, counts, ptr, rows: np.ndarray) -> tuple:
    """The documents `rows` of a (keys, ids, counts, ptr) set."""
    lengths = (ptr[1:] - ptr[:-1])[rows]
    starts = ptr[:-1][rows]
    new_ptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_ptr[1:])
    take = np.repeat(starts - new_ptr[:-1], lengths) + np.arange(new_ptr[-1])
    return keys[rows], ids[take], counts[take], new_ptr


@dataclass
class HeldOut:
    """The sampled documents: digest keys (n,) increasing within each class,
    class columns (n,), and their term counts as a CSR matrix (indptr (n+1,),
    indices, data) over the table's unpruned vocabulary of n_terms terms."""

    keys: np.ndarray
    cls: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    n_terms: int

    def __len__(self) -> int:
        return len(self.keys)

    def rows(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(indptr, indices, data) of the documents `rows`."""
        _, indices, data, indptr = _rows(self.keys, self.indices, self.data, self.indptr, rows)
        return indptr, indices, data

    def groups(self, k: int = GROUPS) -> np.ndarray:
        """The group (0..k-1) of each document: per class, its distinct keys
        in increasing order dealt in turn, continuing from class to class."""
        group = np.empty(len(self.keys), dtype=np.int64)
        dealt = 0
        for c in np.unique(self.cls).tolist():
            rows = np.flatnonzero(self.cls == c)
            _, rank = np.unique(self.keys[rows], return_inverse=True)
            group[rows] = (dealt + rank) % k
            dealt += int(rank.max()) + 1
        return group

"""Held-out scores of the training corpus, for calibration, from one reading.

A calibration map is fitted on scores the model gives documents it was not
trained on. `nbcli train` gets them by cross-validation of its own corpus
without reading it twice (stdin and mboxes cannot be read twice):

- While counting, every CountTable keeps a *sample* of the documents it
  counts, with their term counts: per class, the SAMPLE_PER_CLASS documents
  of smallest content digest (a bottom-k sketch). The digest is a hash of
  the document's terms, so the sample is a random one, and the same for any
  number of workers and any reading order (workers' samples merge by
  keeping the smallest digests again). Documents with the same digest are
  in or out together.
- The sampled documents are dealt to K groups, stratified: per class, the
  distinct digests in increasing order, in turn (continuing from class to
  class), so copies of a document share a group. Group g's model is the
  corpus's counts minus the counts of group g's documents (counts are the
  sufficient statistic), built on the terms that remain, with the training
  options; group g's documents are scored by it, their other terms being
  unknown terms.
- A corpus with at most SAMPLE_PER_CLASS documents per class is sampled
  whole: that is plain 5-fold cross-validation. A bigger one holds out a
  few thousand documents, each scored by a model trained on all but a K-th
  of the sample: more than (K-1)/K of the corpus, so the held-out scores
  are as confident as the final model's; when the sample is under a
  quarter of the corpus, K = 2 (`groups_for`): each model still learns
  more than 7/8 of the corpus, at two models' cost instead of five.

Complement's transformed-count sums are subtracted too (a document's
transformed counts depend only on its own counts). Not supported: the
options that read the corpus twice (`TrainOptions.needs_second_pass`).
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


def heldout_scores(
    heldout: HeldOut,
    classes: list[str],
    class_count: np.ndarray,
    vocab,
    tf: np.ndarray,
    df: np.ndarray | None,
    fit: np.ndarray | None,
    mail_docs: int,
    fit_part,
    transform: tuple[bool, bool] | None,
    scale: float,
    k: int | None = None,
    progress=None,
) -> tuple[np.ndarray, np.ndarray]:
    """(raw log P(class | document) of each sampled document under the model
    trained without its group, shape (n, C); their true class columns (n,)).
    tf, df and fit are the corpus's (C, V) sums on `vocab`, unpruned; fit
    the sums of the documents' transformed counts, (tf_log, length_norm) =
    transform, in units of 1/scale (None: not kept). fit_part(classes,
    class_count, vocab, tf, df, fit, mail_docs) builds a part's Classifier
    (`training.fit_part`, passed in: training calls this module).
    progress(1) is called as each of the k group models is done."""
    if k is None:
        k = groups_for(len(heldout), int(class_count.sum()))
    group = heldout.groups(k)
    C, V = len(classes), heldout.n_terms
    doc_of = np.repeat(np.arange(len(heldout), dtype=np.int64), np.diff(heldout.indptr))
    flat = heldout.cls[doc_of] * V + heldout.indices  # (class, term) of every stored count
    group_of = group[doc_of]
    transformed = None
    if fit is not None and transform is not None:
        transformed = _transformed(heldout.data, doc_of, len(heldout), transform, scale)
    log_proba = np.zeros((len(heldout), C))
    for g in range(k):
        rows = np.flatnonzero(group == g)
        if not len(rows):
            continue
        here = np.flatnonzero(group_of == g)
        cells = flat[here]
        # the corpus's sums less the group's: one copy of each, the group's few cells taken out in place
        part_tf = tf.copy()
        np.subtract.at(part_tf.reshape(-1), cells, np.rint(heldout.data[here]).astype(np.int64))
        part_df = None
        if df is not None:
            part_df = df.copy()
            np.subtract.at(part_df.reshape(-1), cells, 1)
        part_fit = None
        if fit is not None:
            part_fit = fit.copy()
            if transformed is not None:
                np.subtract.at(part_fit.reshape(-1), cells, transformed[here])
                np.maximum(part_fit, 0.0, out=part_fit)  # rounding never leaves a sum below zero
        part_count = class_count - np.bincount(heldout.cls[rows], minlength=C)
        clf = fit_part(
            classes,
            part_count,
            vocab,
            part_tf,
            part_df,
            part_fit,
            mail_docs * part_count.sum() / max(class_count.sum(), 1),
        )
        del part_tf, part_df, part_fit
        scored = clf.model.predict_log_proba(counts_on_vocabulary(*heldout.rows(rows), vocab.hashes, clf))
        present = [classes.index(c) for c in clf.classes]
        block = np.full((len(rows), C), -np.inf)
        block[:, present] = scored
        log_proba[rows] = block
        if progress is not None:
            progress(1)
    return log_proba, heldout.cls.copy()


def doc_norms(doc_of: np.ndarray, values: np.ndarray, n_docs: int) -> np.ndarray:
    """Each document's Euclidean norm sqrt(sum of its values squared), the
    squares added in increasing order within each document: the order of a
    document's terms (a worker's own term ids, a sample's, a learned
    batch's) does not change the last bit, so training, its held-out
    groups and `learn` round the same transformed values for any --jobs."""
    squares = values * values
    order = np.lexsort((squares, doc_of))
    return np.sqrt(np.bincount(doc_of[order], weights=squares[order], minlength=n_docs))


def _transformed(data: np.ndarray, doc_of: np.ndarray, n_docs: int, transform: tuple[bool, bool], scale: float):
    """Each stored count transformed as complement's tf-log and length norm
    transform a document's counts, rounded as the counting pass rounds them
    (to 1/scale)."""
    tf_log, length_norm = transform
    values = np.log1p(data) if tf_log else data.copy()
    if length_norm:
        norms = doc_norms(doc_of, values, n_docs)
        values = values / np.where(norms > 0, norms, 1.0)[doc_of]
    return np.rint(values * scale) / scale


def counts_on_vocabulary(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, hashes: np.ndarray, clf):
    """Documents' counts (a CSR matrix over the terms with these hashes) on
    the classifier's vocabulary, their other terms counted as unknown
    tokens (SparseCounts)."""
    from nbcli.text.vectorize import SparseCounts

    n = len(indptr) - 1
    # corpus column -> model column, -1 unknown (both hash lists are sorted)
    model_hashes = clf.vocabulary.hashes
    column = np.searchsorted(model_hashes, hashes)
    inside = column < len(model_hashes)
    inside[inside] = model_hashes[column[inside]] == hashes[inside]
    column = np.where(inside, column, -1)
    mapped = column[indices]
    known = mapped >= 0
    row_of = np.repeat(np.arange(n), np.diff(indptr))
    unknown = np.bincount(row_of[~known], weights=data[~known], minlength=n).astype(np.int64)
    new_ptr = np.r_[0, np.cumsum(np.bincount(row_of[known], minlength=n))]
    return SparseCounts(new_ptr, mapped[known], data[known], (n, len(clf.vocabulary)), unknown)


def heldout_problem(heldout: HeldOut | None, classes: list[str], least: int = 2) -> str | None:
    """Why the sample cannot be cross-validated (None: it can): every class
    needs `least` distinct documents (two, so that every group's model has
    them all; more for a map worth fitting)."""
    if heldout is None:
        return "no documents were sampled"
    distinct = [len(np.unique(heldout.keys[heldout.cls == c])) for c in range(len(classes))]
    n = min(distinct)
    if n >= least:
        return None
    name = classes[distinct.index(n)]
    if n < 2:
        return f"class {name} has {'only one distinct document' if n else 'no documents'}"
    return f"class {name} has {n} distinct documents, fewer than the {least} a calibration map needs"

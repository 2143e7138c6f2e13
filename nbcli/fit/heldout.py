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

import numpy as np

from nbcli.fit.exact_sums import doc_norms
from nbcli.fit.heldout_sample import HeldOut, groups_for
from nbcli.nb.counts import sorted_distinct


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
    distinct = [len(sorted_distinct(heldout.keys[heldout.cls == c])) for c in range(len(classes))]
    n = min(distinct)
    if n >= least:
        return None
    name = classes[distinct.index(n)]
    if n < 2:
        return f"class {name} has {'only one distinct document' if n else 'no documents'}"
    return f"class {name} has {n} distinct documents, fewer than the {least} a calibration map needs"

"""The counts after learning one message that the model does not hold yet,
in one pass over the message's terms: the usual case of spamd's TELL and
of `nbcli learn MODEL MSG` (`fit.learning.learn_update` takes it here).

`fit.learning`'s general path (`plan_learning`, then `apply`) is written
for any number of documents, moves between classes and forgetting: it
merges the terms of all the changes into the model's, adds each change
with `np.add.at`, and plans each document against the record. For one new
message learned into a class the model has, the counts read for it
(`Counts.of_terms` of its terms) are a subset of its own distinct terms,
so the message's terms are the terms after, in its order, and each of its
counts is added once: about half the numpy steps, which a TELL pays in
its reply time (issue 30: a TELL at most 2x a CHECK).

It gives the same counts as the general path, array for array (the same
values, dtypes and texts; the transformed sums by the same helper,
`transformed_values`): tests/fit/test_learn_one.py checks the two against
each other for each event model. Anything else (several documents, a
message the record holds, a new class, EM's expected counts) is None
here and takes the general path.

No I/O.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np

from nbcli.nb.counts import DAY, Counts, insert_texts
from nbcli.nb.record import Record

# `docs` below is a `fit.analysed.Analysed`, not imported: this module sits below it in the import chain


def new_message_class(counts: Counts, docs) -> int | None:
    """The index in `counts.classes` of the class one message is learned
    into, where this path applies: one document, labelled with a class the
    counts have, which the record does not hold in any class, counts
    without EM's expected counts. None otherwise (`fit.learning`'s general
    path)."""
    if len(docs) != 1 or counts.expected_tf is not None or docs.labels[0] not in counts.classes:
        return None
    if len(counts.record.find(docs.digest[0])):  # learned already, or to be moved
        return None
    return counts.classes.index(docs.labels[0])


def learned(counts: Counts, docs, cls: int, transforms) -> tuple[Counts, Record] | None:
    """(the counts after learning the one document of `docs` into class
    `cls`, the record entry it adds): what `learning.apply` and
    `learning.plan_learning` give for it. `counts` holds the terms of the
    document that the model has (`Counts.of_terms`); None if it holds
    another term (then the general path merges them). transforms:
    complement's (tf_log, length_norm), for its transformed sums."""
    hashes, values = docs.pair_hash, docs.pair_count  # one document: its distinct terms, ascending
    n, n_classes = len(hashes), len(counts.classes)
    old = np.searchsorted(hashes, counts.hashes)
    if len(old) and (old[-1] >= n or not np.array_equal(hashes[old], counts.hashes)):
        return None

    def placed(a, dtype):
        out = np.zeros((n_classes, n), dtype=dtype)
        out[:, old] = a
        return out

    tf = placed(counts.tf, counts.tf.dtype)
    tf[cls] += values
    df = None
    if counts.df is not None:
        df = placed(counts.df, np.int64)
        df[cls] += 1
    fit = None
    if counts.fit is not None:
        fit = placed(counts.fit, np.float64)
        fit[cls] += transformed_values(values, np.zeros(n, dtype=np.int64), 1, transforms)
    bump = np.zeros(n_classes)
    bump[cls] = 1.0
    last_seen = np.zeros(n, dtype=np.int32)
    last_seen[old] = counts.last_seen
    np.maximum(last_seen, (docs.when[:1] // DAY).astype(np.int32), out=last_seen)
    blob, offsets = with_new_texts(counts, docs, hashes, old)
    after = dataclasses.replace(
        counts,
        class_count=counts.class_count + bump,
        hashes=hashes,
        blob=blob,
        offsets=offsets,
        tf=tf,
        df=df,
        fit=fit,
        last_seen=last_seen,
        mail_docs=counts.mail_docs + int(docs.mail[0]),
    )
    entry = Record.build(docs.digest[[0]], [cls], np.ones(1, np.int64), docs.message_id[[0]], docs.when[[0]])
    return after.settled(), entry


def transformed_values(values: np.ndarray, change_of_pair: np.ndarray, n_changes: int, transforms) -> np.ndarray:
    """Complement's transformed term counts of documents' (term, count)
    pairs (`change_of_pair`: which of `n_changes` documents each pair is
    of): tf-log, then each document's length norm, summed as training sums
    them, then rounded to training's fixed-point grid
    (`exact_sums.FIT_SCALE`), so that learned sums are those `train`
    gives, exactly while they stay below 2^17."""
    from nbcli.fit.exact_sums import FIT_SCALE, doc_norms

    tf_log, length_norm = transforms
    values = values.astype(np.float64)
    if tf_log:
        values = np.log1p(values)
    if length_norm:
        norms = doc_norms(change_of_pair, values, n_changes)
        norms[norms == 0] = 1.0
        values = values / norms[change_of_pair]
    return np.rint(values * FIT_SCALE) / FIT_SCALE


def with_new_texts(counts: Counts, docs, merged: np.ndarray, old_cols: np.ndarray):
    """(blob, offsets) of the terms `merged` (ascending): those of `counts`
    (at old_cols) with their texts, the others with the texts `docs` met."""
    is_new = np.ones(len(merged), dtype=bool)
    is_new[old_cols] = False
    new_cols = np.flatnonzero(is_new)
    encoded = [text.encode("utf-8", "surrogatepass") for text in docs.texts.of(merged[new_cols].tolist())]
    new_offsets = np.array([0, *itertools.accumulate(map(len, encoded))], dtype=np.int64)
    new_blob = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    at = np.searchsorted(counts.hashes, merged[new_cols])
    return insert_texts(counts.blob, counts.offsets, at, new_blob, new_offsets)

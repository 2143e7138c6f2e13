"""The sum of term digests a model id is computed from (`term_sum`), and
that sum carried from one journal update to the next (`after_update`). No I/O.

A model id (`store.payload.compute_model_id`) covers a model's terms as a
sum, mod 2^64, of one digest per term, so that the sum is independent of
the terms' order and can be taken apart: a model read through its journal
(`nb.overlay.JournalView`) has its base's sum less the digests of the terms
the updates changed plus their new ones.

Each update a writer appends carries the sum of the model it leaves
(`Update.terms`): the sum before it (the last update's, or the model file's
own when the journal is empty) less the digests of the update's terms as
the model had them, plus those of the terms as the update leaves them, in
O(the update). A reader then has its model id without touching the
journal's terms (`store.payload.model_id`: a filter's header needs the id
before its first message). A journal whose updates carry no sum (written
before the sums were kept, or after an update that changed the classes,
which changes every term's digest) has the id computed from its terms, as
before.
"""

from __future__ import annotations

import numpy as np

_FMIX = (np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53))  # MurmurHash3's 64-bit finaliser


def term_sum(hashes, tf, df=None) -> tuple[int, int]:
    """(sum mod 2^64 of one digest per term, number of terms): a term's
    digest mixes its hash with each of its counts per class (term counts,
    then document frequencies; as float64, so integer and float tables
    agree), one MurmurHash3 finaliser round per value, so that terms and
    counts moved about change the sum, while their order does not."""
    digests = np.array(hashes, dtype=np.uint64)
    shift = np.uint64(33)
    for table in (tf, df):
        if table is None:
            continue
        for row in np.asarray(table, dtype=np.float64):
            digests ^= np.ascontiguousarray(row).view(np.uint64)
            for factor in _FMIX:
                digests ^= digests >> shift
                digests *= factor
            digests ^= digests >> shift
    return int(np.add.reduce(digests, dtype=np.uint64)), len(digests)


def known_terms(classifier) -> tuple[int, int] | None:
    """The term sum of `classifier` where it is known without touching its
    terms: a view's, carried by its last update or taken by its model id;
    a model file's classifier's as stored in the file (`term_sum`, kept on
    it only when read with no update applied). None: not known."""
    if hasattr(classifier, "layers"):
        return getattr(classifier, "carried_terms", None)
    return getattr(classifier, "term_sum", None)


def after_update(before_sum: tuple[int, int] | None, before, classes: list, image) -> tuple[int, int] | None:
    """The term sum of the model an update leaves: before_sum, the model's
    (None: unknown, and so is the result); before, the Counts of the
    update's terms the model had (`Counts.of_terms`, in the model's
    `classes`); image, the update's (`nb.updates.Update.image`). None also
    when the update changed the classes (every term's digest changes).
    A term's values as a model has them after an update are those
    `Counts.settled` leaves (none below zero, document frequencies at most
    the class's documents; a term with all zeros is gone), the ones a view's
    layer and a model built by replaying both hold."""
    if before_sum is None or list(image.classes) != list(classes) or list(before.classes) != list(classes):
        return None
    had = np.asarray(before.hashes, dtype=np.uint64)  # ascending, as the image's
    pos = np.minimum(np.searchsorted(had, image.hashes), max(len(had) - 1, 0))
    cols = pos[had[pos] == image.hashes] if len(had) else pos[:0]
    count = np.asarray(before.class_count, dtype=np.float64)[:, None]
    old_df = None if before.df is None else np.minimum(np.asarray(before.df, dtype=np.float64)[:, cols], count)
    old = term_sum(np.asarray(before.hashes)[cols], np.asarray(before.tf)[:, cols], old_df)
    tf = np.maximum(np.asarray(image.tf, dtype=np.float64), 0.0)
    df = None
    alive = (tf != 0).any(axis=0)
    if image.df is not None:
        after_count = np.maximum(np.asarray(image.class_count, dtype=np.float64), 0.0)[:, None]
        df = np.minimum(np.maximum(np.asarray(image.df, dtype=np.float64), 0.0), np.trunc(after_count))
        alive |= (df != 0).any(axis=0)
    new = term_sum(np.asarray(image.hashes, dtype=np.uint64)[alive], tf[:, alive], None if df is None else df[:, alive])
    return (before_sum[0] - old[0] + new[0]) % (1 << 64), before_sum[1] - old[1] + new[1]

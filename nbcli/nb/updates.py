"""One learn or forget as a model's journal keeps it (`Update`, defined
in `nb.counts`), and a model's counts with a run of them applied
(`replay`). No I/O: the journal's bytes are `store.journal`, and
`store.modelfile.load` applies it.

An update is an after-image, not a difference: for every term the update's
documents touched, the term's counts after the update (all zero: it left
the vocabulary), its text and its last-seen day; the classes, documents per
class and mail documents after it; the model's meta after it; and the
record's changes, the entries it took out ((digest, class)) and those it
added. Why after-images: the values are what learning computed on the model
as it was (`fit.learning.apply`, the only code that changes counts), so a
run of updates gives, term for term, exactly the counts learning them one
after another gave, floats included (complement's transformed sums), and
a term that left the vocabulary and came back later keeps the last-seen
day the later update gave it. Applying a run is one pass (`replay`): for
every term the last update that touched it wins, every other term keeps the
base's values, and the record's changes are applied in order.

A journal record may hold an update as a difference instead (`nb.deltas`:
five times fewer bytes); a reader resolves it into this after-image before
anything here sees it.

Classes are named, not numbered, in an update (`known`: the classes the
update's record changes speak of; `classes`: the model's classes after it),
because learning may add a class and forgetting may take it out again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from nbcli.nb.counts import (  # Update: defined beside Counts, so that nb.deltas need not import this module
    Counts,
    Update,
    by_source,
    gather_texts,
    insert_texts,
    joined_texts,
    union_sorted,
)
from nbcli.nb.record import Record, record_after


def _rows_of(final: list, classes: list) -> tuple[np.ndarray, np.ndarray]:
    """(rows in `final`, rows in `classes`) of the classes both have."""
    both = [c for c in classes if c in final]
    return (
        np.array([final.index(c) for c in both], dtype=np.int64),
        np.array([classes.index(c) for c in both], dtype=np.int64),
    )


def last_images(updates: list[Update]) -> Counts:
    """Every term a run of updates touched (hashes ascending), with its
    values as the last update touching it left them (a term that left the
    vocabulary: all zeros, kept here), in the classes after the last update,
    with that update's classes, documents per class and mail documents. Its
    record is empty: the record's changes are `_record`'s. What `replay`
    lays over a model's counts, and what `nb.overlay` scores through."""
    return last_images_texts_later(updates, gather=True)[0]


def last_images_texts_later(updates: list[Update], gather: bool = False) -> tuple[Counts, Callable | None]:
    """(`last_images` of `updates`, None), or, for a run of several updates
    and gather False, (the same without its terms' texts (blob and offsets
    None), a function that gathers them): the updates' texts are joined
    into one copy at once (not held through the records' buffers) and
    gathered when something reads them. A reader scoring through a journal
    reads no term's text unless it explains (`nb.overlay`): gathering the
    129k texts of the 195 records after a checkpoint at 1.41M terms took
    23 ms of a bulk predict's load, joining them 3 ms."""
    final = list(updates[-1].image.classes)
    texts = None
    images = [u.image for u in updates]
    if len(images) == 1:  # its terms are distinct and ascending already (`Update.of`): as they are
        one = images[0]
        winners, blob, offsets = one.hashes, one.blob, one.offsets
        last_seen = one.last_seen.astype(np.int32, copy=False)

        def table(name: str, dtype=None):
            part = getattr(one, name)
            return None if part is None else part.astype(dtype or part.dtype, copy=False)

    else:
        winners, win_update, win_col = _last_touching([u.hashes for u in images])
        same = all(list(u.classes) == final for u in images)
        # each update's winners, found in one sort: a long journal's replay stays O(its terms)
        winning = by_source(win_update, len(images))

        sizes = [len(u.hashes) for u in images]
        # many updates of a few terms each (a reader's records after a checkpoint): their tables side by
        # side, then one gather each (the 195 records after a checkpoint at 1.41M terms: 23 -> 14 ms for
        # this function, 3 gathers instead of 585); where one update holds half the terms or more (a
        # checkpoint with the records after it, in a replay), each update's winning columns put in place:
        # a reader's peak memory does not hold a second copy of that update's table
        side_by_side = same and max(sizes) * 2 <= sum(sizes)
        if side_by_side:
            firsts = np.cumsum([0, *sizes[:-1]])
            at = firsts[win_update] + win_col

        def table(name: str, dtype=None):
            parts = [getattr(u, name) for u in images]
            if any(p is None for p in parts):
                return None
            dtype = dtype or np.result_type(*[p.dtype for p in parts])
            if side_by_side:
                return np.take(np.concatenate(parts, axis=1, dtype=dtype), at, axis=1)  # C order, as the gathers give
            out = np.zeros((len(final), len(winners)), dtype=dtype)
            for r, mine in winning:
                u = images[r]
                if same:
                    out[:, mine] = np.take(getattr(u, name), win_col[mine], axis=1)
                else:
                    to, frm = _rows_of(final, u.classes)
                    out[np.ix_(to, mine)] = getattr(u, name)[np.ix_(frm, win_col[mine])]
            return out

        last_seen = np.zeros(len(winners), dtype=np.int32)
        for r, mine in winning:
            last_seen[mine] = images[r].last_seen[win_col[mine]]
        if gather:
            blob, offsets = gather_texts([(u.blob, u.offsets) for u in images], win_update, win_col)
        else:
            blob = offsets = _PENDING
            texts = _joined_texts([(u.blob, u.offsets) for u in images], win_update, win_col)
    counts = Counts(
        final,
        np.asarray(images[-1].class_count, dtype=np.float64).copy(),
        winners,
        blob,
        offsets,
        table("tf"),
        table("df"),
        table("fit", np.float64),
        last_seen,
        Record.empty(),
        int(images[-1].mail_docs),
    )
    return counts, texts


def _joined_texts(sources: list, which: np.ndarray, cols: np.ndarray) -> Callable:
    """A function giving (blob, offsets) of term k = term cols[k] of
    sources[which[k]] (`gather_texts`'s), the sources' texts joined into one
    copy now (`joined_texts`; offsets 4 bytes each where the bytes are few
    enough)."""
    blob, offsets, first = joined_texts(sources)
    wide = np.int64 if len(blob) >= 1 << 31 else np.int32
    offsets, at = offsets.astype(wide), (first[which] + cols).astype(wide)
    return lambda: gather_texts([(blob, offsets)], np.zeros(len(at), dtype=np.int64), at)


def _last_touching(hashes: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(every distinct hash, ascending; the index of the last of `hashes`
    (each ascending: an update's terms) holding it; its place there).
    One stable sort of the runs end to end (numpy merges them: timsort),
    equal hashes left in the updates' order, so a run's last is the last
    update's. Its peak is three arrays of the runs' length (the
    concatenation, the sort's order, the hashes in that order), where
    np.unique with every place's update and column beside it held six or
    more: a reader's layer of the 195 records after a checkpoint at 1.41M
    terms with 1,000 updates peaked 6 MB lower (28 -> 22 MB over its
    start) and took 45 ms instead of 62."""
    lengths = np.array([len(h) for h in hashes], dtype=np.int64)
    starts = np.zeros(len(hashes) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    every = np.concatenate(hashes)
    order = np.argsort(every, kind="stable")
    ordered = every[order]
    del every
    keep = np.empty(len(ordered), dtype=bool)
    if len(ordered):
        keep[-1] = True
        np.not_equal(ordered[1:], ordered[:-1], out=keep[:-1])
    winners, last = ordered[keep], order[keep]
    del order, ordered, keep
    # each place's update, 2 bytes a place where they are that few (a search of `starts` took longer)
    which = np.repeat(np.arange(len(hashes), dtype=np.uint16 if len(hashes) <= 1 << 16 else np.int64), lengths)
    update = which[last].astype(np.int64)
    return winners, update, last - starts[update]


def replay(base: Counts, updates: list[Update]) -> Counts:
    """`base` with `updates` applied in order (see the module docstring)."""
    if not updates:
        return base
    top = last_images(updates)
    final, n_classes = top.classes, len(top.classes)
    merged = union_sorted(np.asarray(base.hashes, dtype=np.uint64), top.hashes)
    n_terms = len(merged)
    base_cols = np.searchsorted(merged, base.hashes)
    top_cols = np.searchsorted(merged, top.hashes)
    to, frm = _rows_of(final, base.classes)

    def table(name: str, dtype=None):
        below, above = getattr(base, name), getattr(top, name)
        if below is None:
            return None
        if above is None:  # every update of a model with this table carries it (`Update.of`): a crafted one
            raise ValueError(f"an update has no {name} table, which the model has")
        out = np.zeros((n_classes, n_terms), dtype=dtype or np.result_type(below.dtype, above.dtype))
        out[np.ix_(to, base_cols)] = below[frm]
        out[:, top_cols] = above
        return out

    last_seen = np.zeros(n_terms, dtype=np.int32)
    last_seen[base_cols] = base.last_seen
    last_seen[top_cols] = top.last_seen
    # texts: a term of the base keeps its text (a hash names one term); the
    # new ones come from the update that last touched them
    at = np.searchsorted(base.hashes, top.hashes)
    if len(base.hashes):
        new = np.flatnonzero(base.hashes[np.minimum(at, len(base.hashes) - 1)] != top.hashes)
    else:  # (a base of no terms: the journal's differences, resolved over a state of none of their terms)
        new = np.arange(len(top.hashes))
    new_blob, new_offsets = gather_texts([(top.blob, top.offsets)], np.zeros(len(new), np.int64), new)
    blob, offsets = insert_texts(base.blob, base.offsets, at[new], new_blob, new_offsets)
    expected_tf = expected_docs = None
    if base.expected_tf is not None and base.expected_docs is not None:
        expected_tf = np.zeros((n_classes, n_terms))
        expected_tf[np.ix_(to, base_cols)] = base.expected_tf[frm]
        expected_docs = np.zeros(n_classes)
        expected_docs[to] = base.expected_docs[frm]
    counts = Counts(
        final,
        top.class_count.copy(),
        merged,
        blob,
        offsets,
        table("tf"),
        table("df"),
        table("fit", np.float64),
        last_seen,
        record_after(base.record, base.classes, updates, final),
        top.mail_docs,
        expected_tf,
        expected_docs,
    )
    return counts.settled()


_PENDING: Any = None  # the texts of `last_images_texts_later`'s Counts, until its function gathers them

"""One learn or forget as a model's journal keeps it (`Update`), and a
model's counts with a run of them applied (`replay`). No I/O: the journal's
bytes are `store.journal`, and `store.modelfile.load` applies it.

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

Classes are named, not numbered, in an update (`known`: the classes the
update's record changes speak of; `classes`: the model's classes after it),
because learning may add a class and forgetting may take it out again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from nbcli.nb.counts import (
    Counts,
    by_source,
    found_in,
    gather_texts,
    insert_texts,
    joined_texts,
    sorted_distinct,
    union_sorted,
)
from nbcli.nb.record import Record


@dataclass
class Update:
    """One learn or forget (see the module docstring). image: the Counts of
    the terms the update touched, after it (hashes ascending; a term that
    left has all zeros), with the classes, documents per class and mail
    documents after it, and as its record the entries the update added
    (their labels index `known`, not the image's classes); removed_digest
    (r, 2) and removed_label (r,) (into `known`): the entries it took out;
    terms: the sum of term digests of the model the update leaves
    (`nb.term_digests`), which a journal checkpoint carries where its
    writer knew it; None otherwise.
    totals: a journal checkpoint's (`nb.overlay.JournalView.as_checkpoint`)
    totals and number of terms of the model it leaves (ExactTotals of the
    weights' source table, int); None otherwise."""

    image: Counts
    known: list
    meta: dict
    removed_digest: np.ndarray
    removed_label: np.ndarray
    terms: tuple[int, int] | None = None
    totals: tuple | None = None

    @classmethod
    def of(cls, before: Counts, after: Counts, touched: np.ndarray, removed, added: Record, meta: dict) -> Update:
        """The update that took `before` (in the classes the change was
        planned in) to `after`: `touched` the hashes of the documents that
        changed, `removed` the indices of the record entries of `before`
        taken out, `added` the entries added (labels of `before`'s classes)."""
        hashes = sorted_distinct(np.asarray(touched, dtype=np.uint64))
        if np.array_equal(hashes, after.hashes):  # every term of `after` (a learn's own counts): copied whole

            def image(a):
                return None if a is None else a.copy()

            last_seen = np.array(after.last_seen, dtype=np.int32)
            blob, offsets = np.array(after.blob, dtype=np.uint8), np.array(after.offsets, dtype=np.int64)
        else:
            pos, present = found_in(after.hashes, hashes)
            cols = pos[present]

            def image(a):
                if a is None:
                    return None
                out = np.zeros((len(after.classes), len(hashes)), dtype=a.dtype)
                out[:, present] = a[:, cols]
                return out

            last_seen = np.zeros(len(hashes), dtype=np.int32)
            last_seen[present] = after.last_seen[cols]
            which = np.zeros(len(hashes), dtype=np.int64)
            source = np.zeros(len(hashes), dtype=np.int64)
            source[present] = cols
            which[~present] = 1  # a term that left: no text
            nothing = (np.zeros(0, np.uint8), np.zeros(2, np.int64))  # one term without text
            blob, offsets = gather_texts([(after.blob, after.offsets), nothing], which, source)
        removed = np.asarray(removed, dtype=np.int64)
        counts = Counts(
            list(after.classes),
            np.asarray(after.class_count, dtype=np.float64).copy(),
            hashes,
            blob,
            offsets,
            image(after.tf),
            image(after.df),
            image(after.fit),
            last_seen,
            added,
            int(after.mail_docs),
        )
        return cls(
            counts,
            list(before.classes),
            dict(meta),
            np.asarray(before.record.digest[removed], dtype=np.uint64).reshape(-1, 2),
            np.asarray(before.record.label[removed], dtype=np.int32),
        )


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
    new = np.flatnonzero(base.hashes[np.minimum(at, max(len(base.hashes) - 1, 0))] != top.hashes)
    if not len(base.hashes):
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


_NO_DIGESTS = np.zeros((0, 2), dtype=np.uint64)
_PENDING: Any = None  # the texts of `last_images_texts_later`'s Counts, until its function gathers them


def record_after(record: Record, classes: list, updates: list[Update], final: list) -> Record:
    """`record` (of a model of `classes`) with the updates' changes applied
    in order, its labels in the `final` classes: an entry (digest, class)
    ends as the last change made it (gone, or added to: copies summed, the
    first Message-ID, the latest date, as `Record.plus` combines them)."""
    changed: dict[tuple, tuple | None] = {}
    # the record's entries of every update's added documents, found at once (a checkpoint adds every
    # document learned; a reader lays the records after it, one document each, in one call: 8.8 ->
    # 3.5 ms for 195 of them at 1.41M terms, one search each before)
    names = [u.known[int(label)] for u in updates for label in u.image.record.label.tolist()]
    found = record.positions(
        np.concatenate([_NO_DIGESTS] + [u.image.record.digest for u in updates]).astype(np.uint64, copy=False),
        [classes.index(c) if c in classes else -1 for c in names],
    )
    start = 0
    for u in updates:
        for digest, label in zip(u.removed_digest.tolist(), u.removed_label.tolist()):
            changed[(digest[0], digest[1], u.known[label])] = None
        added = u.image.record
        in_record = found[start : start + len(added)]
        start += len(added)
        for i in range(len(added)):
            key = (int(added.digest[i, 0]), int(added.digest[i, 1]), u.known[int(added.label[i])])
            entry = (int(added.copies[i]), int(added.message_id[i]), int(added.when[i]))
            if key in changed:
                old = changed[key]
            elif in_record[i] >= 0:
                at = int(in_record[i])
                old = (int(record.copies[at]), int(record.message_id[at]), int(record.when[at]))
            else:
                old = None
            if old is not None:
                entry = (old[0] + entry[0], old[1] or entry[1], max(old[2], entry[2]))
            changed[key] = entry
    mapping = np.array([final.index(c) if c in final else -1 for c in classes], dtype=np.int64)
    if not changed:
        return record if list(classes) == final else record.relabelled(mapping)
    keep = np.ones(len(record), dtype=bool)
    keys = list(changed)
    found = record.positions(
        np.array([k[:2] for k in keys], dtype=np.uint64).reshape(-1, 2),
        [classes.index(k[2]) if k[2] in classes else -1 for k in keys],
    )
    keep[found[found >= 0]] = False
    kept = dataclasses.replace(
        record,
        digest=record.digest[keep],
        label=record.label[keep],
        copies=record.copies[keep],
        message_id=record.message_id[keep],
        when=record.when[keep],
    )
    new = [(key, entry) for key, entry in changed.items() if entry is not None]
    if list(classes) == final:  # the kept entries in order, the new ones (none of them kept) put in place
        return kept.inserted(
            np.array([k[:2] for k, _ in new], dtype=np.uint64).reshape(-1, 2),
            [final.index(k[2]) for k, _ in new],
            [e[0] for _, e in new],
            [e[1] for _, e in new],
            [e[2] for _, e in new],
        )
    return Record.build(
        np.concatenate([kept.digest, np.array([k[:2] for k, _ in new], dtype=np.uint64).reshape(-1, 2)]),
        np.concatenate([mapping[kept.label] if len(kept) else kept.label, [final.index(k[2]) for k, _ in new]]),
        np.concatenate([kept.copies, np.array([e[0] for _, e in new], dtype=np.int64)]),
        np.concatenate([kept.message_id, np.array([e[1] for _, e in new], dtype=np.uint64)]),
        np.concatenate([kept.when, np.array([e[2] for _, e in new], dtype=np.int64)]),
    )

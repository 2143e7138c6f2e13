"""A model's sufficient statistics: `Counts`, what learning, forgetting,
merging, pruning and the dump work on (see `fit.learning` for how they
change). Plain arrays and the record of learned documents, nothing of the
event models: the Classifier of some counts is `classifier.classifier_of`.
And `Update`, one learn or forget's change of them as a model's journal
keeps it (applied by `nb.updates`; here so that `nb.deltas`, which makes
them from differences, sits beside `nb.updates` rather than above it).
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from nbcli.nb.record import Record

DAY = 86400  # seconds; the record's dates and the terms' last-seen days count days since 1970-01-01


def _today() -> int:
    return int(datetime.datetime.now(datetime.UTC).timestamp() // DAY)


# The last-seen days a date can hold (0001-01-01..9999-12-31), since 1970-01-01: what `nbcli dump` writes as
# YYYY-MM-DD and `nbcli load` reads back, and all that readers accept (`store.checks.days_within`)
FIRST_DAY = (datetime.date.min - datetime.date(1970, 1, 1)).days
LAST_DAY = (datetime.date.max - datetime.date(1970, 1, 1)).days


def _creation_day(classifier) -> int:
    """The day a model was created (its meta), or today: the last-seen day
    of the terms of a model from before nbcli kept one. A time at the edge
    of what a date holds, in a zone that puts its UTC day past it, is the
    edge's day."""
    try:
        day = int(datetime.datetime.fromisoformat(classifier.meta.get("created")).timestamp() // DAY)
    except (TypeError, ValueError, OverflowError, OSError):
        return _today()
    return min(max(day, FIRST_DAY), LAST_DAY)


@dataclass
class Counts:
    """A model's sufficient statistics (see `fit.learning`).

    classes (C,) sorted by name; class_count (C,) documents; hashes (V,)
    uint64 ascending; blob, offsets: the terms' UTF-8 texts; tf (C, V)
    term counts; df (C, V) document frequencies or None; fit (C, V)
    complement's transformed sums or None; last_seen (V,) int32 days;
    record; mail_docs: how many of the documents were mail; expected_tf
    (C, V) and expected_docs (C,): a model trained by EM, the unlabelled
    documents' expected counts (times their weight), kept apart from the
    exact counts of the documents learned (None: not one), so that learning
    adds to those exactly and the model is always their sum."""

    classes: list
    class_count: np.ndarray
    hashes: np.ndarray
    blob: np.ndarray
    offsets: np.ndarray
    tf: np.ndarray
    df: np.ndarray | None
    fit: np.ndarray | None
    last_seen: np.ndarray
    record: Record
    mail_docs: int
    expected_tf: np.ndarray | None = None
    expected_docs: np.ndarray | None = None

    @classmethod
    def of(cls, classifier) -> Counts:
        whole = getattr(classifier, "whole_counts", None)
        if whole is not None:  # a model read through its journal (`nb.overlay.JournalView`)
            return whole()
        model, vocab = classifier.model, classifier.vocabulary
        n_terms = len(vocab)
        tf = np.asarray(model.feature_count)
        expected = getattr(classifier, "expected", None)
        if expected is not None:  # the model's counts less the expected ones: the learned documents', exactly
            tf = np.rint(np.asarray(tf, dtype=np.float64) - expected[0])
        tf = tf.astype(np.int64) if tf.dtype.kind in "iu" or np.array_equal(tf, np.round(tf)) else tf.astype(float)
        df = None
        if model.doc_freq is not None:
            df = np.asarray(model.doc_freq, dtype=np.float64)
            if expected is not None:  # a Bernoulli EM model: its document frequencies are expected too
                df = np.rint(df - expected[0])
            df = df.astype(np.int64)
        fit = None
        if model.kind == "complement" and (model.tf_log or model.length_norm) and model.fit_count is not None:
            fit = np.asarray(model.fit_count, dtype=np.float64)
        last_seen = classifier.last_seen
        if last_seen is None:  # a model from before nbcli kept it: its creation day
            last_seen = np.full(n_terms, _creation_day(classifier), dtype=np.int32)
        return cls(
            list(model.classes),
            np.asarray(model.class_count, dtype=np.float64).copy()
            if expected is None
            else np.rint(np.asarray(model.class_count, dtype=np.float64) - expected[1]),
            np.asarray(vocab.hashes, dtype=np.uint64),
            np.asarray(vocab.blob, dtype=np.uint8),
            np.asarray(vocab.offsets, dtype=np.int64),
            tf,
            df,
            fit,
            np.asarray(last_seen, dtype=np.int32),
            classifier.record if classifier.record is not None else Record.empty(),
            int(classifier.meta.get("mail_documents", 0)),
            None if expected is None else np.asarray(expected[0], dtype=np.float64).copy(),
            None if expected is None else np.asarray(expected[1], dtype=np.float64).copy(),
        )

    @classmethod
    def of_terms(cls, classifier, hashes: np.ndarray, whole_dtype: bool = True, texts: bool = True) -> Counts:
        """`Counts.of(classifier)` restricted to the terms of `hashes` the
        model has (any order, repeats allowed): what a learn or forget of
        documents of those terms reads (`fit.learning.learn_update`), in
        O(terms) time and memory, not O(model). Every value is the one
        `Counts.of` gives for the same column, dtypes included (a float
        table is int64 when the whole of it is integral, as there; with
        whole_dtype False, when the columns taken are: no pass over the
        whole table, for a reader of the journal). texts False: every term's
        text empty (a reader resolving differences for a view: `nb.deltas`).
        Not for a model trained by EM (its expected counts: `Counts.of`)."""
        own = getattr(classifier, "counts_of_terms", None)
        if own is not None:  # a model read through its journal (`nb.overlay.JournalView`)
            return own(hashes, texts)
        model, vocab = classifier.model, classifier.vocabulary
        if getattr(classifier, "expected", None) is not None:
            raise ValueError("an EM model's counts are read whole (Counts.of)")
        full = np.asarray(vocab.hashes, dtype=np.uint64)
        want = sorted_distinct(np.asarray(hashes, dtype=np.uint64))
        pos, hit = found_in(full, want)
        cols = pos[hit]
        whole = np.asarray(model.feature_count)
        tf = whole[:, cols]
        if not whole_dtype:  # (a journal's reader: the columns' own values, no pass over the whole table)
            integral = whole.dtype.kind in "iu" or bool(np.array_equal(tf, np.round(tf)))
        else:
            integral = whole.dtype.kind in "iu" or all(
                np.array_equal(part, np.round(part)) for part in np.array_split(whole, max(1, whole.size >> 20), axis=1)
            )
        tf = tf.astype(np.int64) if integral else tf.astype(float)
        df = None if model.doc_freq is None else np.asarray(model.doc_freq)[:, cols].astype(np.float64).astype(np.int64)
        fit = None
        if model.kind == "complement" and (model.tf_log or model.length_norm) and model.fit_count is not None:
            fit = np.asarray(model.fit_count, dtype=np.float64)[:, cols]
        last_seen = classifier.last_seen
        if last_seen is None:
            last_seen = np.full(len(cols), _creation_day(classifier), dtype=np.int32)
        else:
            last_seen = np.asarray(last_seen, dtype=np.int32)[cols]
        blob, offsets = (
            gather_texts(
                [(np.asarray(vocab.blob, dtype=np.uint8), np.asarray(vocab.offsets, dtype=np.int64))],
                np.zeros(len(cols), np.int64),
                cols,
            )
            if texts
            else (np.zeros(0, dtype=np.uint8), np.zeros(len(cols) + 1, dtype=np.int64))
        )
        return cls(
            list(model.classes),
            np.asarray(model.class_count, dtype=np.float64).copy(),
            full[cols],
            blob,
            offsets,
            tf,
            df,
            fit,
            last_seen,
            classifier.record if classifier.record is not None else Record.empty(),
            int(classifier.meta.get("mail_documents", 0)),
        )

    @classmethod
    def empty(cls, classes, doc_freq: bool, fit: bool) -> Counts:
        n = len(classes)
        return cls(
            sorted(classes),
            np.zeros(n),
            np.zeros(0, np.uint64),
            np.zeros(0, np.uint8),
            np.zeros(1, np.int64),
            np.zeros((n, 0), np.int64),
            np.zeros((n, 0), np.int64) if doc_freq else None,
            np.zeros((n, 0)) if fit else None,
            np.zeros(0, np.int32),
            Record.empty(),
            0,
        )

    def with_classes(self, names: Iterable[str]) -> Counts:
        """The counts over the union of their classes and `names` (sorted)."""
        classes = sorted(set(self.classes) | set(names))
        if classes == self.classes:
            return self
        rows = np.array([classes.index(c) for c in self.classes], dtype=np.int64)

        def grown(a):
            if a is None:
                return None
            out = np.zeros((len(classes), a.shape[1]), dtype=a.dtype)
            out[rows] = a
            return out

        class_count = np.zeros(len(classes))
        class_count[rows] = self.class_count
        expected_docs = None
        if self.expected_docs is not None:
            expected_docs = np.zeros(len(classes))
            expected_docs[rows] = self.expected_docs
        return dataclasses.replace(
            self,
            classes=classes,
            class_count=class_count,
            tf=grown(self.tf),
            df=grown(self.df),
            fit=grown(self.fit),
            record=self.record.relabelled(rows),
            expected_tf=grown(self.expected_tf),
            expected_docs=expected_docs,
        )

    def only_classes(self, names: list[str]) -> Counts:
        """The counts of classes `names` only (the others must hold no
        document of the record)."""
        rows = np.array([self.classes.index(c) for c in names], dtype=np.int64)
        new_of_old = np.full(len(self.classes), -1, dtype=np.int64)
        new_of_old[rows] = np.arange(len(rows))
        counts = dataclasses.replace(
            self,
            classes=list(names),
            class_count=self.class_count[rows],
            tf=np.ascontiguousarray(self.tf[rows]),
            df=None if self.df is None else np.ascontiguousarray(self.df[rows]),
            fit=None if self.fit is None else np.ascontiguousarray(self.fit[rows]),
            record=self.record.relabelled(new_of_old),
        )
        return counts.settled()

    def columns(self, keep: np.ndarray) -> Counts:
        """The counts restricted to the terms (columns) `keep` (bool (V,))."""
        cols = np.flatnonzero(keep)
        blob, offsets = gather_texts([(self.blob, self.offsets)], np.zeros(len(cols), np.int64), cols)
        return dataclasses.replace(
            self,
            hashes=self.hashes[cols],
            blob=blob,
            offsets=offsets,
            tf=np.ascontiguousarray(self.tf[:, cols]),
            df=None if self.df is None else np.ascontiguousarray(self.df[:, cols]),
            fit=None if self.fit is None else np.ascontiguousarray(self.fit[:, cols]),
            last_seen=self.last_seen[cols],
            expected_tf=None if self.expected_tf is None else np.ascontiguousarray(self.expected_tf[:, cols]),
        )

    def settled(self) -> Counts:
        """These counts without terms whose counts are all zero, and never
        below zero (only a model pruned after learning a document can lose
        more than it has, by forgetting that document: see `fit.learning`).
        Clips in place."""
        for name in ("tf", "df", "fit"):
            a = getattr(self, name)
            if a is not None and a.size and a.min() < 0:
                np.maximum(a, 0, out=a)
        if self.class_count.min() < 0:
            self.class_count = np.maximum(self.class_count, 0)
        if self.df is not None:
            np.minimum(self.df, self.class_count[:, None].astype(np.int64), out=self.df)
        keep = (self.tf != 0).any(axis=0)
        if self.df is not None:
            keep |= (self.df != 0).any(axis=0)
        if self.expected_tf is not None:  # a term of unlabelled documents only
            keep |= (self.expected_tf != 0).any(axis=0)
        return self if keep.all() else self.columns(keep)


def gather_texts(sources, which: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(blob, offsets) of terms taken from several (blob, offsets) sources:
    term k is term cols[k] of sources[which[k]]. O(the terms gathered and
    their bytes): no source's texts or offsets are copied whole (a learn
    gathers a few terms of a big vocabulary and of a journal's layers)."""
    which = np.asarray(which, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    small = [s for s, (_, o) in enumerate(sources) if len(o) <= 8 * len(cols) + 1024]
    if len(small) > 2 and sum(len(sources[s][1]) for s in small) <= max(_GATHER_CHUNK, 8 * len(cols)):
        # many small sources (a journal's updates): join them into one, then one gather per
        # source left (a big vocabulary is never joined: that would copy it whole)
        joined_blob, joined_offsets, first = joined_texts([sources[s] for s in small])
        joined = (joined_blob, joined_offsets)
        big = sorted(set(range(len(sources))) - set(small))
        renumber = np.zeros(len(sources), dtype=np.int64)
        renumber[big] = np.arange(1, len(big) + 1)
        shift = np.zeros(len(sources), dtype=np.int64)
        shift[small] = first
        return gather_texts([joined] + [sources[s] for s in big], renumber[which], shift[which] + cols)
    start = np.zeros(len(cols), dtype=np.int64)
    length = np.zeros(len(cols), dtype=np.int64)
    parts = []
    for s, mine in by_source(which, len(sources)):
        blob, source_offsets = sources[s]
        begin = np.asarray(source_offsets[cols[mine]], dtype=np.int64)
        start[mine] = begin
        length[mine] = np.asarray(source_offsets[cols[mine] + 1], dtype=np.int64) - begin
        parts.append((mine, blob))
    offsets = np.zeros(len(cols) + 1, dtype=np.int64)
    np.cumsum(length, out=offsets[1:])
    out = np.empty(offsets[-1], dtype=np.uint8)
    if len(parts) > 1 and offsets[-1] <= _COPY_CHUNK:
        # a few terms from several sources (a learn's, from a journal's layers and the base): one
        # index of each byte for all of them, then one copy per source
        within = np.arange(int(offsets[-1])) - np.repeat(offsets[:-1], length)
        source_of = np.repeat(which, length)
        at = np.repeat(start, length) + within
        for s, mine in by_source(source_of, len(sources)):
            out[mine] = sources[s][0][at[mine]]
        return out, offsets
    for mine, blob in parts:
        _copy_texts(out, offsets, blob, mine, start[mine], length[mine])
    return out, offsets


def joined_texts(sources) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(blob, offsets) of the texts of (blob, offsets) `sources` one after
    another, in one copy, and the index there of each source's first term:
    term c of source s is term first[s] + c of the joined texts."""
    first = np.zeros(len(sources), dtype=np.int64)
    np.cumsum([len(o) - 1 for _, o in sources[:-1]], out=first[1:])
    bases = np.zeros(len(sources) + 1, dtype=np.int64)
    np.cumsum([len(b) for b, _ in sources], out=bases[1:])
    offsets = np.concatenate(
        [np.asarray(o[:-1], dtype=np.int64) + base for (_, o), base in zip(sources, bases)] + [bases[-1:]]
    )
    return np.concatenate([np.asarray(b, dtype=np.uint8) for b, _ in sources]), offsets, first


def by_source(which: np.ndarray, n_sources: int) -> list[tuple[int, np.ndarray]]:
    """[(source, the positions k where which[k] is it)] for each source that
    occurs in `which` (each in [0, n_sources)), ascending; one sort, not one
    comparison per source: of 16-bit keys where the sources are that few,
    which numpy sorts stably by radix (0.4 ms for 129k, against 5.3 ms as
    64-bit keys)."""
    if n_sources == 1:
        return [(0, np.arange(len(which)))] if len(which) else []
    order = np.argsort(which.astype(np.uint16) if n_sources <= 1 << 16 else which, kind="stable")
    ordered = which[order]
    cuts = (np.flatnonzero(ordered[1:] != ordered[:-1]) + 1).tolist()
    return [(int(ordered[a]), order[a:b]) for a, b in zip([0, *cuts], [*cuts, len(order)]) if b > a]


def _copy_texts(out, offsets, blob, mine: np.ndarray, start: np.ndarray, length: np.ndarray) -> None:
    """Copy the texts of terms `mine` (their bytes at start, length in blob)
    to their places in out (offsets)."""
    to = offsets[mine]
    # runs of terms whose texts lie one after another in the source and in out
    # (learning a message inserts a few terms into a big vocabulary: a few runs)
    # are copied as slices; other terms a chunk at a time, through an index of
    # each byte (8 bytes a byte: all at once, it took 480 MB for a 1.4M-term model).
    # A slice costs about 0.6 us, the index about 10 us and 3.4 ns a byte: slices
    # while they are fewer than a run per _RUN_BYTES bytes (a learn's 50 short
    # terms of a big vocabulary: 37 us by slices, 12 us by the index)
    breaks = np.flatnonzero((start[1:] != start[:-1] + length[:-1]) | (to[1:] != to[:-1] + length[:-1])) + 1
    total = int(length.sum())
    if len(breaks) * _RUN_BYTES < total + 4 * _RUN_BYTES:
        firsts = np.concatenate([[0], breaks]).tolist()
        lasts = np.concatenate([breaks, [len(mine)]]).tolist()
        for a, b in zip(firsts, lasts):
            size = int(to[b - 1] + length[b - 1] - to[a])
            out[to[a] : to[a] + size] = blob[start[a] : start[a] + size]
        return
    step = max(1, len(mine) * _COPY_CHUNK // max(total, 1))  # terms per chunk of about _COPY_CHUNK bytes
    for a in range(0, len(mine), step):
        b = min(a + step, len(mine))
        lengths = length[a:b]
        within = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        out[np.repeat(to[a:b], lengths) + within] = blob[np.repeat(start[a:b], lengths) + within]


_RUN_BYTES = 200  # bytes of text a slice of its own is worth (`_copy_texts`)
_COPY_CHUNK = 1 << 15  # bytes of text copied at a time through an index of each byte: 256 KB an index array
_GATHER_CHUNK = 1 << 20  # offsets of small sources joined before one gather


def sorted_distinct(values) -> np.ndarray:
    """np.unique(values) (the distinct values, ascending) by one sort: numpy
    2's np.unique without return_index/inverse hashes instead, 2.5-6x
    slower for 64-bit hashes (12 us against 5 us for 200 values, 159 ms
    against 28 ms for 400k: numpy 2.4, this machine)."""
    return _distinct_of_sorted(np.sort(np.asarray(values).reshape(-1)))


def merged_distinct(arrays: list[np.ndarray]) -> np.ndarray:
    """The distinct values of several ascending arrays (vocabularies,
    a view's layers), ascending: one stable sort of them end to end, which
    numpy does by merging the runs it finds (timsort): 1.4 ms for two runs
    of 288k and 129k hashes, where `sorted_distinct`'s sort, which does not
    look for runs, takes 22 ms (and is 20-40% faster on values in no order)."""
    if not arrays:
        return np.zeros(0, dtype=np.uint64)
    return _distinct_of_sorted(np.sort(np.concatenate(arrays), kind="stable"))


def _distinct_of_sorted(values: np.ndarray) -> np.ndarray:
    if len(values) < 2:
        return values
    keep = np.empty(len(values), dtype=bool)
    keep[0] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


def found_in(sorted_values: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(where each of `values` is, whether it is there) in an ascending
    array of distinct values, by one binary search (positions clipped to
    the array; none found in an empty one)."""
    if not len(sorted_values):
        return np.zeros(len(values), dtype=np.int64), np.zeros(len(values), dtype=bool)
    pos = np.minimum(np.searchsorted(sorted_values, values), len(sorted_values) - 1)
    return pos, sorted_values[pos] == values


def union_sorted(sorted_hashes: np.ndarray, more: np.ndarray) -> np.ndarray:
    """np.union1d of a big sorted unique array and a few more values,
    without sorting the big one again (one insertion pass; union1d would
    hash or sort all of it: 1.4 s for 1.4M terms)."""
    extra = sorted_distinct(more)
    if len(sorted_hashes) == 0:
        return extra
    pos = np.searchsorted(sorted_hashes, extra)
    present = sorted_hashes[np.minimum(pos, len(sorted_hashes) - 1)] == extra
    return inserted(sorted_hashes, pos[~present], extra[~present])


def inserted(a: np.ndarray, at: np.ndarray, values: np.ndarray) -> np.ndarray:
    """np.insert(a, at, values) for a 1-D `a` and non-decreasing `at`
    (value j goes before a[at[j]]; len(a): at the end), in a's dtype:
    the same one pass, without np.insert's checks and sort of `at`, which
    were most of the time of inserting a learn's few terms (25 us a call)."""
    at = np.asarray(at, dtype=np.intp)
    out = np.empty(len(a) + len(at), dtype=a.dtype)
    new = at + np.arange(len(at))
    old = np.ones(len(out), dtype=bool)
    old[new] = False
    out[new] = values
    out[old] = a
    return out


def insert_texts(blob, offsets, at: np.ndarray, new_blob, new_offsets) -> tuple[np.ndarray, np.ndarray]:
    """(blob, offsets) of a vocabulary's texts with new terms' texts put in:
    new term j goes before old term at[j] (ascending; the old count: at the
    end), as np.insert places values. One pass over the bytes, whatever
    the size of the vocabulary (learning, a journal's replay)."""
    offsets, new_offsets = np.asarray(offsets), np.asarray(new_offsets)
    lengths = offsets[1:] - offsets[:-1]  # (np.diff's checks took longer than the difference, for a learn's terms)
    new_lengths = new_offsets[1:] - new_offsets[:-1]
    out_blob = inserted(np.asarray(blob, dtype=np.uint8), np.repeat(offsets[at], new_lengths), new_blob)
    out_lengths = inserted(lengths, at, new_lengths)
    out_offsets = np.zeros(len(out_lengths) + 1, dtype=np.int64)
    np.cumsum(out_lengths, out=out_offsets[1:])
    return np.asarray(out_blob, dtype=np.uint8), out_offsets


@dataclass
class Update:
    """One learn or forget as a model's journal keeps it: an after-image (see
    `nb.updates`, which applies a run of them). image: the Counts of
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
    weights' source table, int); None otherwise. before: the same of the
    model it was made from, where that was a view (`fit.learning.learn_update`
    through `JournalView.totals_state`; free there), from which a reader of
    a run of records moves by the last one's terms alone instead of the
    whole run's (`JournalView.plus`); None otherwise (and in a record
    written as a difference: resolving a run of them puts the run's terms
    in its last update's image, `nb.deltas`). made_from: see below."""

    image: Counts
    known: list
    meta: dict
    removed_digest: np.ndarray
    removed_label: np.ndarray
    terms: tuple[int, int] | None = None
    totals: tuple | None = None
    before: tuple | None = dataclasses.field(default=None, compare=False)
    # (the counts of the touched terms before, in the classes of the model it was made from; that model's
    # meta): what writing it as a difference needs (`Delta`); set by `fit.learning.learn_update`
    made_from: tuple | None = dataclasses.field(default=None, repr=False, compare=False)
    # (per term of the image) whose text is the state's, not the image's (none there): an update resolved
    # from a difference for a view (`nb.deltas.resolved`, texts_later; `nb.overlay.JournalView.plus`)
    inherited: np.ndarray | None = dataclasses.field(default=None, repr=False, compare=False)

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

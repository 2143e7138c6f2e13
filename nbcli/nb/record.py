"""The record of learned documents: which documents a model's counts hold.

No I/O. Like SpamAssassin's "seen" table and rspamd's learn cache, a model
keeps, for every document it learned (by `nbcli train` or `nbcli learn`),
an entry (content digest, class, copies, Message-ID hash, date); see
`identity` for what the digest covers. The record is what makes the
learning loop safe:

- learning a document again in the same class changes nothing;
- learning it in another class moves it: its counts leave the old class
  (all its copies) and enter the new one;
- forgetting it subtracts exactly what learning it added, and a document
  the record does not hold in that class is refused.

`copies` counts identical documents learned in one class (a corpus with a
message twice counts it twice, as batch training always has). The entries
are kept sorted by (digest, class), so a lookup is a binary search and the
record's arrays are the same whatever order the documents came in. Its
size is 40 bytes per distinct document.

`when`: POSIX seconds, the document's Date header, else the time it was
learned; `prune --unseen-since` reads the terms' last-seen days, which
learning derives from it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

ENTRY_BYTES = 44  # per entry: digest 16, class 4, copies 8, Message-ID 8, when 8


@dataclass
class Record:
    digest: np.ndarray  # (N, 2) uint64
    label: np.ndarray  # (N,) int32: class index
    copies: np.ndarray  # (N,) int64, >= 1
    message_id: np.ndarray  # (N,) uint64, 0 = none
    when: np.ndarray  # (N,) int64 POSIX seconds

    @classmethod
    def empty(cls) -> Record:
        return cls(
            np.zeros((0, 2), np.uint64),
            np.zeros(0, np.int32),
            np.zeros(0, np.int64),
            np.zeros(0, np.uint64),
            np.zeros(0, np.int64),
        )

    @classmethod
    def build(cls, digest, label, copies, message_id, when) -> Record:
        """Entries sorted by (digest, class), entries for the same document
        and class combined (copies added, the first Message-ID, the latest
        date)."""
        digest = np.asarray(digest, dtype=np.uint64).reshape(-1, 2)
        label = np.asarray(label, dtype=np.int32)
        copies = np.asarray(copies, dtype=np.int64)
        message_id = np.asarray(message_id, dtype=np.uint64)
        when = np.asarray(when, dtype=np.int64)
        if len(label) == 0:
            return cls.empty()
        if len(label) == 1:  # (a TELL's: nothing to sort or combine)
            return cls(digest.copy(), label.copy(), copies.copy(), message_id.copy(), when.copy())
        order = np.lexsort((label, digest[:, 1], digest[:, 0]))
        digest, label, copies, message_id, when = (
            digest[order],
            label[order],
            copies[order],
            message_id[order],
            when[order],
        )
        new = np.ones(len(label), dtype=bool)
        new[1:] = (digest[1:] != digest[:-1]).any(axis=1) | (label[1:] != label[:-1])
        if new.all():
            return cls(digest, label, copies, message_id, when)
        group = np.cumsum(new) - 1
        firsts = np.flatnonzero(new)
        n = len(firsts)
        summed = np.bincount(group, weights=copies, minlength=n).astype(np.int64)
        latest = np.full(n, np.iinfo(np.int64).min, dtype=np.int64)
        np.maximum.at(latest, group, when)
        ids = np.zeros(n, dtype=np.uint64)
        has = np.flatnonzero(message_id != 0)
        groups, first = np.unique(group[has], return_index=True)
        ids[groups] = message_id[has[first]]  # the first Message-ID met in each group
        return cls(digest[firsts], label[firsts], summed, ids, latest)

    def positions(self, digest, label) -> np.ndarray:
        """The index of the entry of each (digest (n, 2), class (n,)), -1
        where there is none: `find`'s binary search, for many at once."""
        digest = np.asarray(digest, dtype=np.uint64).reshape(-1, 2)
        label = np.asarray(label, dtype=np.int64)
        out = np.full(len(label), -1, dtype=np.int64)
        if not len(self) or not len(label):
            return out
        hi = self.digest[:, 0]
        start = np.searchsorted(hi, digest[:, 0], side="left")
        stop = np.searchsorted(hi, digest[:, 0], side="right")
        one = (stop - start) == 1  # most documents: one entry with their digest's high half
        at = np.minimum(start, len(hi) - 1)
        hit = one & (self.digest[at, 1] == digest[:, 1]) & (self.label[at] == label)
        out[hit] = at[hit]
        for k in np.flatnonzero(stop - start > 1).tolist():  # a document in several classes: a few entries
            for entry in self.find(digest[k]).tolist():
                if self.label[entry] == label[k]:
                    out[k] = entry
        return out

    def inserted(self, digest, label, copies, message_id, when) -> Record:
        """The record with new entries, none of whose (digest, class) it
        has, each put in its place: what `build` of all of them gives, in
        O(entries added x log N) searches and one copy of the arrays, not a
        sort of the whole record (a TELL's update adds one entry to a
        record of every message a site ever learned)."""
        digest = np.asarray(digest, dtype=np.uint64).reshape(-1, 2)
        if len(digest) != 1 or not len(self):  # one entry is what a learn adds; else sort them all
            return self.plus(Record.build(digest, label, copies, message_id, when))
        hi, lo, cls = int(digest[0, 0]), int(digest[0, 1]), int(np.asarray(label).reshape(-1)[0])
        at = int(np.searchsorted(self.digest[:, 0], np.uint64(hi), side="left"))
        stop = int(np.searchsorted(self.digest[:, 0], np.uint64(hi), side="right"))
        while at < stop and (int(self.digest[at, 1]), int(self.label[at])) < (lo, cls):
            at += 1  # the entries of one digest's high half: that document in its classes, a few
        if at < stop and (int(self.digest[at, 1]), int(self.label[at])) == (lo, cls):
            raise ValueError("the record already has this entry")
        return Record(
            np.insert(self.digest, at, digest, axis=0),
            np.insert(self.label, at, np.asarray(label, dtype=np.int32)),
            np.insert(self.copies, at, np.asarray(copies, dtype=np.int64)),
            np.insert(self.message_id, at, np.asarray(message_id, dtype=np.uint64)),
            np.insert(self.when, at, np.asarray(when, dtype=np.int64)),
        )

    def changes_to(self, other: Record) -> tuple[np.ndarray, Record]:
        """(the indices of this record's entries that `other` does not hold
        as they are, the entries of `other` this record does not hold as
        they are): taking out the first and adding the second makes this
        record `other` (a journal's checkpoint: `nb.overlay`)."""
        mine, theirs = self._rows(), other._rows()
        rows = np.ascontiguousarray(np.concatenate([mine, theirs]))
        # each row as one 48-byte value: equal rows are equal bytes (np.unique by rows, axis=0, took 3x as long)
        whole = rows.view(np.dtype((np.void, rows.shape[1] * rows.itemsize))).reshape(-1)
        _, inverse, counts = np.unique(whole, return_inverse=True, return_counts=True)
        single = counts[inverse.reshape(-1)] == 1  # a row in one record only (each record's rows are distinct)
        added = np.flatnonzero(single[len(mine) :])
        return np.flatnonzero(single[: len(mine)]), Record(
            other.digest[added], other.label[added], other.copies[added], other.message_id[added], other.when[added]
        )

    def _rows(self) -> np.ndarray:
        return np.column_stack(
            [
                np.asarray(self.digest, dtype=np.uint64).reshape(-1, 2),
                self.label.astype(np.uint64),
                self.copies.astype(np.uint64),
                np.asarray(self.message_id, dtype=np.uint64),
                np.asarray(self.when, dtype=np.int64).view(np.uint64),
            ]
        )

    def __len__(self) -> int:
        return len(self.label)

    def find(self, digest) -> np.ndarray:
        """Indices of the entries for this digest ((2,) uint64), in class order."""
        hi = self.digest[:, 0]
        start = int(np.searchsorted(hi, digest[0], side="left"))
        stop = int(np.searchsorted(hi, digest[0], side="right"))
        idx = np.arange(start, stop)
        return idx[self.digest[start:stop, 1] == digest[1]]

    def distinct_digests(self) -> np.ndarray:
        """The distinct documents of the record (whatever their class), as
        16-byte keys that sort and compare as the digests do."""
        rows = np.ascontiguousarray(np.asarray(self.digest, dtype=np.uint64).reshape(-1, 2))
        return np.unique(rows.view(np.dtype((np.void, 16))).ravel())

    def plus(self, other: Record) -> Record:
        return Record.build(
            np.concatenate([self.digest, other.digest]),
            np.concatenate([self.label, other.label]),
            np.concatenate([self.copies, other.copies]),
            np.concatenate([self.message_id, other.message_id]),
            np.concatenate([self.when, other.when]),
        )

    def without(self, idx) -> Record:
        keep = np.ones(len(self), dtype=bool)
        keep[np.asarray(idx, dtype=np.int64)] = False
        return Record(self.digest[keep], self.label[keep], self.copies[keep], self.message_id[keep], self.when[keep])

    def relabelled(self, new_of_old: np.ndarray) -> Record:
        """The record with class indices mapped through `new_of_old`."""
        label = np.asarray(new_of_old, dtype=np.int32)[self.label] if len(self) else self.label
        return Record.build(self.digest, label, self.copies, self.message_id, self.when)

    def documents_per_class(self, n_classes: int) -> np.ndarray:
        return np.bincount(self.label, weights=self.copies, minlength=n_classes).astype(np.int64)

    def arrays(self) -> dict:
        """The record as the model file's arrays."""
        return {
            "record_digest": np.ascontiguousarray(self.digest, dtype=np.uint64),
            "record_class": np.ascontiguousarray(self.label, dtype=np.int32),
            "record_copies": np.ascontiguousarray(self.copies, dtype=np.int64),
            "record_message_id": np.ascontiguousarray(self.message_id, dtype=np.uint64),
            "record_when": np.ascontiguousarray(self.when, dtype=np.int64),
        }

    @classmethod
    def from_arrays(cls, arrays: dict, n_classes: int) -> Record:
        """A record from the model file's arrays, checked: shapes, classes in
        range, at least one copy each, sorted by (digest, class) without
        repeats. Raises ValueError naming the bad array."""
        digest = arrays.get("record_digest")
        if digest is None:
            return cls.empty()
        if not isinstance(digest, np.ndarray) or digest.dtype != np.uint64 or digest.ndim != 2 or digest.shape[1] != 2:
            raise ValueError("record_digest")
        n = len(digest)
        label, copies, message_id, when = (
            _column(arrays, key, kind, n)
            for key, kind in (
                ("record_class", "i"),
                ("record_copies", "i"),
                ("record_message_id", "u"),
                ("record_when", "i"),
            )
        )
        if n and not (0 <= label.min() and label.max() < n_classes):
            raise ValueError("record_class")
        if n and copies.min() < 1:
            raise ValueError("record_copies")
        if n > 1:
            hi, lo = digest[:, 0], digest[:, 1]
            later = (hi[1:] > hi[:-1]) | (
                (hi[1:] == hi[:-1]) & ((lo[1:] > lo[:-1]) | ((lo[1:] == lo[:-1]) & (label[1:] > label[:-1])))
            )
            if not later.all():
                raise ValueError("record_digest")
        return cls(
            digest,
            label.astype(np.int32, copy=False),
            copies.astype(np.int64, copy=False),
            message_id.astype(np.uint64, copy=False),
            when.astype(np.int64, copy=False),
        )


def _column(arrays: dict, key: str, kind: str, n: int) -> np.ndarray:
    """The record's array `key`, of dtype kind `kind` and shape (n,), or
    ValueError(key)."""
    part = arrays.get(key)
    if not isinstance(part, np.ndarray) or part.dtype.kind != kind or part.shape != (n,):
        raise ValueError(key)
    return part


_NO_DIGESTS = np.zeros((0, 2), dtype=np.uint64)


def record_after(record: Record, classes: list, updates: list, final: list) -> Record:
    """`record` (of a model of `classes`) with the changes of a run of
    journal updates (`nb.updates.Update`: its `known`, `removed_digest`,
    `removed_label` and its image's record of entries added) applied in
    order, its labels in the `final` classes: an entry (digest, class)
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

"""A journal's records read back as `nb.updates.Update`s, with every
invariant the model file's loader checks of the same values checked
(`update_of`, `store.checks`), and which updates `nbcli compact
--drop-bad-tail` keeps of a damaged journal (`good_updates`); applying them
to the model file is `modelfile`'s.

Two kinds of damage, one remedy. A record that fails its checksum (or is
not a record) is found by `journal.Snapshot` before any record is decoded:
the records before it are the good ones. A record whose checksum is right
but whose content is not what nbcli writes (a crafted journal, or one
written by a faulty program: a table missing, counts below zero, hashes out
of order, a shape that does not fit) is found only by decoding it and
applying it. Either is a one-line error naming the journal, whose hint
says how many updates --drop-bad-tail keeps (where it is known without
applying them); and --drop-bad-tail keeps them in both cases: every update
record from the start of the journal up to the first that fails,
checkpoints left aside (a checkpoint stands for the records before it,
which are read instead), then the longest run of those that applies to the
model (a binary search over runs: an update that cannot be applied makes
every longer run fail too).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from nbcli.store import journal
from nbcli.store.checks import MAX_COUNT, Corrupt, array_of, classes_of, days_within, meta_of, terms_of, within


def update_of(body: bytes | memoryview):
    """The Update of a journal record, every invariant a model file's loader
    checks of the same values checked (Corrupt otherwise)."""
    from nbcli.nb.counts import Counts, Update

    try:
        plain, a = journal.decode(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise Corrupt("update", f"is damaged ({exc})") from None
    classes, known, mail_docs = _heading(plain)
    if "delta" in plain:
        return _delta_of(plain, a, classes, known, mail_docs)
    meta = meta_of(plain.get("meta"))
    terms = plain.get("terms")  # the model's term sum after the update (`nb.term_digests`), if the writer knew it
    if terms is not None:
        found = re.fullmatch(r"([0-9a-f]{16})/([0-9]{1,12})", terms) if isinstance(terms, str) else None
        if found is None:
            raise Corrupt("update", "has a bad term sum")
        terms = (int(found[1], 16), int(found[2]))
    c = len(classes)
    hashes, blob, offsets = terms_of(a)
    k = len(hashes)
    tables = {
        name: within(array_of(a, name, "iuf", (c, k), optional=name != "tf"), name, 0, MAX_COUNT)
        for name in ("tf", "df", "fit")
    }
    class_count = within(array_of(a, "class_count", "f", (c,)), "class_count", 0, MAX_COUNT)
    removed_digest, removed_label, added = _record_changes(a, known)
    image = Counts(
        classes,
        class_count,
        hashes,
        blob,
        offsets,
        tables["tf"],
        tables["df"],
        tables["fit"],
        days_within(array_of(a, "last_seen", "i", (k,)), "last_seen").astype(np.int32),
        added,
        mail_docs,
    )
    update = Update(image, known, meta, removed_digest, removed_label, terms, _totals_of(plain, c))
    update.before = _totals_of(plain, c, "before")
    return update


def _heading(plain: dict) -> tuple[list, list, int]:
    """(classes, known, mail_docs) of a record's plain values, checked."""
    classes = _classes_of(plain.get("classes"))
    known = plain.get("known")
    known = _classes_of(known) if isinstance(known, list) and len(known) >= 2 else None
    if known is None:
        raise Corrupt("update", "has bad classes")
    mail_docs = plain.get("mail_docs")
    if type(mail_docs) is not int or mail_docs < 0:
        raise Corrupt("update", "has a bad mail_docs")
    return classes, known, mail_docs


def _classes_of(names) -> list:
    """`checks.classes_of` of a record's list of class names, each list of
    names checked once per process (`_CHECKED`): the records of a journal
    name the same few classes, and checking every name of every record was
    a sixth of a record's decoding (150 records: 2.5 of 14 ms)."""
    key = tuple(names) if isinstance(names, list) and all(type(n) is str for n in names) else None
    if key is None or key not in _CHECKED:
        names = classes_of({"classes": names})
        if key is not None and len(_CHECKED) < 64:
            _CHECKED.add(key)
    return list(names)


_CHECKED: set[tuple] = set()  # lists of class names `_classes_of` found good


def _delta_of(plain: dict, a: dict, classes: list, known: list, mail_docs: int):
    """The `nb.deltas.Delta` of a record written as a difference
    (`journal_updates.delta_record`), checked as `update_of` checks an
    after-image (what only resolving it can check, `resolve` does)."""
    from nbcli.nb.deltas import TABLES, Delta
    from nbcli.nb.record import Record

    tables, sizes, parts = plain.get("tables"), plain.get("sizes"), plain.get("parts")
    if (
        plain.get("delta") != 1
        or set(plain) - _DELTA_KEYS
        or not isinstance(tables, list)
        or not tables
        or tables[0] != "tf"
        or tables != [t for t in TABLES if t in tables]
        or not (isinstance(sizes, list) and len(sizes) == 5 and isinstance(sizes[2], list))
        or len(sizes[2]) != len(tables)
        or not all(_count(x) for x in [*sizes[:2], *sizes[2], *sizes[3:]])
        or not (isinstance(parts, list) and len(parts) == 3 and all(_count(x) for x in parts))
    ):
        raise Corrupt("update", "is a difference of an unknown kind")
    meta_set, meta_drop = plain.get("meta_set"), plain.get("meta_drop")
    if not isinstance(meta_set, dict) or not (
        isinstance(meta_drop, list) and all(isinstance(k, str) for k in meta_drop)
    ):
        raise Corrupt("update", "has a bad meta")
    hashes = array_of(a, "hashes", "u", (None,))
    body = array_of(a, "packed", "u", (None,))
    if hashes.dtype != np.uint64 or body.dtype != np.uint8:
        raise Corrupt("update", "has bad arrays")
    c, k = len(classes), len(hashes)
    n_new, n_gone, n_cells, n_removed, n_added = sizes
    if parts[0] != 8 * (2 * n_new + n_gone + k + 2 * sum(n_cells) + n_removed + 3 * n_added) or parts[1] != 8 * (
        2 * n_removed + 3 * n_added
    ):
        raise Corrupt("update", "has parts of the wrong sizes")
    try:
        ints_bytes, words_bytes, blob_bytes = journal.unpacked(body, parts)
    except ValueError as exc:
        raise Corrupt("update", f"is damaged ({exc})") from None
    ints = _Reader(np.frombuffer(ints_bytes, dtype="<i8"))
    words = _Reader(np.frombuffer(words_bytes, dtype="<u8"))
    class_count = plain.get("class_count")
    if not (
        isinstance(class_count, list) and len(class_count) == c and all(type(x) in (int, float) for x in class_count)
    ):
        raise Corrupt("class_count")
    if not all(0 <= x <= MAX_COUNT for x in class_count):
        raise Corrupt("class_count", f"has values outside [0, {MAX_COUNT:g}]")
    class_count = np.array(class_count, dtype=np.float64)
    # what follows is checked for every difference of a run at once (`_check_deltas`), not here
    new, gone, lengths = ints.take(n_new), ints.take(n_gone), ints.take(n_new)
    offsets = np.zeros(n_new + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if offsets[-1] != len(blob_bytes):
        raise Corrupt("blob")
    last_seen = ints.take(k)
    cells = {name: np.cumsum(ints.take(n)) for name, n in zip(tables, n_cells)}
    steps = {name: ints.take(n) for name, n in zip(tables, n_cells)}
    removed_label = ints.take(n_removed)
    removed_digest = words.take(2 * n_removed).reshape(-1, 2)
    added = Record.empty()
    if n_added:
        labels, copies, when = ints.take(n_added), ints.take(n_added), ints.take(n_added)
        if labels.min() < 0 or labels.max() >= len(known):
            raise Corrupt("added record_class")
        try:
            added = Record.from_arrays(
                {
                    "record_digest": words.take(2 * n_added).reshape(-1, 2),
                    "record_class": labels.astype(np.int32),
                    "record_copies": copies,
                    "record_message_id": words.take(n_added),
                    "record_when": when,
                },
                len(known),
            )
        except ValueError as exc:
            raise Corrupt(f"added {exc}") from None
    return Delta(
        classes=classes,
        known=known,
        class_count=class_count,
        mail_docs=mail_docs,
        hashes=hashes,
        tables=tuple(tables),
        cells=cells,
        steps=steps,
        new=new,
        blob=np.frombuffer(blob_bytes, dtype=np.uint8),
        offsets=offsets,
        gone=gone,
        last_seen=last_seen,
        record=added,
        removed_digest=removed_digest,
        removed_label=removed_label,
        meta_set=meta_set,
        meta_drop=list(meta_drop),
    )


class _Reader:
    """The next n values of an array, in turn."""

    def __init__(self, values: np.ndarray):
        self.values, self.at = values, 0

    def take(self, n: int) -> np.ndarray:
        self.at += n
        return self.values[self.at - n : self.at]


def _count(x) -> bool:
    return type(x) is int and 0 <= x < 1 << 40


_DELTA_KEYS = {
    "delta",
    "classes",
    "known",
    "mail_docs",
    "class_count",
    "tables",
    "meta_set",
    "meta_drop",
    "sizes",
    "parts",
}


def _check_deltas(deltas: list) -> None:
    """What `_delta_of` leaves to be checked, for every difference of a run
    at once (a few dozen small array operations per record cost more than
    decoding it): each record's hashes strictly ascending; its new and gone
    terms ascending positions among its terms, none both; its texts'
    offsets ascending; its last-seen days ones a date holds; its changed cells
    strictly ascending within its tables; the record entries it takes out
    of classes it knows. Corrupt otherwise; the differences' days and labels
    are narrowed to int32 here."""
    if not deltas:
        return
    k = np.array([len(d.hashes) for d in deltas], dtype=np.int64)

    def joined(arrays: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(the arrays end to end, each value's record, whether the value
        before it is of the same record)."""
        lengths = [len(x) for x in arrays]
        values = np.concatenate(arrays) if arrays else np.zeros(0, np.int64)
        owner = np.repeat(np.arange(len(arrays)), lengths)
        return values, owner, owner[1:] == owner[:-1]

    def ascending(values: np.ndarray, same: np.ndarray) -> bool:
        return not np.any((values[1:] <= values[:-1]) & same)

    hashes, _, same = joined([d.hashes for d in deltas])
    if not ascending(hashes, same):
        raise Corrupt("hashes", "is not strictly ascending")
    starts = np.concatenate([[0], np.cumsum(k)[:-1]])
    places = []
    for name in ("new", "gone"):
        at, owner, same = joined([d.__dict__[name] for d in deltas])
        if len(at) and (at.min() < 0 or np.any(at >= k[owner]) or not ascending(at, same)):
            raise Corrupt(name, "is not ascending within the terms")
        places.append(at + starts[owner])
    marked = np.zeros(int(k.sum()), dtype=bool)
    marked[places[0]] = True
    if marked[places[1]].any():
        raise Corrupt("update", "has a term both new and gone")
    offsets, _, same = joined([d.offsets for d in deltas])
    if np.any((offsets[1:] < offsets[:-1]) & same):
        raise Corrupt("blob")
    days_within(joined([d.last_seen for d in deltas])[0], "last_seen")
    for name in deltas[0].tables:
        cells, owner, same = joined([d.cells.get(name, np.zeros(0, np.int64)) for d in deltas])
        width = k * np.array([len(d.classes) for d in deltas], dtype=np.int64)
        if len(cells) and (cells.min() < 0 or np.any(cells >= width[owner]) or not ascending(cells, same)):
            raise Corrupt(f"cells_{name}", "is out of range or not strictly ascending")
    labels, owner, _ = joined([d.removed_label for d in deltas])
    known = np.array([len(d.known) for d in deltas], dtype=np.int64)
    if len(labels) and (labels.min() < 0 or np.any(labels >= known[owner])):
        raise Corrupt("removed_label")
    for d in deltas:
        d.last_seen, d.removed_label = d.last_seen.astype(np.int32), d.removed_label.astype(np.int32)


def _record_changes(a: dict, known: list) -> tuple:
    """(removed_digest, removed_label as int32, the Record of the entries
    added) of a record's arrays, checked (labels index `known`)."""
    from nbcli.nb.record import Record

    removed_digest = array_of(a, "removed_digest", "u", (None, 2))
    removed_label = array_of(a, "removed_label", "i", (len(removed_digest),))
    if len(removed_label) and not (0 <= removed_label.min() and removed_label.max() < len(known)):
        raise Corrupt("removed_label")
    try:
        added = Record.from_arrays(
            {k2[len("added_") :]: v for k2, v in a.items() if k2.startswith("added_")}, len(known)
        )
    except ValueError as exc:
        raise Corrupt(f"added {exc}") from None
    return removed_digest, removed_label.astype(np.int32), added


def resolve(updates: list, classifier, view: bool = False) -> list:
    """`updates` (as `update_of` gives them) with every difference resolved
    (`nb.deltas.resolved`) against `classifier`, the model they follow (the
    model file's, or a view that has every update before them), and
    checked as `update_of` checks an after-image. ValueError (an update
    that does not fit the model) otherwise. view: for laying them over
    `classifier` as a view (`nb.overlay`), which reads the texts of the
    terms the model had when something asks for them (not here: texts_later)."""
    from nbcli.nb.counts import Counts
    from nbcli.nb.deltas import Delta, resolved
    from nbcli.nb.updates import replay
    from nbcli.store.payload import _plain

    if not any(isinstance(u, Delta) for u in updates):
        return updates
    was = [isinstance(u, Delta) for u in updates]
    try:
        _check_deltas([u for u in updates if isinstance(u, Delta)])
    except Corrupt as exc:
        raise ValueError(str(exc)) from None
    out = resolved(
        updates,
        lambda hashes: Counts.of_terms(classifier, hashes, whole_dtype=False, texts=not view),
        _plain(classifier.meta),
        replay,
        texts_later=view,
    )
    for u in out:  # its last image is no longer the last update's own: moved from (`Update.before`), it would mislead
        u.before = None
    try:
        for u, delta in zip(out, was):
            if delta:
                meta_of(u.meta)
                for name in ("tf", "df", "fit"):
                    within(getattr(u.image, name), name, 0, MAX_COUNT)
    except Corrupt as exc:
        raise ValueError(str(exc)) from None
    return out


def _totals_of(plain: dict, n_classes: int, key: str = "totals"):
    """A record's (ExactTotals, number of terms): a checkpoint's after it
    (`Update.totals`), or, key "before", an update's before it
    (`Update.before`); None where the record carries none; Corrupt where
    they are not what nbcli writes."""
    from nbcli.nb.smoothing import ExactTotals

    totals = plain.get(key)
    if totals is None:
        return None
    units = totals.get("units") if isinstance(totals, dict) else None
    n_terms = totals.get("terms") if isinstance(totals, dict) else None
    integral = totals.get("integral") if isinstance(totals, dict) else None
    if (
        not isinstance(units, list)
        or len(units) != n_classes
        or any(type(u) is not int or u < 0 for u in units)
        or type(integral) is not bool
        or type(n_terms) is not int
        or n_terms < 0
    ):
        raise Corrupt("update", "has bad totals" + (" before it" if key == "before" else ""))
    return ExactTotals(units, integral), n_terms


def good_updates(path: str, applies: Callable[[list], bool]) -> tuple[list, int]:
    """The updates --drop-bad-tail keeps of the journal of `path` (see the
    module docstring): read whole, every update record up to the first that
    fails its checksum or its decoding, then the longest run of those for
    which applies(run) is true; and how many updates they stand for (a
    rolled journal's checkpoint, its first, for those before it)."""
    updates: list = []
    snapshot = journal.read_records(path)
    for body in snapshot.bodies:
        try:
            updates.append(update_of(body))
        except Corrupt:
            break
    low = len(updates)
    if not applies(updates):
        low, high = 0, len(updates) - 1  # a run of `low` updates applies; one of `high` + 1 does not
        while low < high:
            middle = (low + high + 1) // 2
            if applies(updates[:middle]):
                low = middle
            else:
                high = middle - 1
    return updates[:low], low + (snapshot.stands_for - 1 if low else 0)

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
from nbcli.store.checks import MAX_COUNT, Corrupt, array_of, classes_of, meta_of, terms_of, within


def update_of(body: bytes | memoryview):
    """The Update of a journal record, every invariant a model file's loader
    checks of the same values checked (Corrupt otherwise)."""
    from nbcli.nb.counts import Counts
    from nbcli.nb.record import Record
    from nbcli.nb.updates import Update

    try:
        plain, a = journal.decode(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise Corrupt("update", f"is damaged ({exc})") from None
    classes = classes_of({"classes": plain.get("classes")})
    known = plain.get("known")
    known = classes_of({"classes": known}) if isinstance(known, list) and len(known) >= 2 else None
    if known is None:
        raise Corrupt("update", "has bad classes")
    mail_docs = plain.get("mail_docs")
    if type(mail_docs) is not int or mail_docs < 0:
        raise Corrupt("update", "has a bad mail_docs")
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
    image = Counts(
        classes,
        class_count,
        hashes,
        blob,
        offsets,
        tables["tf"],
        tables["df"],
        tables["fit"],
        array_of(a, "last_seen", "i", (k,)).astype(np.int32),
        added,
        mail_docs,
    )
    return Update(image, known, meta, removed_digest, removed_label.astype(np.int32), terms, _totals_of(plain, c))


def _totals_of(plain: dict, n_classes: int):
    """A checkpoint's (ExactTotals, number of terms) (`Update.totals`), or
    None where the record carries none; Corrupt where they are not what
    nbcli writes."""
    from nbcli.nb.smoothing import ExactTotals

    totals = plain.get("totals")
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
        raise Corrupt("update", "has bad totals")
    return ExactTotals(units, integral), n_terms


def good_updates(path: str, applies: Callable[[list], bool]) -> list:
    """The updates --drop-bad-tail keeps of the journal of `path` (see the
    module docstring): read whole, every update record up to the first that
    fails its checksum or its decoding, then the longest run of those for
    which applies(run) is true."""
    updates: list = []
    for body in journal.read_records(path).bodies:
        try:
            updates.append(update_of(body))
        except Corrupt:
            break
    if applies(updates):
        return updates
    low, high = 0, len(updates) - 1  # a run of `low` updates applies; one of `high` + 1 does not
    while low < high:
        middle = (low + high + 1) // 2
        if applies(updates[:middle]):
            low = middle
        else:
            high = middle - 1
    return updates[:low]

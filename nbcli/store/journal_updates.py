"""Updates as a journal's records: an `nb.updates.Update` as a record's
plain values and arrays (`update_record`; read back by
`journal_records.update_of`), and checkpoints: when a writer adds one after
its update (starting the journal anew with both: `journal.roll`), and what
it holds (`store.journal` says what a checkpoint is).

When: after an update, once the bytes of the records after the last
checkpoint (or the header) reach the larger of CHECKPOINT_MIN_BYTES and
CHECKPOINT_TAIL (a half) of that checkpoint's length. A reader then
decodes at most the last checkpoint and about half as many bytes again of
records, however long the journal; the checkpoints written add up to
about twice the records' bytes (each is preceded by at least half its
own length of records), and a writer pays for one (the journal's touched
terms, merged: O(the journal's terms), not the model's; and the record's
net changes: a sort of the record of learned documents) once per that
many bytes, before its reply when it is spamd's TELL.

Why a half: a reader pays about eight times as much per byte of the
records after the checkpoint as per byte of the checkpoint (each record
decoded, checked and merged into one layer; the checkpoint mapped, checked
and laid as it is: 6 against 0.7 us a KB, 1.41M terms, 2026-11-27), so
the records are what a reader's time through the journal is made of. At
the checkpoint's own length (the rule before) a bulk predict through
1,000 n-gram updates read a 19 MB checkpoint and 12.5 MB of records after
it, 73 ms more than the compacted model's 1.1 s (issue 30 allows 10%);
at a half, the records are at most half the checkpoint, for twice the
checkpoint bytes written.

Where the last checkpoint is (`remember`): each process keeps what it last
read or wrote for a journal (its path and base), so a writer needs no scan
of the journal. Another process's checkpoint that this one has not seen
only makes the next one come sooner.

Only a writer holding a `nb.overlay.JournalView` (or the model file as
read, with no updates yet) writes checkpoints: a view's layers are the
merged state a checkpoint needs. Models read by replaying (Bernoulli, EM,
journals that changed the classes) keep plain records.
"""

from __future__ import annotations

import numpy as np

from nbcli.store import journal
from nbcli.store.integrity import target
from nbcli.store.payload import _plain

# True: learns and forgets that keep the classes are written as differences (`nb.deltas.Delta`, five times fewer
# bytes); False: every update as its after-image. Readers read both kinds always; the tests write differences by
# setting this. Off: with differences on, 10,000 learns wrote the model files 2.5x the final model (10x with
# after-images then; 1.7x once checkpoints started the journal anew, `journal.roll`; 2.7x with checkpoints at half
# their length, CHECKPOINT_TAIL), but a reader decodes about
# five times as many updates after a checkpoint (the checkpoint rule is in bytes, and checkpoints are
# after-images), so a learn through the journal took 102 ms against 22, a bulk predict through 1,000 n-gram
# updates 1.37x the compacted model's time, and a TELL 2.15x a CHECK (measured 2026-11-27;
# docs/architecture.md, "How an update is written", says what would make them the default).
DIFFERENCES = False
CHECKPOINT_MIN_BYTES = 256 << 10  # no checkpoint before this many bytes of records: reading them costs little
CHECKPOINT_TAIL = 0.5  # a checkpoint once the records after the last one reach this part of its length (see above)
CHECKPOINTED_FACTOR = 4  # a journal with checkpoints, never started anew, is compacted at this many times the limit

_marks: dict[str, tuple[str, tuple[int, int]]] = {}  # model file -> (base, (offset, length) of its last checkpoint)


def update_record(update) -> tuple[dict, dict]:
    """An Update (nb/updates.py) as a journal record's plain values and arrays."""
    image = update.image
    plain = {
        "classes": list(image.classes),
        "known": list(update.known),
        "mail_docs": int(image.mail_docs),
        "meta": _plain(update.meta),
    }
    if update.terms is not None:  # a checkpoint's: the model's term sum after it (`JournalView.terms`)
        plain["terms"] = f"{update.terms[0]:016x}/{update.terms[1]}"
    if update.totals is not None:  # a checkpoint's: the view's totals and terms after it (`nb.overlay`)
        plain["totals"] = _totals_plain(update.totals)
    if update.before is not None:  # an update's made from a view: the view's (`nb.overlay`)
        plain["before"] = _totals_plain(update.before)
    arrays = {
        "class_count": np.asarray(image.class_count, dtype=np.float64),
        "hashes": image.hashes,
        "blob": image.blob,
        "offsets": image.offsets,
        "tf": image.tf,
        "last_seen": image.last_seen,
        "removed_digest": update.removed_digest,
        "removed_label": update.removed_label,
        **{f"added_{k}": v for k, v in image.record.arrays().items()},
    }
    for name in ("df", "fit"):
        if getattr(image, name) is not None:
            arrays[name] = getattr(image, name)
    return plain, arrays


def _totals_plain(carried: tuple) -> dict:
    """`Update.totals` or `Update.before` as a record's plain value (read
    back by `journal_records._totals_of`)."""
    totals, n_terms = carried
    return {"units": list(totals.units), "integral": totals.integral, "terms": int(n_terms)}


def encoded(update) -> bytes:
    """The update's journal record, encoded once (spamd weighs it, then
    appends it): as a difference (`nb.deltas.Delta`) where the update knows what
    it was made from (`Update.made_from`) and a Delta gives it back
    exactly; as its after-image otherwise."""
    if "_record" not in update.__dict__:
        parts = None
        made = update.made_from
        if made is not None and DIFFERENCES:
            from nbcli.nb.deltas import delta_of

            before, meta_before = made
            delta = delta_of(update, before, meta_before, update.meta, _plain)
            parts = delta_record(delta) if delta is not None else None
        update.__dict__["_difference"] = parts is not None
        update.__dict__["_record"] = journal.encode(*(parts or update_record(update)))
    return update.__dict__["_record"]


def delta_record(delta) -> tuple[dict, dict] | None:
    """A Delta (nb/updates.py) as a journal record's plain values and arrays
    (read back by `journal_records.update_of`): the touched terms' hashes as
    they are; every other array in three compressed parts, integers (each
    ascending list of positions as its gaps, which compress), 64-bit words
    and the new terms' texts, whose lengths the plain values give. Few
    arrays, so that a reader decodes it in about the time of a small
    after-image. None where the parts would not pass the reader's bound on
    expansion."""
    record = delta.record
    cells = [np.diff(np.asarray(delta.cells[name], dtype=np.int64), prepend=0) for name in delta.tables]
    steps = [np.asarray(delta.steps[name], dtype=np.int64) for name in delta.tables]
    ints = np.concatenate(
        [
            np.asarray(delta.new, dtype=np.int64),
            np.asarray(delta.gone, dtype=np.int64),
            np.diff(np.asarray(delta.offsets, dtype=np.int64)),
            np.asarray(delta.last_seen, dtype=np.int64),
            *cells,
            *steps,
            np.asarray(delta.removed_label, dtype=np.int64),
            np.asarray(record.label, dtype=np.int64),
            np.asarray(record.copies, dtype=np.int64),
            np.asarray(record.when, dtype=np.int64),
        ]
    ).astype("<i8")
    words = np.concatenate(
        [
            np.asarray(delta.removed_digest, dtype=np.uint64).reshape(-1),
            np.asarray(record.digest, dtype=np.uint64).reshape(-1),
            np.asarray(record.message_id, dtype=np.uint64),
        ]
    ).astype("<u8")
    blob = np.asarray(delta.blob, dtype=np.uint8)
    body = journal.packed([ints.tobytes(), words.tobytes(), blob.tobytes()])
    if body is None:
        return None
    plain = {
        "delta": 1,
        "classes": list(delta.classes),
        "known": list(delta.known),
        "mail_docs": int(delta.mail_docs),
        "class_count": [float(x) for x in delta.class_count],
        "tables": list(delta.tables),
        "meta_set": delta.meta_set,  # (plain: `delta_of`)
        "meta_drop": list(delta.meta_drop),
        # how many of each: new terms, gone terms, changed values per table, entries out, entries in; parts' bytes
        "sizes": [len(delta.new), len(delta.gone), [len(c) for c in cells], len(delta.removed_label), len(record)],
        "parts": [len(ints) * 8, len(words) * 8, len(blob)],
    }
    return plain, {"hashes": np.asarray(delta.hashes, dtype=np.uint64), "packed": np.frombuffer(body, dtype=np.uint8)}


def remember(path: str, base: str | None, snapshot) -> None:
    """Note the last checkpoint `snapshot` (a read of the journal of `path`,
    bound to `base`) found."""
    if base is not None and snapshot.checkpoint is not None:
        _marks[target(path)] = (base, snapshot.checkpoint)


def can_checkpoint(since, base: str) -> bool:
    """Whether a writer holding `since` (read from the model file of
    checksum `base`) can write checkpoints: a view, or the file's
    classifier before any update (a model built by replaying its journal
    is not the file's, whose changes a checkpoint holds)."""
    if getattr(since, "plus", None) is not None:
        return True
    state = getattr(since, "journal_state", None)
    return state is not None and state[1] <= len(journal.header(base))


def checkpoint_due(since, path: str, base: str, update_end: int) -> bool:
    """Whether a checkpoint is due right after an update made from `since`
    whose record ends at byte `update_end` of the journal of `path` (bound
    to `base`), and `since` can make one (`can_checkpoint`)."""
    last = _last(path, base)
    after = update_end - (sum(last) if last else len(journal.header(base)))
    due = max(CHECKPOINT_MIN_BYTES, int(last[1] * CHECKPOINT_TAIL) if last else 0)
    return after >= due and can_checkpoint(since, base)


def checkpoint_record(view) -> bytes:
    """The checkpoint record of a `nb.overlay.JournalView` (the model with
    the update just appended laid over it): `JournalView.as_checkpoint`."""
    return journal.encode(*update_record(view.as_checkpoint()), checkpoint=True)


def compaction_due(path: str, base: str, size: int, limit: float, checkpointed: bool) -> bool:
    """Whether a journal of `size` bytes is due for compaction, `limit`
    being the bytes past which a journal that every reader decodes whole
    is compacted (`modelfile`'s policy). A journal with checkpoints is read
    from its last one, and each starts it anew (`journal.roll`: it stays
    about one and a half checkpoints on disk): it is compacted once its last
    checkpoint alone passes the limit (a reader then decodes more than the
    whole journal of the plain policy would have been), or past
    CHECKPOINTED_FACTOR times the limit (one written before rolls)."""
    if not checkpointed:
        return size > limit
    last = _last(path, base)
    return size > CHECKPOINTED_FACTOR * limit or (last is not None and last[1] > limit)


def wrote(path: str, base: str, offset: int, length: int) -> None:
    """Note a checkpoint this process appended."""
    _marks[target(path)] = (base, (offset, length))


def _last(path: str, base: str) -> tuple[int, int] | None:
    """(offset, length) of the last checkpoint this process knows of in the
    journal of `path` bound to `base` (one entry per model file: a journal
    of an older base is gone)."""
    known = _marks.get(target(path))
    return known[1] if known is not None and known[0] == base else None

"""A journal update written as a difference (`Delta`, made by `delta_of`),
and read back as the after-image `nb.updates.Update` it stands for
(`resolved`). No I/O: the record's bytes are `store.journal_updates`'.

Why (issue 30, bytes written): an after-image (`nb.updates.Update`) holds, for
every term a learned message has, every class's counts, its text and its
last-seen day: 6.1 KB a learn of a 2 KB message into the 108k-term mail
model, 12.6 KB over the 10,000 learns of `make bench-learn-scale`. What a
learn changes is less: the message's terms, the one class's counts they
moved (in the fixed-point units the transformed sums are kept in, so a
change is an exact integer: `fit.exact_sums`), the texts of the terms new
to the model, and the meta's keys that changed. Compressed, a Delta of the
same learn is about 1.2-1.5 KB (5-8.6 KB as an after-image).

A Delta needs the state before it to be read: a term's values that it did
not change, and the texts of the terms the model had. A reader resolves a
run of records against the state the run starts from (the model file, with
the checkpoint the run starts at; or the view a daemon's worker follows):
each term once, at its last entry in the run, as the state's value (or
its last whole update's) plus the changes the Deltas made after it
(`resolved`), for every Delta of the run at once (one sort of the run's
terms; the changes added a few Deltas at a time). The run's last Delta
carries every term so resolved: what `replay`, `nb.overlay`, checkpoints
and the daemon's follower make of the updates is the state the writers
had, value for value. A reader that lays them over a view leaves the
texts of the terms the state had to the view (`Update.inherited`).

Exactness by construction, so that a spamd TELL does not resolve its own
record before replying (that check cost 0.2 ms of a TELL's 0.5 ms for a
Delta, 2026-11-27): `delta_of` makes a Delta only where resolving it gives
its after-image back, array for array, dtypes and meta included. A value a
term had is the state's plus after - before, in int64 units that a float64
holds exactly both ways (`_units`); a new term's is 0 plus its value; a
term that left has zeros, which is what its after-image holds (else no
Delta); an old term's text is the state's, from which the after-image took
it; the rest is copied. tests/store/test_journal_deltas.py resolves the
Deltas of many learns and forgets and compares. A Delta is only made for
a learn or forget that keeps the model's classes; one that adds or drops
a class is written whole (a reader that meets one in a run resolves the
Deltas after it against the run replayed so far).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from nbcli.nb.counts import Counts, Update, found_in, gather_texts, sorted_distinct
from nbcli.nb.record import Record
from nbcli.nb.smoothing import SUM_SCALE

TABLES = ("tf", "df", "fit")  # the count tables an image may carry, in this order
_EXACT = float(1 << 53)  # units past this are not exact in a float64
_CELLS_AT_ONCE = 1 << 15  # a run's changed cells resolved together (`_resolved_table`)


@dataclass
class Delta:
    """One learn or forget as a difference (see the module docstring).
    classes: the model's, before and after (the same); hashes: the terms
    touched, ascending; tables: the names of the count tables the model
    has; cells[name]: the flat indices into (classes, hashes), row-major,
    of the values that changed, steps[name] their changes in units (counts:
    1; complement's transformed sums: 1 / SUM_SCALE); new: positions of the
    terms new to the model, whose texts are blob and offsets (one each);
    gone: positions of the terms that left it (all zeros, no text);
    last_seen: every touched term's day after; the rest as `Update`'s (the
    classes, documents per class and mail documents after, the record's
    changes); meta_set / meta_drop: the meta's keys that the update set and
    took out."""

    classes: list
    known: list
    class_count: np.ndarray
    mail_docs: int
    hashes: np.ndarray
    tables: tuple
    cells: dict
    steps: dict
    new: np.ndarray
    blob: np.ndarray
    offsets: np.ndarray
    gone: np.ndarray
    last_seen: np.ndarray
    record: Record
    removed_digest: np.ndarray
    removed_label: np.ndarray
    meta_set: dict
    meta_drop: list


def _units(name: str, values, copy: bool = False) -> np.ndarray | None:
    """A count table's values as int64 units (see Delta), or None where they
    are not whole units a float64 holds exactly (copy: never `values`
    itself)."""
    if name != "fit":
        values = np.asarray(values)
        return values.astype(np.int64, copy=copy) if values.dtype.kind in "iu" else None
    scaled = np.asarray(values, dtype=np.float64) * SUM_SCALE  # a power of two: exact
    if not (np.all(np.abs(scaled) < _EXACT) and np.array_equal(scaled, np.round(scaled))):
        return None
    return scaled.astype(np.int64)


def _values(name: str, units: np.ndarray) -> np.ndarray:
    return units if name != "fit" else units.astype(np.float64) / SUM_SCALE


def _same_json(a, b) -> bool:
    """Whether JSON writes plain values a and b alike (1 and 1.0 differ, as
    do True and 1)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_json(x, y) for x, y in zip(a, b))
    return a == b or (a != a and b != b)  # (NaN, which JSON does not write, equal to itself)


def meta_patch(meta_before: dict, meta_after: dict, plain: Callable = lambda v: v) -> tuple[dict, list]:
    """(the keys of meta_after whose values differ from meta_before's, with
    those values; the keys meta_after dropped), values compared as JSON
    writes them (1 and 1.0 differ): plain(value), the value as JSON gives
    it back (`store.payload._plain`; the metas are plain already without
    it). A value that is the same object in both is the same (a learn's
    meta shares the model's options: not compared key by key)."""
    changed = {
        k: plain(v)
        for k, v in meta_after.items()
        if k not in meta_before or (meta_before[k] is not v and not _same_json(plain(meta_before[k]), plain(v)))
    }
    return changed, [k for k in meta_before if k not in meta_after]


def patched(meta: dict, meta_set: dict, meta_drop: list) -> dict:
    return {**{k: v for k, v in meta.items() if k not in set(meta_drop)}, **meta_set}


def delta_of(
    update: Update, before: Counts, meta_before: dict, meta_after: dict, plain: Callable = lambda v: v
) -> Delta | None:
    """The Delta of `update`, made from `before` (the counts of the terms it
    touched, as the model it was learned from had them, in that model's
    classes; meta_before and meta_after: that model's meta and the
    update's, made plain by `plain`, see `meta_patch`), or None where a
    Delta would not give the update back exactly (see "Exactness by
    construction" above)."""
    image = update.image
    names = tuple(n for n in TABLES if getattr(image, n) is not None)
    if (
        update.terms is not None
        or update.totals is not None
        or list(before.classes) != list(image.classes)
        or names != tuple(n for n in TABLES if getattr(before, n) is not None)
        or image.tf.dtype != np.int64
        or (image.df is not None and image.df.dtype != np.int64)
        or (image.fit is not None and image.fit.dtype != np.float64)
        or image.last_seen.dtype != np.int32
        or np.asarray(image.class_count).dtype != np.float64
    ):
        return None
    pos, present = found_in(before.hashes, image.hashes)
    lengths = np.diff(np.asarray(image.offsets, dtype=np.int64))
    gone = np.flatnonzero(lengths == 0)
    new = np.flatnonzero(~present & (lengths > 0))
    cols = pos[present]
    cells, steps = {}, {}
    for name in names:
        after = _units(name, getattr(image, name), copy=True)
        known = _units(name, getattr(before, name)[:, cols])
        if after is None or known is None or (len(gone) and after[:, gone].any()):
            return None
        after[:, present] -= known  # (after is a copy)
        after[:, gone] = 0  # (a gone term's values are zeros whatever came before: no change to write)
        flat = after.reshape(-1)
        cells[name] = np.flatnonzero(flat)
        steps[name] = flat[cells[name]]
    blob, offsets = _texts_at(image.blob, image.offsets, new)
    meta_set, meta_drop = meta_patch(meta_before, meta_after, plain)
    return Delta(
        list(image.classes),
        list(update.known),
        np.asarray(image.class_count, dtype=np.float64),
        int(image.mail_docs),
        np.asarray(image.hashes, dtype=np.uint64),
        names,
        cells,
        steps,
        new,
        blob,
        offsets,
        gone,
        np.asarray(image.last_seen, dtype=np.int32),
        image.record,
        update.removed_digest,
        update.removed_label,
        meta_set,
        meta_drop,
    )


def _restricted(image: Counts, hashes: np.ndarray) -> Counts:
    """`image` (an Update's) for those of `hashes` it has: their columns, texts and days."""
    pos, hit = found_in(np.asarray(image.hashes), hashes)
    cols = pos[hit]
    blob, offsets = _texts_at(image.blob, image.offsets, cols)

    def table(a):
        return None if a is None else np.asarray(a)[:, cols]

    return Counts(
        list(image.classes),
        image.class_count,
        np.asarray(image.hashes)[cols],
        blob,
        offsets,
        table(image.tf),
        table(image.df),
        table(image.fit),
        np.asarray(image.last_seen)[cols],
        image.record,
        image.mail_docs,
    )


def _texts_at(blob, offsets, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(blob, offsets) of the texts of terms `at` of (blob, offsets)."""
    offsets = np.asarray(offsets, dtype=np.int64)
    start, length = offsets[at], offsets[at + 1] - offsets[at]
    out = np.zeros(len(at) + 1, dtype=np.int64)
    np.cumsum(length, out=out[1:])
    return np.asarray(blob, dtype=np.uint8)[np.repeat(start - out[:-1], length) + np.arange(out[-1])], out


def classes_of(update) -> list:
    return list(update.classes if isinstance(update, Delta) else update.image.classes)


def resolved(
    updates: list, state_terms: Callable[[np.ndarray], Counts], meta: dict, replay: Callable, texts_later: bool = False
) -> list[Update]:
    """`updates` (Updates and Deltas, in the order they were made) with every
    Delta resolved into an Update. state_terms(hashes): the counts of those
    of `hashes` that the state before the first update has
    (`Counts.of_terms` of the model file or view), in its classes; meta:
    that state's meta, plain; replay: `nb.updates.replay` (given, not
    imported: this module is below it, so that the store's chain of imports
    stays short). ValueError where a Delta does not fit.

    Each term is resolved once, at its last entry in the run: the run's last
    Delta's Update holds every term whose last entry is a Delta's, the
    other Deltas' none (`_resolved_run`). Whatever lays updates over each
    other (`replay`, `last_images`: a term's values are the last image's
    that has it) gets the same state, for the run's distinct terms and
    changed cells instead of every term of every update in every class (a
    bulk predict through 300 n-gram differences of 1,500 terms each: 0.2 s
    and 130 MB of tables of every entry in every class, before).

    texts_later: state_terms gives no texts (`Counts.of_terms(...,
    texts=False)`), and a term whose text is the state's has none in its
    Update, whose `inherited` marks it: for a reader that lays the updates
    over the state as a view (`nb.overlay.JournalView.plus` takes those
    texts from the view when something reads them). A bulk predict through
    300 n-gram differences read the texts of 209k terms from the model file
    (40 MB of its pages) that nothing read."""
    if not any(isinstance(u, Delta) for u in updates):
        return updates
    wanted = sorted_distinct(np.concatenate([u.hashes for u in updates if isinstance(u, Delta)]))
    base = state_terms(wanted)
    out: list = []
    run: list = []  # updates since the last change of classes
    run_base, classes = base, list(base.classes)
    metas: list = []
    for u in updates:
        if classes_of(u) != classes:
            if isinstance(u, Delta):
                raise ValueError("a difference made in other classes than the model's")
            out += _resolved_run(run, run_base, metas, texts_later)
            run, metas = [], []
            out.append(u)
            # the state after a change of classes: the run so far replayed over the state's terms
            run_base, classes = replay(base, out), classes_of(u)
            meta = u.meta
            continue
        meta = patched(meta, u.meta_set, u.meta_drop) if isinstance(u, Delta) else u.meta
        run.append(u)
        metas.append(meta)
    return out + _resolved_run(run, run_base, metas, texts_later)


def _resolved_run(run: list, base: Counts, metas: list, texts_later: bool) -> list:
    """The updates of `run` (all in the classes of `base`, the counts of the
    state before it) with its Deltas resolved (see `resolved`): each term at
    its last entry (an update's term, in the run's order), as the state's
    value or its last anchor's (a whole update's value, or a gone term's
    zeros) plus the changes the Deltas after that anchor made."""
    deltas = [i for i, u in enumerate(run) if isinstance(u, Delta)]
    if not deltas:
        return run
    if len(run) == 1:  # one difference (a follower's next TELL of another writer's): no sort
        return [_resolved_one(run[0], base, metas[0], texts_later)]
    # a whole update of the run (a checkpoint the run starts at, mapped from the journal) only for the terms
    # the Deltas touch: a search of them, not a pass over it (a pass read every page of a 2.3 MB checkpoint
    # that scoring never reads, and a bulk predict took 16% longer)
    wanted = sorted_distinct(np.concatenate([run[i].hashes for i in deltas]))
    images = [u if isinstance(u, Delta) else _restricted(u.image, wanted) for u in run]
    del wanted
    sizes = np.array([len(x.hashes) for x in images], dtype=np.int64)
    starts = np.zeros(len(run) + 1, dtype=np.int64)
    np.cumsum(sizes, out=starts[1:])
    n, delta_sizes = int(starts[-1]), sizes[deltas]
    is_delta = np.zeros(len(run), dtype=bool)
    is_delta[deltas] = True
    of_delta = np.repeat(is_delta, sizes)
    # in term order, each term's entries in the order of the updates (a stable sort of the run)
    ordered = np.concatenate([np.asarray(x.hashes, dtype=np.uint64) for x in images])
    order = np.argsort(ordered, kind="stable")
    ordered = ordered[order]
    first = np.ones(n, dtype=bool)
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    terms = ordered[first]  # (per term, ascending)
    at, in_base = found_in(base.hashes, terms)
    del ordered
    ends = np.ones(n, dtype=bool)  # (in term order) the last entry of a term
    ends[:-1] = first[1:]
    term_of = np.empty(n, dtype=np.int64)  # (per entry) its term
    term_of[order] = np.cumsum(first) - 1
    last_entry = order[ends]  # (per term) the entry that resolves it
    gone = np.zeros(n, dtype=bool)
    new = np.zeros(n, dtype=bool)
    for mark, name in ((gone, "gone"), (new, "new")):
        local = np.concatenate([getattr(run[i], name) for i in deltas])
        counts = [len(getattr(run[i], name)) for i in deltas]
        if len(local) and (local.min() < 0 or np.any(local >= np.repeat(delta_sizes, counts))):
            raise ValueError("a difference's terms out of range")
        mark[np.repeat(starts[deltas], counts) + local] = True
    # (per term) its last anchor, the entry its value starts from, or -1: none, the state's value
    at_anchor = np.maximum.accumulate(np.where((gone | ~of_delta)[order], np.arange(n), -1))[ends]
    anchor_entry = np.where(at_anchor >= np.flatnonzero(first), order[np.maximum(at_anchor, 0)], -1)
    del at_anchor, ends
    tables = {
        name: _resolved_table(name, run, deltas, images, base, at, in_base, anchor_entry, term_of, starts)
        for name in TABLES
        if any(name in run[i].tables for i in deltas)
    }
    # texts: a new term's from its Delta; another's from the state, or an earlier update of the run
    has_text = new.copy()  # a Delta's new terms, and a whole update's terms that have a text
    for i in np.flatnonzero(~is_delta).tolist():
        has_text[starts[i] : starts[i + 1]] = np.diff(np.asarray(images[i].offsets, dtype=np.int64)) > 0
    group = np.maximum.accumulate(np.where(first, np.arange(n), 0))  # (in term order) the term's first entry
    text_at = np.maximum.accumulate(np.where(has_text[order], np.arange(n), -1))
    earlier = np.empty(n, dtype=np.int64)  # (per entry) an entry before it with its term's text, or -1
    earlier[order] = np.where(text_at >= group, order[np.maximum(text_at, 0)], -1)
    del group, text_at, has_text, first, order
    old = of_delta & ~(gone | new)
    from_base = old & in_base[term_of]
    if np.any(old & ~from_base & (earlier < 0)):
        raise ValueError("a difference's term without its text")
    if any(len(run[i].offsets) != len(run[i].new) + 1 for i in deltas):
        raise ValueError("a difference's texts do not match its new terms")
    # the terms a Delta resolves (its entry the term's last), in term order: one image, the last Delta's
    resolves = of_delta[last_entry]
    picked = last_entry[resolves]
    nothing = (np.zeros(0, np.uint8), np.zeros(2, np.int64))  # one term without a text
    sources = [(x.blob, x.offsets) for x in images] + [nothing if texts_later else (base.blob, base.offsets), nothing]
    which = np.full(n, len(images) + 1, dtype=np.int64)  # term e of the run is text col[e] of sources[which[e]]
    col = np.zeros(n, dtype=np.int64)
    if not texts_later:
        chosen = picked[from_base[picked]]
        which[chosen], col[chosen] = len(images), at[term_of[chosen]]
    new_counts = np.array([len(run[i].new) for i in deltas], dtype=np.int64)
    new_entries = np.flatnonzero(new)  # every Delta's new terms (entries of the run), ascending
    new_first = np.zeros(len(run), dtype=np.int64)  # each Delta's first among them
    new_first[deltas] = np.cumsum(new_counts) - new_counts
    from_run = picked[(old & ~from_base)[picked]]
    if len(from_run):
        src = earlier[from_run]
        owner = np.searchsorted(starts, src, side="right") - 1
        local = src - starts[owner]
        # a Delta's texts are its new terms' alone: the text of its new term at src is that term's rank
        # among them, found among every Delta's new terms at once (ascending entries of the run)
        in_delta = is_delta[owner]
        local[in_delta] = np.searchsorted(new_entries, src[in_delta]) - new_first[owner[in_delta]]
        which[from_run], col[from_run] = owner, local
    which[new_entries] = np.repeat(deltas, new_counts)
    col[new_entries] = np.arange(len(new_entries)) - np.repeat(new_first[deltas], new_counts)
    which, col = which[picked], col[picked]
    real = which != len(images) + 1  # (a term without a text adds no byte: the others gathered alone)
    blob, real_offsets = gather_texts(sources, which[real], col[real])
    lengths = np.zeros(len(picked), dtype=np.int64)
    lengths[real] = np.diff(real_offsets)
    offsets = np.zeros(len(picked) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    del which, col, real, real_offsets, lengths
    days = np.concatenate([np.asarray(x.last_seen, dtype=np.int32) for x in images])[picked]
    # the last Delta's image: every term a Delta resolves; the other Deltas' images: none
    values = {name: _values(name, tables[name][:, resolves]) for name in tables}
    inherited = from_base[picked] if texts_later else None
    out = list(run)
    for i in deltas:
        d = run[i]
        last = i == deltas[-1]
        tf, df, fit = (None if n not in values else values[n] if last else values[n][:, :0] for n in TABLES)
        assert tf is not None  # (every image has counts: `_delta_of` checks "tf" is the first table)
        image = Counts(
            list(d.classes),
            np.asarray(d.class_count, dtype=np.float64),
            terms[resolves] if last else terms[:0],
            blob if last else blob[:0],
            offsets if last else offsets[:1],
            tf,
            df,
            fit,
            days if last else days[:0],
            d.record,
            int(d.mail_docs),
        )
        out[i] = Update(image, list(d.known), metas[i], d.removed_digest, d.removed_label)
        out[i].inherited = None if inherited is None else inherited if last else inherited[:0]
    return out


def _resolved_table(name, run, deltas, images, base, at, in_base, anchor_entry, term_of, starts) -> np.ndarray:
    """(classes, terms) int64 units of table `name` of each term of a run
    (`_resolved_run`): its last anchor's value or the state's, plus the
    changes of the Deltas after the anchor."""
    if any(name not in run[i].tables for i in deltas) or getattr(base, name) is None:
        raise ValueError(f"a difference without the {name} table")
    n_classes = len(base.classes)
    final = np.zeros((n_classes, len(anchor_entry)), dtype=np.int64)
    from_state = (anchor_entry < 0) & in_base
    if np.any(from_state):
        table = _units(name, getattr(base, name)[:, at[from_state]])
        if table is None:
            raise ValueError(f"the model's {name} values are not whole units")
        final[:, from_state] = table
    for i in [i for i in range(len(run)) if not isinstance(run[i], Delta)]:
        table = getattr(images[i], name)
        if table is None:
            raise ValueError(f"an update without the {name} table")
        span = np.arange(starts[i], starts[i + 1])
        mine = np.flatnonzero(anchor_entry[term_of[span]] == span)  # its terms it is the last anchor of
        values = np.asarray(table)[:, mine]  # (whole units where a Delta after it builds on them)
        final[:, term_of[span[mine]]] = values if name != "fit" else np.round(values * SUM_SCALE)
    # the Deltas' changes, a few Deltas at a time (their temporaries a few times their cells, not the run's):
    # cell r * k + j of update i is row r, entry starts[i] + j
    chunk: list = []
    held = 0
    for i in deltas:
        chunk.append(i)
        held += len(run[i].cells[name])
        if i != deltas[-1] and held < _CELLS_AT_ONCE:
            continue
        cells = np.concatenate([run[j].cells[name] for j in chunk])
        counts = [len(run[j].cells[name]) for j in chunk]
        width = np.repeat([len(run[j].hashes) for j in chunk], counts)
        if len(cells) and (cells.min() < 0 or np.any(cells >= width * n_classes)):
            raise ValueError("a difference's cells out of range")
        entry = np.repeat(starts[chunk], counts) + cells % width
        term = term_of[entry]
        keep = entry > anchor_entry[term]  # the changes after the term's last anchor
        steps = np.concatenate([run[j].steps[name] for j in chunk])
        np.add.at(final, ((cells // width)[keep], term[keep]), steps[keep])
        chunk, held = [], 0
    return final


def _resolved_one(d: Delta, base: Counts, meta: dict, texts_later: bool = False) -> Update:
    """One Delta resolved against `base`, the counts of its terms before it
    (`_resolved_run` for a run of one, in a few array operations: a
    follower's next TELL of another writer's)."""
    k = len(d.hashes)
    at, present = found_in(base.hashes, d.hashes)
    old = np.ones(k, dtype=bool)
    old[d.new] = False
    old[d.gone] = False
    if not np.all(present[old]):
        raise ValueError("a difference's term without its text")
    if len(d.offsets) != len(d.new) + 1:
        raise ValueError("a difference's texts do not match its new terms")
    tables = {}
    for name in d.tables:
        if getattr(base, name) is None:
            raise ValueError(f"a difference without the {name} table")
        units = np.zeros((len(d.classes), k), dtype=np.int64)
        known = _units(name, getattr(base, name)[:, at[present]])
        if known is None:
            raise ValueError(f"the model's {name} values are not whole units")
        units[:, present] = known
        cells = d.cells[name]
        if len(cells) and (cells.min() < 0 or cells.max() >= units.size):
            raise ValueError("a difference's cells out of range")
        units.reshape(-1)[cells] += d.steps[name]
        units[:, d.gone] = 0
        tables[name] = _values(name, units)
    # texts: an old term's from the base, a new one's from the Delta, a gone one's none; the two blobs
    # end to end and one index of every byte (`gather_texts` costs 0.1 ms in its generality here)
    base_offsets = np.asarray(base.offsets, dtype=np.int64)
    start = np.zeros(k, dtype=np.int64)
    length = np.zeros(k, dtype=np.int64)
    if not texts_later:  # (else an old term's text is the state's: none here, `inherited`)
        start[old] = base_offsets[at[old]]
        length[old] = base_offsets[at[old] + 1] - start[old]
    start[d.new] = len(base.blob) + d.offsets[:-1]
    length[d.new] = np.diff(d.offsets)
    offsets = np.zeros(k + 1, dtype=np.int64)
    np.cumsum(length, out=offsets[1:])
    both = np.concatenate([np.asarray(base.blob, dtype=np.uint8), np.asarray(d.blob, dtype=np.uint8)])
    blob = both[np.repeat(start - offsets[:-1], length) + np.arange(offsets[-1])]
    image = Counts(
        list(d.classes),
        np.asarray(d.class_count, dtype=np.float64),
        np.asarray(d.hashes, dtype=np.uint64),
        blob,
        offsets,
        tables["tf"],
        tables.get("df"),
        tables.get("fit"),
        np.asarray(d.last_seen, dtype=np.int32),
        d.record,
        int(d.mail_docs),
    )
    out = Update(image, list(d.known), meta, d.removed_digest, d.removed_label)
    out.inherited = old if texts_later else None
    return out

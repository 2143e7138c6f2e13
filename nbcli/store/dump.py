"""A model as text (`nbcli dump`) and back (`nbcli load`).

The dump is JSON lines, UTF-8, one record per line, so that a person can
read it, grep it and diff two of them, and so that a model can move to any
future model-file version through it:

1. a header object: {"nbcli_dump": 1, "classes": [...], "model": {event
   model and smoothing settings}, "analyzer": {...}, "meta": {...},
   "class_count": [documents per class], "mail_documents": N,
   "columns": ["term", "count", "doc_freq", "fit", "last_seen"],
   "terms": V, "record": N}
2. V term lines, sorted by term text: [term, [count per class],
   [document frequency per class] or null, [complement's transformed sum
   per class] or null, "YYYY-MM-DD" last seen]
3. N record lines, in the record's order: {"digest": 32 hex digits,
   "class": name, "copies": n, "message_id": 16 hex digits (a hash of the
   Message-ID) or null, "when": POSIX seconds}

Counts are written as integers, other numbers as the shortest text that
reads back as the same float, so `load` gives the identical model: the same
arrays, the same meta, tables derived by training's own code. Loading
checks everything a model file's loader checks (it goes through the same
invariant checks), each line once: linear in the text. Before that, every
count (class_count, a term's counts and document frequencies, a record
line's copies) must be a whole number within the model file's bound
(0..2^48; copies from 1), a record line's date a whole number of seconds
within +-2^62, and no document may have two record lines in one class (the
record would count it twice): each is a one-line error naming the line.

This module is the text alone (`text_lines`, `parse`), and needs none of
the models' code; `dumped.dump_lines` and `dumped.load_lines` join it
to a Classifier (they take its counts and build one from them, and the
models sit at the top of the store package: see its docstring).
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

from nbcli.errors import NbcliError
from nbcli.store.checks import Corrupt, days_within
from nbcli.store.payload import calibration_state
from nbcli.text.hashing import hash_strings

VERSION = 1
COLUMNS = ["term", "count", "doc_freq", "fit", "last_seen"]
_MAX_COUNT = 1 << 48  # the model file's bound on every count
_MAX_WHEN = 1 << 62
_EPOCH = datetime.date(1970, 1, 1).toordinal()


def _numbers(values) -> list:
    a = np.asarray(values)
    if a.dtype.kind in "iu":
        return a.tolist()
    return [int(v) if float(v).is_integer() and abs(v) < 2**53 else float(v) for v in a.tolist()]


def _day(day: int) -> str:
    return datetime.date.fromordinal(_EPOCH + int(day)).isoformat()


def check_dumpable(classifier) -> None:
    """Refuse a model the dump has no place for (NbcliError)."""
    if getattr(classifier, "expected", None) is not None:
        raise NbcliError("the dump format has no place for an EM model's expected counts", hint="keep the model file")
    if getattr(classifier.model, "kind", None) == "table":
        raise NbcliError("a table model has no term counts to dump", hint="nbcli info MODEL --json shows it")


def text_lines(classifier, counts) -> Iterator[str]:
    """The dump of a Classifier whose counts (`Counts.of(classifier)`) are
    `counts`, line by line (without newlines). A last-seen day no date
    holds (a loaded model's are checked: `checks.days_within`) is refused
    before the first line, never an internal error in the middle."""
    try:
        days_within(np.asarray(counts.last_seen), "last_seen")
    except Corrupt:
        raise NbcliError(
            "the model has a term last seen on a day no date holds (past 0001-01-01..9999-12-31): it cannot be dumped"
        ) from None
    model = classifier.model
    texts = classifier.vocabulary.terms(np.arange(len(classifier.vocabulary)))
    header = {
        "nbcli_dump": VERSION,
        "classes": counts.classes,
        "model": model.spec(),
        "analyzer": classifier.analyzer_options.to_dict(),
        "meta": classifier.meta,
        "class_count": _numbers(counts.class_count),
        "mail_documents": counts.mail_docs,
        "columns": COLUMNS,
        "terms": len(texts),
        "record": len(counts.record),
    }
    if classifier.calibration is not None:
        header["calibration"] = calibration_state(classifier.calibration)
    yield json.dumps(header, ensure_ascii=False, sort_keys=True)
    for j in sorted(range(len(texts)), key=texts.__getitem__):
        row = [
            texts[j],
            _numbers(counts.tf[:, j]),
            None if counts.df is None else _numbers(counts.df[:, j]),
            None if counts.fit is None else _numbers(counts.fit[:, j]),
            _day(counts.last_seen[j]),
        ]
        yield json.dumps(row, ensure_ascii=False)
    record = counts.record
    for i in range(len(record)):
        digest = record.digest[i].astype("<u8").tobytes().hex()
        message_id = int(record.message_id[i])
        yield json.dumps(
            {
                "digest": digest,
                "class": counts.classes[int(record.label[i])],
                "copies": int(record.copies[i]),
                "message_id": f"{message_id:016x}" if message_id else None,
                "when": int(record.when[i]),
            },
            sort_keys=True,
        )


class _Bad(Exception):
    pass


class Dumped(NamedTuple):
    """A dump's content, every line checked: its header; the first nine
    fields of its Counts, in their order (classes, class_count, hashes,
    blob, offsets, tf, df, fit, last_seen: terms in hash order, tables
    (C, V)); and its record's arrays, for `Record.build` (digests (N, 2)
    uint64, labels, copies, message ids, when)."""

    header: dict
    counts: tuple[list, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, Any, Any, np.ndarray]
    record: tuple


def parse(lines, name: str = "dump") -> Dumped:
    """The content of a dump's lines (an iterable of str); NbcliError
    naming the line for anything that is not a dump nbcli wrote."""
    number = 0
    try:
        it = iter(lines)
        number = 1
        header = _json(next(it, ""), dict)
        if header.get("nbcli_dump") != VERSION or header.get("columns") != COLUMNS:
            raise _Bad("not an nbcli dump (or one of another version)")
        classes = header.get("classes")
        if not (isinstance(classes, list) and all(isinstance(c, str) for c in classes)):
            raise _Bad("bad classes")
        if len(set(classes)) != len(classes):
            raise _Bad("bad classes: one is named twice")
        n_classes = len(classes)
        index = {c: i for i, c in enumerate(classes)}
        n_terms, n_record = header.get("terms"), header.get("record")
        if not all(isinstance(n, int) and n >= 0 for n in (n_terms, n_record)):
            raise _Bad("bad term or record count")
        if n_terms == 0:  # a model of no terms scores nothing (train and prune refuse to make one)
            raise _Bad('"terms" is 0: a model needs at least one term')
        class_count = np.array(_counts(header.get("class_count"), n_classes), dtype=np.float64)
        texts, tf_rows, df_rows, fit_rows, seen = [], [], [], [], []
        for _ in range(n_terms):
            number += 1
            row = _json(next(it, ""), list)
            if len(row) != 5 or not isinstance(row[0], str):
                raise _Bad("a term line is [term, counts, doc_freq, fit, last_seen]")
            texts.append(row[0])
            tf_rows.append(_counts(row[1], n_classes))
            df_rows.append(None if row[2] is None else _counts(row[2], n_classes))
            fit_rows.append(None if row[3] is None else _vector(row[3], n_classes))
            seen.append(_parse_day(row[4]))
        entries: tuple[list, list, list, list, list] = ([], [], [], [], [])
        first_line: dict[tuple, int] = {}  # (digest, class) -> the line that recorded it
        for _ in range(n_record):
            number += 1
            entry = _json(next(it, ""), dict)
            missing = [key for key in ("digest", "class", "copies", "message_id", "when") if key not in entry]
            if missing:
                raise _Bad(f"bad record line: it has no {', '.join(repr(k) for k in missing)}")
            if not (isinstance(entry["class"], str) and entry["class"] in index):
                raise _Bad(f"bad record line: its class {entry['class']!r} is not one of the header's classes")
            label = index[entry["class"]]
            copies, when = entry["copies"], entry["when"]
            try:
                digest = np.frombuffer(bytes.fromhex(entry["digest"]), dtype="<u8")
                message_id = 0 if entry["message_id"] is None else int(entry["message_id"], 16)
            except (TypeError, ValueError):
                digest, message_id = np.zeros(0), -1
            if len(digest) != 2 or not 0 <= message_id < 1 << 64:
                raise _Bad("bad record line: digest is 32 hex digits, message_id 16 hex digits or null")
            if not _whole(copies, 1):
                raise _Bad(f"bad record line: copies {copies!r} is not a whole number in 1..2^48")
            if type(when) is not int or not -_MAX_WHEN <= when <= _MAX_WHEN:
                raise _Bad(f"bad record line: when {when!r} is not a whole number of seconds within +-2^62")
            key = (entry["digest"].lower(), label)
            if key in first_line:
                raise _Bad(f"the record has document {key[0]} in class {entry['class']} again (line {first_line[key]})")
            first_line[key] = number
            for part, value in zip(entries, (digest, label, copies, message_id, when)):
                part.append(value)
        for line in it:  # blank lines may end the text; nothing else may (it was read past a blank line)
            number += 1
            if line.strip():
                raise _Bad("more lines than the header says")
    except _Bad as exc:
        raise NbcliError(f"{name}, line {number}: {exc}", hint="give the text 'nbcli dump' wrote") from None
    for rows, what in ((df_rows, "doc_freq"), (fit_rows, "fit")):
        if rows and any(r is None for r in rows) and any(r is not None for r in rows):
            raise NbcliError(f"{name}: some terms have {what} and some do not")
    hashes = hash_strings(texts) if texts else np.zeros(0, np.uint64)
    order = np.argsort(hashes, kind="stable")
    if len(hashes) > 1 and (np.diff(hashes[order]) == 0).any():
        raise NbcliError(_twice(texts, hashes, order, name), hint="give the text 'nbcli dump' wrote")

    def table(rows, dtype):
        if not rows:
            return np.zeros((n_classes, 0), dtype=dtype)
        if rows[0] is None:
            return None
        return np.ascontiguousarray(np.array(rows, dtype=dtype)[order].T)

    tf_values = np.array(tf_rows, dtype=np.float64) if tf_rows else np.zeros((0, n_classes))
    integral = bool(np.all(tf_values == np.round(tf_values)))
    encoded = [texts[i].encode("utf-8", "surrogatepass") for i in order.tolist()]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    if encoded:
        np.cumsum([len(e) for e in encoded], out=offsets[1:])
    df = table(df_rows, np.int64) if df_rows else None
    counts = (
        list(classes),
        class_count,
        hashes[order],
        np.frombuffer(b"".join(encoded), dtype=np.uint8),
        offsets,
        table(tf_rows, np.int64 if integral else np.float64),
        df,
        table(fit_rows, np.float64) if fit_rows else None,
        np.array(seen, dtype=np.int32)[order] if seen else np.zeros(0, np.int32),
    )
    digests = np.array(entries[0], dtype=np.uint64).reshape(-1, 2)
    return Dumped(header, counts, (digests, entries[1], entries[2], entries[3], entries[4]))


def _twice(texts: list, hashes: np.ndarray, order: np.ndarray, name: str) -> str:
    """The error for the earliest term line whose hash an earlier line has
    (term line i is line i + 2): the same term again, or (a 64-bit hash
    collision, which no dump nbcli writes has) another term of its hash."""
    same = np.flatnonzero(np.diff(hashes[order]) == 0)
    # order is stable: of two terms of one hash, the earlier line comes first
    later = order[same + 1]
    pick = int(np.argmin(later))
    first, again = int(order[same[pick]]), int(later[pick])
    if texts[first] == texts[again]:
        return f"{name}, line {again + 2}: the term {texts[again]!r} again (line {first + 2} has it)"
    return f"{name}, line {again + 2}: its term has the hash of line {first + 2}'s, another term"


def _json(line: str, kind: type):
    if not line:
        raise _Bad("the text ends early")
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        raise _Bad("not a JSON line") from None
    if not isinstance(value, kind):
        raise _Bad(f"expected a JSON {'object' if kind is dict else 'array'}")
    return value


def _vector(values, n: int) -> list:
    if not (isinstance(values, list) and len(values) == n):
        raise _Bad(f"expected {n} numbers, one per class")
    for v in values:
        # a float, or an int a float holds (np.isfinite refuses ints past 64 bits: a TypeError)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not abs(v) <= _MAX_NUMBER:
            raise _Bad("expected numbers")
    return values


_MAX_NUMBER = 1e300  # no count, weight or sum nbcli writes comes near it; NaN and infinities fail `<=`


def _whole(value, low: int = 0) -> bool:
    """value is an int (not a bool, not a float) in low..MAX_COUNT."""
    return type(value) is int and low <= value <= _MAX_COUNT


def _counts(values, n: int) -> list:
    """n whole numbers in 0..MAX_COUNT (a dump writes counts as integers)."""
    values = _vector(values, n)
    for v in values:
        if not _whole(v):
            raise _Bad(f"bad count {v!r}: counts are whole numbers in 0..2^48")
    return values


def _parse_day(text) -> int:
    try:
        return datetime.date.fromisoformat(text).toordinal() - _EPOCH
    except (TypeError, ValueError):
        raise _Bad(f"bad last-seen date {text!r}") from None

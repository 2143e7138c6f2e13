"""The invariant checks a model file's loader (`modelfile.from_payload`)
and a journal's (`journal_records.update_of`) make of the values they read:
a value that breaks one is `Corrupt`, which each turns into a one-line
error naming the file. Shared by both, so that a journal's record is held
to exactly what a model file's same values are.
"""

from __future__ import annotations

import numpy as np

from nbcli.nb.counts import FIRST_DAY, LAST_DAY
from nbcli.text.documents import label_problem


class Corrupt(Exception):
    """A bad payload entry: Corrupt(key) or Corrupt(key, what is wrong)."""

    def __str__(self) -> str:
        key, *why = self.args
        return f"'{key}' {why[0]}" if why else f"bad or missing '{key}'"


# Bounds that no trained model comes near, so that a crafted one cannot
# overflow what is computed from it (sums of counts in int64 or float64,
# scores summed over a long document): counts are exact in float64 up to
# 2^53, and a table entry is a log probability (or a sum of them).
MAX_COUNT = float(1 << 48)
TABLE_LIMIT = 1e12


def array_of(p: dict, key: str, kinds: str, shape: tuple, optional: bool = False):
    a = p.get(key)
    if a is None and optional:
        return None
    if not isinstance(a, np.ndarray) or a.dtype.kind not in kinds or len(a.shape) != len(shape):
        raise Corrupt(key)
    for have, want in zip(a.shape, shape):
        if want is not None and have != want:
            raise Corrupt(key)
    return a


def terms_of(p: dict, prefix: str = "") -> tuple:
    """(hashes, blob, offsets) of the terms stored under `prefix`hashes,
    `prefix`blob and `prefix`offsets (a model file's vocabulary, "vocab_";
    a journal record's terms, ""), checked: strictly ascending 64-bit hashes
    (lookups are binary searches), and ascending offsets within the byte
    blob of their texts. The texts are not decoded here (that would cost as
    much as the checksum on a big model): `Vocabulary.terms` decodes what it
    shows, and shows bytes that are not UTF-8 as U+FFFD."""
    hashes = array_of(p, prefix + "hashes", "u", (None,))
    blob = array_of(p, prefix + "blob", "u", (None,))
    offsets = array_of(p, prefix + "offsets", "i", (len(hashes) + 1,))
    if hashes.dtype != np.uint64 or blob.dtype != np.uint8:
        raise Corrupt(prefix + ("hashes" if hashes.dtype != np.uint64 else "blob"))
    if len(hashes) > 1 and not (hashes[1:] > hashes[:-1]).all():
        raise Corrupt(prefix + "hashes", "is not strictly ascending")
    if offsets[0] != 0 or offsets[-1] != len(blob) or (offsets[1:] < offsets[:-1]).any():
        raise Corrupt(prefix + "offsets")
    return hashes, blob, offsets


def within(a, key: str, low: float, high: float):
    """a, if every value lies in [low, high] (NaN does not): min and max
    are two passes without a temporary array."""
    if a is not None and a.size and not (low <= a.min() and a.max() <= high):
        raise Corrupt(key, f"has values outside [{low:g}, {high:g}]")
    return a


def days_within(a, key: str):
    """a (whole numbers: last-seen days), if every day is one a date can
    hold (FIRST_DAY..LAST_DAY); Corrupt otherwise. None stays None."""
    if a is not None and a.size and not (FIRST_DAY <= a.min() and a.max() <= LAST_DAY):
        raise Corrupt(key, "has days outside 0001-01-01..9999-12-31")
    return a


def number(spec: dict, key: str, default, low: float, high: float = float("inf"), above: bool = False):
    value = spec.get(key, default)
    if value is None:
        return None
    if type(value) not in (int, float) or not (low < value if above else low <= value) or not value <= high:
        raise Corrupt("model", f"has a bad {key} ({value!r})")
    return float(value)


def classes_of(p: dict) -> list:
    classes = p.get("classes")
    if not (isinstance(classes, list) and len(classes) >= 2 and all(isinstance(c, str) for c in classes)):
        raise Corrupt("classes")
    if len(set(classes)) != len(classes):
        raise Corrupt("classes", "names a class twice")
    for label in classes:
        problem = label_problem(label)
        if problem:
            raise Corrupt("classes", f"has a bad class name: {problem}")
    return classes


def meta_of(meta) -> dict:
    """`meta`, checked where nbcli reads it (info, train --from-model)."""
    if not isinstance(meta, dict):
        raise Corrupt("meta")
    for key, kinds in (
        ("n_documents", (int,)),
        ("mail_documents", (int,)),
        ("created", (str,)),
        ("nbcli_version", (str,)),
        ("options", (dict,)),
        ("from_model", (str,)),
        ("calibration", (dict,)),
        ("decision", (dict,)),
    ):
        if key in meta and type(meta[key]) not in kinds:
            raise Corrupt("meta", f"has a bad {key}")
    for key, kinds in (("model_documents", (int,)), ("source", (str,)), ("skipped", (str,)), ("dropped", (str,))):
        value = meta.get("calibration", {}).get(key)
        if value is not None and type(value) not in kinds:
            raise Corrupt("meta", f"has a bad calibration {key}")
    for key in ("calibration", "decision"):
        per_class = (meta.get(key) or {}).get("class_documents")
        if per_class is not None and not (isinstance(per_class, list) and all(type(n) is int for n in per_class)):
            raise Corrupt("meta", f"has a bad {key} class_documents")
    if "n_documents" not in meta or meta["n_documents"] < 0:
        raise Corrupt("meta", "has no n_documents")
    return meta

"""Table cells into columns: missing cells, numbers, category codes, column
kinds, bin edges and recording resolution (a leaf: numpy only). The table
models (`tables`), table EM (`table_em`) and the reading of tables
(`table_classifier.read_table`) share these.

Missing cells: after .strip().lower(), "", "?", "na", "n/a" and "nan"
(`MISSING`); in a numeric column also anything that is not a finite number
(a non-finite float, or at scoring a text that does not parse).

Column kinds (`infer_kind`): a column is numeric when every present cell
parses as a finite number AND (some value is not an integer OR the column
has more than 10 distinct values); otherwise categorical, so 0/1 flags and
small integer codes are categories. A column with no present cell is
categorical.

Categories are the stripped cell texts, sorted by their string; a `Coded`
column holds each cell's index into them (a byte or two per cell).

Recording resolution (`recording_resolution`, for clustering's variance
floor, see `tables`): the smallest positive difference between a
column's distinct values, rounded to RESOLUTION_DIGITS significant digits.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

MISSING = frozenset({"", "?", "na", "n/a", "nan"})
MAX_INTEGER_CATEGORIES = 10  # integer columns with more distinct values are numeric


def is_missing(value: str) -> bool:
    return str(value).strip().lower() in MISSING


def _as_text(values) -> np.ndarray:
    """Cells as a numpy str array (None -> '')."""
    a = np.asarray(values)
    if a.dtype.kind == "U":
        return a
    if a.dtype.kind == "O":
        a = a.copy()
        # numpy's stubs refuse None as a ufunc operand; np.equal compares an object array with it cell by cell
        a[np.equal(a, None)] = ""  # type: ignore[call-overload]
    return a.astype(str)


def parse_numbers(values: Sequence[str] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(values (n,) float64, NaN for missing or unparseable cells; bad (n,)
    bool: present cells that are not finite numbers).

    Python's float syntax (surrounding spaces allowed); 'inf' and overflow
    such as '1e400' are bad. Fast path: the whole column at once; otherwise
    the distinct texts are parsed once each."""
    raw = values if isinstance(values, (list, tuple)) else None
    if isinstance(values, np.ndarray) and values.dtype.kind == "O":
        raw = values.tolist()
    if raw is not None:
        try:  # Python strs straight to floats: several times faster than through a numpy str array
            out = np.array(raw, dtype=np.float64)
        except (ValueError, TypeError):
            pass
        else:
            bad = np.isinf(out)
            out[bad] = np.nan
            return out, bad
    a = _as_text(values)
    n = a.shape[0]
    try:
        out = a.astype(np.float64)
    except ValueError:
        pass
    else:
        # the only texts that parse to NaN are the missing 'nan' spellings
        bad = np.isinf(out)
        out[bad] = np.nan
        return out, bad
    uniq, inverse = np.unique(a, return_inverse=True)
    parsed = np.full(len(uniq), np.nan)
    wrong = np.zeros(len(uniq), dtype=bool)
    for i, text in enumerate(uniq.tolist()):
        key = text.strip()
        if key.lower() in MISSING:
            continue
        try:
            number = float(key)
        except ValueError:
            wrong[i] = True
            continue
        if np.isfinite(number):
            parsed[i] = number
        else:
            wrong[i] = True
    inverse = inverse.reshape(n)
    return parsed[inverse], wrong[inverse]


def infer_kind(values: Sequence[str]) -> str:
    """'numeric' or 'categorical', by the rule in the module docstring."""
    return kind_of_numbers(*parse_numbers(values))


def kind_of_numbers(numbers: np.ndarray, bad: np.ndarray) -> str:
    """`infer_kind` of a column already parsed by `parse_numbers`."""
    present = numbers[~np.isnan(numbers)]
    if bad.any() or present.size == 0:
        return "categorical"
    if (present != np.round(present)).any():
        return "numeric"
    return "numeric" if np.unique(present).size > MAX_INTEGER_CATEGORIES else "categorical"


class Coded:
    """A categorical column read once (`coded`): its categories (the
    sorted, stripped, present cell texts) and codes (n,) int, each cell's
    index into them, -1 where missing: a byte or two per cell instead of a
    Python string. Indexing with rows gives those rows (same categories)."""

    __slots__ = ("categories", "codes")

    def __init__(self, categories: list[str], codes: np.ndarray):
        self.categories, self.codes = categories, codes

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, rows) -> Coded:
        return Coded(self.categories, self.codes[rows])

    def recode(self, categories: list[str] | None = None) -> tuple[list[str], np.ndarray]:
        """`category_codes` of the column: categories None, those present
        in these rows."""
        k = len(self.categories)
        if categories is None:
            used = np.bincount(self.codes[self.codes >= 0], minlength=k) > 0
            categories = [c for c, u in zip(self.categories, used.tolist()) if u]
            table = np.cumsum(used) - 1.0  # a code of an unused category never occurs
        else:
            index = {c: i for i, c in enumerate(categories)}
            table = np.array([index.get(c, len(categories)) for c in self.categories], dtype=np.float64)
        return categories, np.append(table, np.nan)[self.codes]  # code -1 picks the NaN


def coded(texts: Sequence[str], codes: np.ndarray) -> Coded:
    """The Coded column of cells given as distinct raw texts and each cell's
    index into them (the categories and missing cells of `category_codes`)."""
    keys = [text.strip() for text in texts]
    present = [key.lower() not in MISSING for key in keys]
    categories = sorted({key for key, ok in zip(keys, present) if ok})
    table = _key_codes(keys, present, categories)
    k = len(categories)
    dtype = np.int8 if k < 1 << 7 else np.int16 if k < 1 << 15 else np.int32
    return Coded(categories, np.where(np.isnan(table), -1, table).astype(dtype)[codes])


def category_codes(cells, categories: list[str] | None = None) -> tuple[list[str], np.ndarray]:
    """(categories, codes (n,) float64): the code of each cell's stripped
    text in the sorted categories, K for a text not among them, NaN for a
    missing cell. categories None: those of the cells, sorted. cells: raw
    texts or a `Coded` column."""
    if isinstance(cells, Coded):
        return cells.recode(categories)
    cells = _as_text(cells)
    if not categories:
        uniq, inverse = np.unique(cells, return_inverse=True)
        keys = [text.strip() for text in uniq.tolist()]
        present = [key.lower() not in MISSING for key in keys]
        if categories is None:
            categories = sorted({key for key, ok in zip(keys, present) if ok})
        return categories, _key_codes(keys, present, categories)[inverse.reshape(-1)]
    # cells that are a category exactly are looked up at once; the rest (missing,
    # unseen, with spaces around) by their distinct texts
    known = np.array(categories)
    codes = np.minimum(np.searchsorted(known, cells), len(categories) - 1)
    exact = known[codes] == cells
    codes = codes.astype(np.float64)
    if not exact.all():
        uniq, inverse = np.unique(cells[~exact], return_inverse=True)
        keys = [text.strip() for text in uniq.tolist()]
        present = [key.lower() not in MISSING for key in keys]
        codes[~exact] = _key_codes(keys, present, categories)[inverse.reshape(-1)]
    return categories, codes


def _key_codes(keys: list[str], present: list[bool], categories: list[str]) -> np.ndarray:
    index = {category: i for i, category in enumerate(categories)}
    unseen = len(categories)
    return np.array([index.get(key, unseen) if ok else np.nan for key, ok in zip(keys, present)], dtype=np.float64)


def column_numbers(column) -> tuple[np.ndarray, np.ndarray | None]:
    """A numeric column as float64, NaN for missing and non-finite cells,
    and for a column of texts the mask of present cells that are not
    finite numbers (`parse_numbers`), else None."""
    a = np.asarray(column)
    if a.dtype.kind in "UOS":
        return parse_numbers(a)
    out = np.asarray(a, dtype=np.float64)
    infinite = np.isinf(out)
    if infinite.any():
        out = out.copy()
        out[infinite] = np.nan
    return out, None


def equal_frequency_edges(values: np.ndarray, bins: int) -> np.ndarray:
    """Inner bin edges of the present values (see the module docstring)."""
    edges = np.unique(np.quantile(values, np.arange(1, bins) / bins, method="inverted_cdf"))
    return edges[edges < values.max()]


RESOLUTION_NOISE = 1e-12  # differences below this x the largest |value| are float noise, not recording steps
RESOLUTION_DIGITS = 6  # significant digits of a resolution (5.1 - 5.0 = 0.09999999999999964 -> 0.1)


def recording_resolution(values: np.ndarray) -> float | None:
    """The resolution r of present values (finite, 1-D): the smallest
    difference between distinct values above RESOLUTION_NOISE x max |x|
    (closer values are one recorded value parsed or computed twice),
    rounded to RESOLUTION_DIGITS significant digits. None when the values
    have fewer than two distinct values."""
    distinct = np.unique(values)
    if distinct.size < 2:
        return None
    steps = np.diff(distinct)
    steps = steps[steps > RESOLUTION_NOISE * float(np.abs(distinct).max())]
    if steps.size == 0:
        return None
    return float(f"{float(steps.min()):.{RESOLUTION_DIGITS}g}")

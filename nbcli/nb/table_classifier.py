"""A classifier of table rows (`TableClassifier`), and the reading of a table into columns.

A table model (`tables.TableModel`: categorical, Gaussian, kernel-density
or discretized columns, mixed) classifies rows of a CSV/TSV/JSON-lines
table, read as {field: cell text} (`sources.ReadOptions.rows`). This class
gives it the contract the commands use for every model — `classes`,
`score`, `classify`, `score_labelled`, `evaluate`, a calibration map,
`check_ready` — so predict, eval, info, cross-validation and the model file
treat it as they treat a text model. Only the analysis differs: a row's
features are its cells, picked by name, instead of a document's terms.

Which cells are features (`TableColumns`): every field but the label and id
fields (`--features all`, the default), or the named ones (`--features
A,B`), minus `--ignore-fields`; each column's type is inferred from the
training cells (`table_cells.infer_kind`) unless `--categorical` or `--numeric`
names it.

Training memory (`read_table`): the rows are read in batches of about
BATCH_CELLS cells and kept as columns: a categorical column as a
`table_cells.Coded` column (a byte or two per cell), a numeric one as float64
(8 bytes a cell), the labels as class indices; no Python object per row or
cell outlives its batch. A column whose type is still to be inferred also
keeps its cell texts, joined and zlib-compressed per batch (about half the
CSV's bytes for such a column; `--numeric` spares them), until the end of
the table: a column of numbers turns categorical at its first cell that is
not a number, and then its categories are the cells' texts ("1.0" and "1"
differ), so the texts cannot be rebuilt from the numbers. So training
holds about 8 bytes per numeric cell (plus its compressed text) and 1-2
per categorical cell: the model and its 5-fold calibration are the same,
bit for bit, as if every row were held (tests/nb/test_table_columns.py), and
cross-validation and calibration cut their folds out of these columns,
one column at a time (`CutColumns`).

At predict (`TableClassifier.score`), a present cell of a numeric column
that is not a finite number (a text, 'inf', an overflow such as 1e999) is
read as missing, as in training; the batch's log-posteriors come back as
`RowScores` naming those cells (from worker processes too), and predict
says once, at the end of the run, how many there were per column and the
first rows (`UnreadableCells`). A table on which a model's column is
missing is an error naming it (`sources.ReadOptions.need_fields`; a JSON
record may lack a field: that cell is missing).

Design (issue 26): `TableClassifier` derives from `classifier_base.
BaseClassifier`, not from the text `Classifier` (which it used to subclass
with None for the analyzer and vocabulary). Training, calibration,
cross-validation and clustering of rows, which use the folds of
`fit.crossval`, are `fit.table_training`'s; table EM is `table_em`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn, overload

import numpy as np

from nbcli.errors import NbcliError, ParameterError, listed
from nbcli.nb.classifier_base import BaseClassifier
from nbcli.nb.table_cells import MAX_INTEGER_CATEGORIES, coded, kind_of_numbers, parse_numbers
from nbcli.text.sources import Document, Row, batches

if TYPE_CHECKING:
    from nbcli.nb.tables import TableModel


@dataclass
class TableColumns:
    """How rows become columns: features (None: every field), fields to
    ignore, and type overrides (column names)."""

    features: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    categorical: list[str] = field(default_factory=list)
    numeric: list[str] = field(default_factory=list)

    def check(self) -> None:
        both = sorted(set(self.categorical) & set(self.numeric))
        if both:
            raise ParameterError(
                "categorical",
                "{names} is given as both {categorical} and {numeric}",
                hint="pick one",
                names=", ".join(both),
            )

    def names(self, rows: list[dict]) -> list[str]:
        """The feature columns of training rows: the fields in the order
        first seen, or the ones asked for (every one must exist)."""
        seen: dict[str, None] = dict.fromkeys(rows[0])
        shared = _shared_names(rows)
        if shared is None:  # JSON lines may differ from row to row
            first = rows[0].keys()
            for row in rows:
                if row.keys() != first:
                    seen.update(dict.fromkeys(row))
        return self.chosen(list(seen))

    def chosen(self, fields: list[str]) -> list[str]:
        """The feature columns among a table's fields (in the order first
        seen), or NbcliError if one named is not there or none is left."""
        wanted = fields if self.features is None else list(self.features)
        known = set(fields)
        missing = [n for n in [*wanted, *self.categorical, *self.numeric] if n not in known]
        if missing:
            raise NbcliError(
                f"the table has no field {missing[0]!r} (its fields: {listed(fields, 20)})",
                hint="name the columns as the header does",
            )
        names = [n for n in wanted if n not in set(self.ignore)]
        if not names:
            raise ParameterError("features", "no feature columns are left", hint="check {features} and {ignore}")
        return names


def _shared_names(rows: list) -> tuple | None:
    """The field names every row shares (the rows of one CSV/TSV table,
    `sources.Row`), or None."""
    first = rows[0]
    if not isinstance(first, Row):
        return None
    names = first.names
    return names if all(type(row) is Row and row.names is names for row in rows) else None


def row_columns(rows: list, names: list[str]) -> list[np.ndarray]:
    """The cells of each named column (object arrays of str; '' where a row
    lacks the field)."""
    import operator

    if not rows:
        return [np.array([], dtype=object) for _ in names]
    shared = _shared_names(rows)
    if shared is not None:  # one table's rows: their cell tuples as one (rows, fields) object array, built in C
        cells = np.array([row.values for row in rows], dtype=object)
        if cells.ndim != 2:  # a table without feature fields
            cells = np.empty((len(rows), 0), dtype=object)
        where = {n: i for i, n in enumerate(shared)}
        return [cells[:, where[name]] if name in where else _objects([""] * len(rows)) for name in names]
    pick = operator.itemgetter(*names)
    try:  # every row has every field: pick and transpose in C
        picked = [pick(row) for row in rows] if len(names) > 1 else [(pick(row),) for row in rows]
    except KeyError:
        return [np.array([row.get(name, "") for row in rows], dtype=object) for name in names]
    return [_objects(column) for column in zip(*picked)]


def _objects(cells) -> np.ndarray:
    array = np.empty(len(cells), dtype=object)
    array[:] = cells
    return array


class TableClassifier(BaseClassifier):
    """A TableModel, the names of its feature columns, the model's meta (the
    label and id fields it was trained with: `meta["table"]`), and a
    calibration map (None: raw posteriors). The stream methods (`classify`,
    `score_labelled`) are `BaseClassifier`'s, and so are `check_ready`
    (every class of a table model has rows: fit refuses one without) and
    `with_message_cap` (rows are read whole; --max-doc-bytes bounds a row);
    there is no analyzer and no vocabulary."""

    model: TableModel
    batches = staticmethod(batches)
    # no analyzer: `nbcli tokens -m TABLE_MODEL` analyses text with the default options, as it always has
    analyzer_options = None

    @property
    def names(self) -> list[str]:
        return self.model.names

    def uncalibrated(self) -> TableClassifier:
        if self.calibration is None:
            return self
        return TableClassifier(self.model, self.meta)

    def counts(self, docs: list, kinds: list[str] | None = None) -> np.ndarray:
        """The rows' encoded cells (n, J) (see `TableModel.encode`)."""
        return self._encoded(docs)[0]

    def _encoded(self, docs: list) -> tuple[np.ndarray, dict]:
        """`TableModel.encode_reporting` of rows ({field: cell}); a table's
        rows (`sources.Row`) without one of the model's columns are an
        error, a JSON record without a field has that cell missing."""
        for doc in docs:
            if not isinstance(doc, Mapping):
                raise NbcliError(
                    "a table model classifies rows of a table (.csv, .tsv, .jsonl, or --input-format csv, tsv or "
                    "jsonl), not documents",
                    hint="give a table with the model's columns: " + listed(self.names),
                )
        shared = _shared_names(docs) if docs else None
        lacking = [] if shared is None else [name for name in self.names if name not in shared]
        if lacking:
            raise NbcliError(
                f"the rows have no column {lacking[0]!r}, which the model classifies by",
                hint="give a table with the model's columns: " + listed(self.names),
            )
        return self.model.encode_reporting(row_columns(docs, self.names))

    def score(self, docs: list, kinds: list[str] | None = None, explain: int = 0):
        """`Classifier.score`; log-posteriors of rows with numeric cells
        that are not numbers come as `RowScores` naming them."""
        X, unreadable = self._encoded(docs)
        log_proba = self.model.predict_log_proba(X)
        if self.calibration is not None:
            log_proba = self.calibration.apply(log_proba)
        if unreadable:
            log_proba = RowScores.of(log_proba, unreadable)
        return (log_proba, self._explanations(X, explain)) if explain else log_proba

    def _explanations(self, X, top: int) -> list[dict]:
        """Per row, the columns that pushed it most toward its class (the
        event model's) against the runner-up: contribution log P(x_j | c) -
        log P(x_j | c'); they, the prior's difference and nothing else add
        up to the log-odds (missing cells contribute 0, counted as
        'unknown'); "unit" as `explain.unit` says."""
        from nbcli.nb.explain import unit
        from nbcli.nb.table_scoring import difference

        jll = self.model.joint_log_likelihood(X, relative=True)  # far cells: finite for the likeliest classes
        order = np.argsort(-jll, axis=1, kind="stable")
        c_of, v_of, rows = order[:, 0], order[:, 1], np.arange(len(X))
        per_column, far = self.model.scored(X, per_column=True)  # (n, J, C), the far cells' terms apart
        with np.errstate(invalid="ignore"):  # -inf - -inf: a row of probability 0 in every class (alpha 0)
            contribs = per_column[rows, :, c_of] - per_column[rows, :, v_of]
            log_odds = jll[rows, c_of] - jll[rows, v_of]
            for j, at, q, e in far:
                contribs[at, j] -= difference(q, e, c_of[at], v_of[at])
        contribs[np.isnan(contribs)], log_odds[np.isnan(log_odds)] = 0.0, 0.0
        prior = self.model.log_prior
        out = []
        for i in range(len(X)):
            c, v = int(c_of[i]), int(v_of[i])
            contrib = contribs[i]
            present = ~np.isnan(X[i])
            cols = [j for j in np.argsort(-np.abs(contrib), kind="stable").tolist() if present[j]][:top]
            out.append(
                {
                    "versus": self.classes[v],
                    "log_odds": float(log_odds[i]),
                    "prior": float(prior[c] - prior[v]),
                    "unknown": {"count": int((~present).sum()), "contribution": 0.0},
                    "terms": [
                        {
                            "term": f"{self.names[j]}={self._cell_text(j, X[i, j])}",
                            "count": 1,
                            "contribution": float(contrib[j]),
                        }
                        for j in cols
                    ],
                    "unit": unit(self.calibration is not None),
                }
            )
        return out

    def _cell_text(self, j: int, value: float) -> str:
        """An encoded cell as text: its category (or '(unseen)'), or its number."""
        if self.model.kinds[j] == "categorical":
            categories = self.model.categories[j]
            code = int(value)
            return categories[code] if code < len(categories) else "(unseen)"
        return f"{value:g}"

    def evaluate(self, docs: Iterable[Document], options=None, progress=None) -> dict:
        """Classify labelled rows and report the metrics (see `evaluate.report`)."""
        from nbcli.evaluate.report import report

        true_labels, log_proba = self.score_labelled(docs, progress)
        return report(true_labels, log_proba, self.classes, options, decision=self.meta.get("decision"))


class RowScores(np.ndarray):
    """Log-posteriors (n, C) of a batch of rows that had numeric cells that
    are not finite numbers (read as missing): `unreadable` {column name:
    indices of those rows in the batch}. It pickles with them, so a worker
    process's scores bring them back."""

    unreadable: dict | None = None

    @classmethod
    def of(cls, log_proba: np.ndarray, unreadable: dict) -> RowScores:
        out = np.asarray(log_proba).view(cls)
        out.unreadable = unreadable
        return out

    def __reduce__(self):
        return (RowScores.of, (np.asarray(self), self.unreadable))


class UnreadableCells:
    """The numeric cells of a run's rows that were not numbers: a count per
    column and the first SHOWN rows' ids, from the `RowScores` of each
    batch; `message` is the one warning line predict gives at the end."""

    SHOWN = 3

    def __init__(self):
        self.count: dict[str, int] = {}
        self.where: dict[str, list[str]] = {}

    def add(self, batch: list[Document], log_proba) -> None:
        for name, rows in (getattr(log_proba, "unreadable", None) or {}).items():
            self.count[name] = self.count.get(name, 0) + len(rows)
            shown = self.where.setdefault(name, [])
            shown.extend(batch[i].id for i in rows[: self.SHOWN - len(shown)].tolist())

    def message(self) -> str | None:
        if not self.count:
            return None
        parts = [
            f"{name} {count} ({', '.join(self.where[name])}{', …' if count > len(self.where[name]) else ''})"
            for name, count in self.count.items()
        ]
        return f"{sum(self.count.values())} cell(s) of numeric columns are not numbers; read as missing: " + "; ".join(
            parts
        )


# -- reading a table into columns ----------------------------------------------------

BATCH_CELLS = 1 << 17  # cells held as Python strings at a time while reading a table (some 10 MB)


@dataclass
class TableData:
    """A table read into columns (`read_table`): the feature columns'
    names and kinds ('categorical' or 'numeric', given or inferred), data
    per column (a `table_cells.Coded` column, or float64 numbers with NaN where
    missing), n rows, their classes (sorted labels) and y (n,) each row's
    class index (None unless read with labels), and notes on numeric
    columns with cells that are not numbers (read as missing)."""

    names: list[str]
    kinds: list[str]
    data: list
    n: int
    classes: list[str] | None
    y: np.ndarray | None
    notes: list[str]


class _Codes:
    """Texts numbered in the order first seen."""

    def __init__(self):
        self.index: dict[str, int] = {}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """The texts' numbers, in the smallest integer type that holds them."""
        index = self.index
        for text in set(texts).difference(index):
            index[text] = len(index)
        k = len(index)
        dtype = np.int8 if k <= 1 << 7 else np.int16 if k <= 1 << 15 else np.int32
        return np.fromiter(map(index.__getitem__, texts), dtype=dtype, count=len(texts))

    def texts(self) -> list[str]:
        return list(self.index)


def _pack(cells: list[str]):
    """Cells as compressed bytes (a tuple if a cell holds the separator)."""
    import zlib

    text = "\0".join(cells)
    if text.count("\0") != len(cells) - 1:
        return tuple(cells)
    return zlib.compress(text.encode("utf-8", "surrogatepass"), 1)


def _unpack(packed) -> Sequence[str]:
    import zlib

    if isinstance(packed, tuple):
        return packed
    return zlib.decompress(packed).decode("utf-8", "surrogatepass").split("\0")


class _ColumnReader:
    """One feature column, read a batch of cells at a time: kind
    'categorical' or 'numeric' (given), or None while it is inferred by
    `table_cells.kind_of_numbers`'s rule (see the module docstring)."""

    def __init__(self, kind: str | None):
        self.kind = kind
        self.codes = _Codes()
        self.coded: list[np.ndarray] = []  # categorical: codes of the cells' texts
        self.numbers: list[np.ndarray] = []  # numeric, or being inferred
        self.texts: list = []  # being inferred: the cells of each batch (`_pack`)
        self.bad = 0  # given numeric: cells that are not numbers
        self.fraction = False  # a number that is not whole was seen
        self.wholes: set[float] = set()  # the distinct whole numbers, up to one past the limit
        self.limit = MAX_INTEGER_CATEGORIES

    def add(self, cells: list[str]) -> None:
        if self.kind == "categorical":
            self.coded.append(self.codes.encode(cells))
            return
        values, bad = parse_numbers(cells)
        if self.kind == "numeric":
            self.numbers.append(values)
            self.bad += int(bad.sum())
            return
        if bad.any():  # not a number: the column is categorical, its cells so far too
            self._categorical()
            self.coded.append(self.codes.encode(cells))
            return
        self.numbers.append(values)
        self.texts.append(_pack(cells))
        if not self.fraction:
            present = values[~np.isnan(values)]
            if (present != np.round(present)).any():
                self.fraction, self.wholes = True, set()
            elif len(self.wholes) <= self.limit:
                self.wholes.update(np.unique(present).tolist())

    def _categorical(self) -> None:
        self.kind = "categorical"
        self.coded = [self.codes.encode(_unpack(packed)) for packed in self.texts]
        self.numbers, self.texts = [], []

    def finish(self, name: str) -> tuple[str, object, str | None]:
        """(kind, data, note or None), the batches let go."""
        if self.kind is None:
            if self.fraction or len(self.wholes) > self.limit:
                self.kind = "numeric"
            else:
                self._categorical()
        if self.kind == "numeric":
            data = np.concatenate(self.numbers)
            self.numbers, self.texts = [], []
            note = f"{self.bad} cell(s) of {name} are not numbers; read as missing" if self.bad else None
            return "numeric", data, note
        codes = np.concatenate(self.coded)
        self.coded = []
        return "categorical", coded(self.codes.texts(), codes), None


def read_table(docs: Iterable[Document], columns: TableColumns, labelled: bool = True) -> TableData:
    """The feature columns of row documents (their data {field: cell}), read
    in batches into columns (see the module docstring), with their labels
    unless not `labelled`. The fields are those of `TableColumns.names`;
    a row without a field has that cell missing."""
    columns.check()
    forced = {**dict.fromkeys(columns.categorical, "categorical"), **dict.fromkeys(columns.numeric, "numeric")}
    ignore = set(columns.ignore)
    seen: dict[str, None] = {}
    readers: dict[str, _ColumnReader] = {}
    labels, y_parts = _Codes(), []  # labelled rows' labels are texts
    n_rows = 0
    last_names: tuple | None = None  # the field names of the last table's rows

    def add(batch: list[Document]) -> None:
        nonlocal n_rows, last_names
        rows: list[Any] = [doc.data for doc in batch]  # {field: cell} mappings (checked as they were read)
        shared = _shared_names(rows)
        if shared is not None:
            if shared is not last_names:
                seen.update(dict.fromkeys(shared))
                last_names = shared
        else:
            keys = None
            for row in rows:
                if row.keys() != keys:
                    keys = row.keys()
                    seen.update(dict.fromkeys(row))
        wanted = [n for n in (seen if columns.features is None else columns.features) if n in seen and n not in ignore]
        for name in wanted:
            if name not in readers:
                readers[name] = _ColumnReader(forced.get(name))
                if n_rows:  # a field first seen now: missing in the rows before
                    readers[name].add([""] * n_rows)
        for name, cells in zip(wanted, row_columns(rows, wanted)):
            readers[name].add(cells.tolist())
        if labelled:
            batch_labels: list[Any] = [doc.label for doc in batch]  # labelled rows: texts
            y_parts.append(labels.encode(batch_labels))
        n_rows += len(batch)

    batch: list[Document] = []
    size = 1
    for doc in docs:
        if type(doc.data) is not Row and not isinstance(doc.data, Mapping):  # the ABC's check is slow
            _not_a_row(doc)
        if not batch:
            size = max(1, BATCH_CELLS // max(1, len(doc.data)))
        batch.append(doc)
        if len(batch) >= size:
            add(batch)
            batch = []
    if batch:
        add(batch)
    del batch
    if n_rows == 0:
        raise NbcliError("the table has no rows", hint="check the path")
    names = columns.chosen(list(seen))
    kinds, data, notes = [], [], []
    for name in names:
        kind, column, note = readers.pop(name).finish(name)
        kinds.append(kind)
        data.append(column)
        if note:
            notes.append(note)
    classes = y = None
    if labelled:
        classes = sorted(labels.texts())
        order = np.array([classes.index(c) for c in labels.texts()], dtype=np.int64)
        y = order[np.concatenate(y_parts)]
    return TableData(names, kinds, data, n_rows, classes, y, notes)


class CutColumns(Sequence):
    """The columns `data` cut to `rows` (a mask or indices), each cut when
    it is taken: a fold's columns without a copy of them all at once."""

    def __init__(self, data: list, rows: np.ndarray):
        self.data, self.rows = data, rows

    def __len__(self) -> int:
        return len(self.data)

    @overload
    def __getitem__(self, j: int) -> Any: ...

    @overload
    def __getitem__(self, j: slice) -> list: ...

    def __getitem__(self, j):
        if isinstance(j, slice):
            return [self[i] for i in range(len(self))[j]]
        return self.data[j][self.rows]


# -- rows for training ------------------------------------------------------------


def _not_a_row(doc: Document) -> NoReturn:
    """Refuse a document that is not a table row (a text file given to a
    table model); the callers check inline, per row, and call this only then."""
    raise ParameterError(
        "features",
        "{doc} is not a row of a table; table models train on .csv, .tsv or .jsonl tables",
        hint="drop {features} to train a text model",
        doc=doc.id,
    )


def read_rows(docs: Iterable[Document]) -> tuple[list[Mapping], list[str | None]]:
    """The rows and labels of labelled row documents."""
    rows: list[Any] = []  # {field: cell} mappings, checked here
    labels: list[str | None] = []
    for doc in docs:
        if type(doc.data) is not Row and not isinstance(doc.data, Mapping):  # the ABC's check is slow
            _not_a_row(doc)
        rows.append(doc.data)
        labels.append(doc.label)
    if not rows:
        raise NbcliError("the table has no rows", hint="check the path")
    return rows, labels


def typed_columns(names, raw, columns: TableColumns):
    """Each column's kind ('categorical' or 'numeric': given, or inferred)
    and its data (numeric: floats, NaN where missing); notes on numeric
    columns with cells that are not numbers (read as missing)."""
    kinds, data, notes = [], [], []
    for name, cells in zip(names, raw):
        kind = "categorical" if name in columns.categorical else "numeric" if name in columns.numeric else None
        if kind != "categorical":
            values, bad = parse_numbers(cells)
            kind = kind or kind_of_numbers(values, bad)
        if kind == "numeric":
            if bad.any():
                notes.append(f"{int(bad.sum())} cell(s) of {name} are not numbers; read as missing")
            data.append(values)
        else:
            data.append(cells)
        kinds.append(kind)
    return kinds, data, notes

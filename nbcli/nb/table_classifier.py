"""A classifier of table rows: the table family's `Classifier`.

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
training cells (`tables.infer_kind`) unless `--categorical` or `--numeric`
names it.

Training memory (`read_table`): the rows are read in batches of about
BATCH_CELLS cells and kept as columns: a categorical column as a
`tables.Coded` column (a byte or two per cell), a numeric one as float64
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
one column at a time (`_Rows`).

At predict (`TableClassifier.score`), a present cell of a numeric column
that is not a finite number (a text, 'inf', an overflow such as 1e999) is
read as missing, as in training; the batch's log-posteriors come back as
`RowScores` naming those cells (from worker processes too), and predict
says once, at the end of the run, how many there were per column and the
first rows (`UnreadableCells`). A table on which a model's column is
missing is an error naming it (`sources.ReadOptions.need_fields`; a JSON
record may lack a field: that cell is missing).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from nbcli.errors import NbcliError, listed
from nbcli.nb.classifier import Classifier
from nbcli.text.sources import Document, Row


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
            raise NbcliError(f"{', '.join(both)} is given as both --categorical and --numeric", hint="pick one")

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
            raise NbcliError("no feature columns are left", hint="check --features and --ignore-fields")
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


class TableClassifier(Classifier):
    """A TableModel, the names of its feature columns, the model's meta (the
    label and id fields it was trained with: `meta["table"]`), and a
    calibration map (None: raw posteriors)."""

    def __init__(self, model, meta: dict, calibration=None):
        super().__init__(None, None, model, meta, calibration=calibration)  # no analyzer, no vocabulary

    @property
    def names(self) -> list[str]:
        return self.model.names

    def with_message_cap(self, max_message_bytes: int | None) -> TableClassifier:
        return self  # rows are read whole (--max-doc-bytes bounds a row)

    def uncalibrated(self) -> TableClassifier:
        if self.calibration is None:
            return self
        return TableClassifier(self.model, self.meta)

    def check_ready(self, name: str = "the model") -> None:
        return None  # every class of a table model has rows: fit refuses one without

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

        per_column = self.model.column_log_likelihood(X)  # (n, J, C)
        jll = self.model.joint_log_likelihood(X)
        prior = self.model.log_prior
        out = []
        for i in range(len(X)):
            order = np.argsort(-jll[i], kind="stable")
            c, v = int(order[0]), int(order[1])
            contrib = per_column[i, :, c] - per_column[i, :, v]
            present = ~np.isnan(X[i])
            cols = [j for j in np.argsort(-np.abs(contrib), kind="stable").tolist() if present[j]][:top]
            out.append(
                {
                    "versus": self.classes[v],
                    "log_odds": float(jll[i, c] - jll[i, v]),
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
    per column (a `tables.Coded` column, or float64 numbers with NaN where
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
    `tables.kind_of_numbers`'s rule (see the module docstring)."""

    def __init__(self, kind: str | None):
        from nbcli.nb.tables import MAX_INTEGER_CATEGORIES

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
        from nbcli.nb.tables import parse_numbers

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
        from nbcli.nb.tables import coded

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
    labels, y_parts = _Codes(), []
    state = {"n": 0, "names": None}

    def add(batch: list[Document]) -> None:
        rows = [doc.data for doc in batch]
        shared = _shared_names(rows)
        if shared is not None:
            if shared is not state["names"]:
                seen.update(dict.fromkeys(shared))
                state["names"] = shared
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
                if state["n"]:  # a field first seen now: missing in the rows before
                    readers[name].add([""] * state["n"])
        for name, cells in zip(wanted, row_columns(rows, wanted)):
            readers[name].add(cells.tolist())
        if labelled:
            y_parts.append(labels.encode([doc.label for doc in batch]))
        state["n"] += len(batch)

    batch: list[Document] = []
    size = 1
    for doc in docs:
        if type(doc.data) is not Row and not isinstance(doc.data, Mapping):  # the ABC's check is slow
            raise NbcliError(
                f"{doc.id} is not a row of a table; table models train on .csv, .tsv or .jsonl tables",
                hint="drop --features to train a text model",
            )
        if not batch:
            size = max(1, BATCH_CELLS // max(1, len(doc.data)))
        batch.append(doc)
        if len(batch) >= size:
            add(batch)
            batch = []
    if batch:
        add(batch)
    del batch
    if state["n"] == 0:
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
    return TableData(names, kinds, data, state["n"], classes, y, notes)


class _Rows(Sequence):
    """The columns `data` cut to `rows` (a mask or indices), each cut when
    it is taken: a fold's columns without a copy of them all at once."""

    def __init__(self, data: list, rows: np.ndarray):
        self.data, self.rows = data, rows

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, j: int):
        return self.data[j][self.rows]


# -- training ------------------------------------------------------------------------


def fit_rows(
    docs: Iterable[Document],
    columns: TableColumns,
    settings,
    calibrate: str | None,
    strict: bool,
    label_field: str = "label",
    id_field: str | None = None,
):
    """A TableClassifier of labelled rows (documents whose data are
    {field: cell}); calibrate: the calibration method ('default': by the
    number of classes; None: none), fitted on 5-fold cross-validated
    scores of the rows (strict: refuse a table too small for that). The
    label and id fields are kept in the meta: predict and eval read rows
    with them unless told otherwise."""
    import datetime

    from nbcli import __version__

    table = read_table(docs, columns)
    classes, y, names, kinds, data = table.classes, table.y, table.names, table.kinds, table.data
    if len(classes) < 2:
        raise NbcliError(
            f"the table has only one class ({classes[0]})", hint="a classifier needs rows of at least two classes"
        )
    model = _fit(classes, y, names, kinds, data, settings)
    meta = {
        "n_documents": table.n,
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "nbcli_version": __version__,
        "table": {
            "label_field": label_field,
            "id_field": id_field,
            "inferred": [n for n in names if n not in set(columns.categorical) | set(columns.numeric)],
        },
        "notes": table.notes,
    }
    classifier = TableClassifier(model, meta)
    if calibrate is not None:
        _calibrate(classifier, classes, y, names, kinds, data, settings, calibrate, strict)
    return classifier


def _typed(names, raw, columns: TableColumns):
    """Each column's kind ('categorical' or 'numeric': given, or inferred)
    and its data (numeric: floats, NaN where missing); notes on numeric
    columns with cells that are not numbers (read as missing)."""
    from nbcli.nb.tables import kind_of_numbers, parse_numbers

    kinds, data, notes = [], [], []
    for name, cells in zip(names, raw):
        kind = "categorical" if name in columns.categorical else "numeric" if name in columns.numeric else None
        values, bad = parse_numbers(cells) if kind != "categorical" else (None, None)
        kind = kind or kind_of_numbers(values, bad)
        if kind == "numeric":
            if bad.any():
                notes.append(f"{int(bad.sum())} cell(s) of {name} are not numbers; read as missing")
            data.append(values)
        else:
            data.append(cells)
        kinds.append(kind)
    return kinds, data, notes


def _fit(classes, y, names, kinds, data, settings):
    from nbcli.nb.tables import TableModel

    return TableModel.fit(classes, y, names, kinds, data, settings)


def _calibrate(classifier, classes, y, names, kinds, data, settings, calibrate, strict) -> None:
    """Fit the calibration map on 5-fold stratified cross-validation scores:
    each fold's rows scored by the model of the other folds' rows."""
    from nbcli.defaults import MIN_CALIBRATION_PER_CLASS, default_calibration
    from nbcli.fit.crossval import stratified_folds
    from nbcli.nb.calibrators import fit_cross_validated

    sizes = np.bincount(y, minlength=len(classes))
    least = 2 if strict else MIN_CALIBRATION_PER_CLASS
    if sizes.min() < least:
        smallest = classes[int(sizes.argmin())]
        problem = (
            f"class {smallest} has only one row"
            if sizes.min() < 2
            else f"class {smallest} has {int(sizes.min())} rows, fewer than the {least} a calibration map needs"
        )
        if strict:
            raise NbcliError(
                f"cannot calibrate by cross-validation: {problem}", hint="give more rows, or --calibrate none"
            )
        classifier.meta["calibration"] = {"skipped": problem}
        return
    k = int(min(5, sizes.min()))
    fold = stratified_folds(y, k, 0)
    scores = np.zeros((len(y), len(classes)))
    for f in range(k):
        train, test = fold != f, fold == f
        part = _fit(classes, y[train], names, kinds, _Rows(data, train), settings)
        scores[test] = part.predict_log_proba(part.encode(_Rows(data, test)))
    method = default_calibration(len(classes)) if calibrate == "default" else calibrate
    classifier.calibration, skipped = fit_cross_validated(method, scores, y, classes, strict)
    if skipped is not None:
        classifier.meta["calibration"] = {"skipped": skipped}
        return
    classifier.meta["calibration"] = {"source": "cross-validation", "model_documents": int(len(y))}


# -- cross-validation ----------------------------------------------------------------


def read_rows(docs: Iterable[Document]) -> tuple[list[dict], list[str]]:
    """The rows and labels of labelled row documents."""
    rows, labels = [], []
    for doc in docs:
        if type(doc.data) is not Row and not isinstance(doc.data, Mapping):  # the ABC's check is slow
            raise NbcliError(
                f"{doc.id} is not a row of a table; table models train on .csv, .tsv or .jsonl tables",
                hint="drop --features to train a text model",
            )
        rows.append(doc.data)
        labels.append(doc.label)
    if not rows:
        raise NbcliError("the table has no rows", hint="check the path")
    return rows, labels


def cross_validate(docs, columns: TableColumns, settings, k: int, seed: int, eval_options) -> dict:
    """K-fold stratified cross-validation of a table model (`eval --cv`):
    the same report as for text models (`crossval.summarise`). docs: row
    documents, or a table already read (`read_table`, as `tune` reads it
    once for all its trials). The column types are decided once, on the
    whole table; each fold's model is fitted on the other folds' rows
    (their categories, their statistics) and scores the fold's rows
    uncalibrated, as text models' folds are."""
    from nbcli.evaluate.report import report
    from nbcli.fit.crossval import AnalysedCorpus, check_folds, stratified_folds, summarise

    table = docs if isinstance(docs, TableData) else read_table(docs, columns)
    classes, y, names, kinds, data = table.classes, table.y, table.names, table.kinds, table.data
    corpus = AnalysedCorpus(None, y, classes, None, 0)
    check_folds(corpus, k)
    fold = stratified_folds(y, k, seed)
    reports = []
    for f in range(k):
        train, test = fold != f, fold == f
        present = sorted(set(y[train].tolist()))
        part = _fit(
            [classes[c] for c in present], _reindex(y[train], present), names, kinds, _Rows(data, train), settings
        )
        log_proba = part.predict_log_proba(part.encode(_Rows(data, test)))
        reports.append(report([classes[c] for c in y[test].tolist()], log_proba, part.classes, eval_options))
    return summarise(corpus, k, seed, reports)


def _reindex(y: np.ndarray, present: list[int]) -> np.ndarray:
    """Class indices among the classes present."""
    where = np.full(max(present) + 1, -1, dtype=np.int64)
    where[present] = np.arange(len(present))
    return where[y]


# -- clustering ----------------------------------------------------------------------


def cluster_rows(
    docs: Iterable[Document],
    columns: TableColumns,
    settings,
    k,
    restarts: int,
    seed: int,
    max_iter: int = 200,
    tol: float = 1e-7,
):
    """(TableClassifier of the clusters cluster1..clusterK, BIC table or
    None) of table rows (their labels ignored): a mixture of table models
    fitted by EM (see `em_rows`). Each of `restarts` runs starts from
    seeded random memberships (`start_memberships`); the run with the
    highest objective wins. k 'auto': 1 to 10 clusters, the lowest BIC =
    -2 log-likelihood + free parameters x ln rows (the log-likelihood
    without the parameters' prior; per cluster K - 1 parameters for a
    categorical or discretize column of K categories or bins, 2 for a
    gaussian one, plus k - 1 mixing weights when the prior is fitted).
    Clusters whose expected rows fall to exactly 0 are dropped. A gaussian
    column's variances are floored at r^2/12, r the resolution its values
    are recorded to (`tables.recording_resolution`; the module docstring
    of `tables`): without it a cluster collapsed onto a repeated value has
    an unbounded likelihood, and BIC picks too many clusters."""
    from nbcli.nb.tables import WeightedColumns, check_settings

    settings = check_settings(settings)
    if settings.m_estimate is not None and settings.m_estimate[1] is not None:
        raise NbcliError(
            "cluster: an m-estimate with P is not a distribution, so EM has nothing to maximise",
            hint="give --m-estimate M alone",
        )
    rows, _ = read_rows(docs)
    columns.check()
    names = columns.names(rows)
    kinds, data, _ = _typed(names, row_columns(rows, names), columns)
    prepared = WeightedColumns(names, kinds, data, settings, resolution_floor=True)
    n = len(rows)
    table, fits = None, {}
    if k == "auto":
        table = []
        for kk in range(1, min(10, n) + 1):
            fits[kk] = _best_clustering(prepared, kk, restarts if kk > 1 else 1, seed, max_iter, tol)
            fitted, objective, _ = fits[kk]
            loglik = objective - fitted.log_parameter_prior()
            bic = -2 * loglik + free_parameters(fitted) * np.log(n)
            table.append({"k": kk, "bic": float(bic), "log_likelihood": float(loglik)})
        k = min(table, key=lambda row: row["bic"])["k"]
        if k == 1:
            raise NbcliError(
                "the rows look like one cluster (the lowest BIC is at k = 1)", hint="give -k 2 or more to split them"
            )
    if not 2 <= k <= n:
        raise NbcliError(f"-k {k}: give 2 to {n} clusters (the number of rows)")
    import datetime

    from nbcli import __version__

    model, objective, iterations = fits.get(k) or _best_clustering(prepared, k, restarts, seed, max_iter, tol)
    meta = {
        "n_documents": n,
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "nbcli_version": __version__,
        "table": {"label_field": None, "id_field": None},
        "clusters": {
            "k": len(model.classes),
            "restarts": restarts,
            "seed": seed,
            "objective": float(objective),
            "log_likelihood": float(objective - model.log_parameter_prior()),
            "iterations": iterations,
            "bic": table,
        },
    }
    return TableClassifier(model, meta), table


def free_parameters(model) -> int:
    """The free parameters of a mixture of table models (see `cluster_rows`).
    The variance floors (epsilon, r^2/12) are constants of the data, not
    parameters: a gaussian column counts its mean and variance."""
    k = len(model.classes)
    per_cluster = sum(
        model.stats[j]["counts"].shape[1] - 1 if kind in ("categorical", "discretize") else 2
        for j, kind in enumerate(model.kinds)
    )
    return k * per_cluster + (k - 1 if model.settings.prior == "fit" else 0)


def e_step(model, X: np.ndarray) -> tuple[np.ndarray, float]:
    """(R (n, C) posterior memberships P(c | x_i), as `predict_log_proba`
    gives them; objective J = log p(theta) + sum_i log sum_c pi_c P(x_i | c))
    of the mixture `model` on the encoded rows X. log p(theta) is
    `TableModel.log_parameter_prior`; J is -inf when a row has probability
    0 in every cluster (unsmoothed counts only)."""
    from nbcli.nb.logmath import log_softmax

    jll = model.joint_log_likelihood(X)
    top = jll.max(axis=1)
    finite = np.isfinite(top)
    with np.errstate(divide="ignore"):
        lse = np.where(finite, top, -np.inf) + np.log(np.exp(jll - np.where(finite, top, 0.0)[:, None]).sum(axis=1))
    jll[~finite] = model.log_prior
    objective = model.log_parameter_prior() + float(lse.sum())
    return np.exp(log_softmax(jll)), objective


def start_memberships(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """Random starting memberships (n, k): each row wholly in a random
    cluster, rows 0..k-1 in clusters 0..k-1 so that none starts empty."""
    assign = rng.integers(0, k, n)
    assign[:k] = np.arange(min(k, n))
    return np.eye(k)[assign]


def em_rows(prepared, R: np.ndarray, max_iter: int, tol: float):
    """EM for a mixture of table models from memberships R (n, k):
    (model, its memberships R, objectives). Each iteration is an M step
    (the expected-count fit, `WeightedColumns.fit`) and an E step
    (`e_step`: the memberships and the objective J of the model just
    fitted); it stops after max_iter iterations, or when J rose by at most
    tol x |J| (relative).

    J never decreases: the E step makes the memberships the posterior, and
    the M step maximises sum_i sum_c r_ic log(pi_c P(x_i | c)) + log p(theta)
    for categorical and discretize columns (the smoothed counts are the
    Dirichlet posterior mode) and the prior. A gaussian column's resolution
    floor f = r^2/12 (`WeightedColumns(..., resolution_floor=True)`)
    depends on the data only, never on the memberships, so every M step
    maximises over the same set s_c >= f: the maximiser of -N_c/2 log s -
    N_c var_c / (2 s) there is max(var_c, f), scored as max(var_c +
    epsilon, f). Above the floor the maximiser is var_c, not var_c +
    epsilon (GaussianNB's floor, kept): a
    step in which var_c grows by less than epsilon can lower J, by at most
    about N_c epsilon^2 / (4 var_c^2) per cluster and column, far below the
    float resolution of J at the default var_smoothing (a shrinking
    variance, as in a cluster collapsing on a few values, cannot). And J
    is computed in floats: in a column whose values are all equal up to
    rounding, epsilon falls under the rounding error of the variances and
    J can wobble by more.
    """
    classes = [f"cluster{c + 1}" for c in range(R.shape[1])]
    model, objectives = None, []
    for _ in range(max_iter):
        model = prepared.fit(classes, R)
        R, objective = e_step(model, prepared.X)
        objectives.append(objective)
        if len(objectives) > 1 and objectives[-1] - objectives[-2] <= tol * abs(objectives[-2]):
            break
    return model, R, objectives


def _best_clustering(prepared, k: int, restarts: int, seed: int, max_iter: int, tol: float):
    """The highest objective of `restarts` EM runs: (model, objective, its
    iterations), clusters of expected size 0 dropped (one more M step
    without them) and the rest named 1..k'."""
    n = prepared.X.shape[0]
    best = None
    for r in range(restarts):
        rng = np.random.default_rng([seed, r])
        model, R, objectives = em_rows(prepared, start_memberships(rng, n, k), max_iter, tol)
        if best is None or objectives[-1] > best[2]:
            best = (model, R, objectives[-1], len(objectives))
    model, R, objective, iterations = best
    keep = model.class_count > 0
    if not keep.all():
        R = R[:, keep]
        model = prepared.fit([f"cluster{c + 1}" for c in range(int(keep.sum()))], R)
        objective = e_step(model, prepared.X)[1]
    return model, objective, iterations

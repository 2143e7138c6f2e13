"""Reading a table model's rows (issue 25): training keeps columns (numpy
arrays, category codes), not a Python object per cell, and fits the same
model as the whole table would; predict reads a table on stdin, names a
missing column, and says once how many numeric cells were not numbers."""

from __future__ import annotations

import json
import tracemalloc

import numpy as np
import pytest

from nbcli.fit.table_training import calibrate_rows, fit_rows
from nbcli.nb import table_classifier
from nbcli.nb.table_cells import infer_kind
from nbcli.nb.table_classifier import TableColumns
from nbcli.nb.tables import TableModel, TableSettings
from nbcli.store.payload import calibration_state
from nbcli.text.sources import Document, Row

from conftest import run, run_process

IRIS_HEADER = "sepallength,sepalwidth,petallength,petalwidth"


def row_docs(names: list[str], table: list[list[str]], labels: list[str], file: str = "t.csv"):
    """Documents as sources.py reads a CSV: one Row per line, sharing the names."""
    names = tuple(names)
    index = {n: i for i, n in enumerate(names)}
    for number, (cells, label) in enumerate(zip(table, labels), 2):
        yield Document(f"{file}:{number}", label, Row(names, tuple(cells), index), "row")


def whole_table_model(names, columns, labels):
    """The model of the whole table at once: each column's kind inferred
    from all its cells, then `TableModel.fit` on the raw texts."""
    classes = sorted(set(labels))
    y = np.array([classes.index(label) for label in labels])
    kinds = [infer_kind(np.array(column, dtype=object)) for column in columns]
    data = [np.array(column, dtype=object) for column in columns]
    return TableModel.fit(classes, y, names, kinds, data, TableSettings())


def same_model(a: TableModel, b: TableModel) -> None:
    spec_a, arrays_a = a.state()
    spec_b, arrays_b = b.state()
    assert spec_a == spec_b
    assert arrays_a.keys() == arrays_b.keys()
    for key in arrays_a:
        np.testing.assert_array_equal(arrays_a[key], arrays_b[key], err_msg=key)


# -- training in columns ---------------------------------------------------------------


def test_training_holds_about_a_hundred_bytes_a_row_not_a_python_string_per_cell(monkeypatch):
    # f20aa66 kept every row (a Document, a Row, a tuple and a str per cell: some 700 bytes a row
    # for 6 columns) and then the columns as object and str arrays: peak well over 1 KB a row.
    monkeypatch.setattr(table_classifier, "BATCH_CELLS", 1 << 14, raising=False)  # batches small beside the table
    n = 40_000
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, n)
    colours = np.array(["red", "green", "blue", "amber"])

    def docs():
        names = ("colour", "shape", "width", "height", "weight", "flag")
        index = {name: i for i, name in enumerate(names)}
        for i in range(n):  # fresh strings per row, as a reader makes them
            cells = (
                str(colours[(y[i] + i % 2) % 4]),
                f"s{(y[i] * 7 + i) % 5}",
                f"{10 + y[i] + rng.normal():.3f}",
                f"{20 - y[i] + rng.normal():.3f}",
                f"{rng.normal() * 50:.2f}",
                str(i % 2),
            )
            yield Document(f"t.csv:{i + 2}", f"class{y[i]}", Row(names, cells, index), "row")

    tracemalloc.start()
    try:
        classifier = fit_rows(docs(), TableColumns(), TableSettings(), None, False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert classifier.meta["n_documents"] == n
    assert classifier.model.kinds == ["categorical", "categorical", "gaussian", "gaussian", "gaussian", "categorical"]
    # 3 numeric columns x 8 bytes, 3 categorical x 1, the class index 8, their texts while inferred, one batch
    assert peak / n < 200, f"{peak / n:.0f} bytes a row"


@pytest.mark.parametrize("batch_cells", [1, 7, 64, 1 << 17])
def test_columns_read_in_batches_give_the_whole_tables_model(monkeypatch, batch_cells):
    monkeypatch.setattr(table_classifier, "BATCH_CELLS", batch_cells, raising=False)
    names = ["late_text", "codes", "spaced", "reals", "empty", "flag"]
    table, labels = [], []
    for i in range(60):
        late = ["1", "1.0", " 2", "3"][i % 4] if i < 50 else "x"  # numbers, then a text: categorical texts
        codes = str(i % 7)  # whole numbers, 7 distinct: categorical
        spaced = [" a", "a ", "b", "?", "NA", ""][i % 6]
        reals = "" if i % 9 == 0 else f"{(i * 37) % 11 / 3:.4f}"
        flag = ["yes", "no"][(i // 3) % 2]
        table.append([late, codes, spaced, reals, "", flag])
        labels.append(["p", "q", "r"][(i * 5) % 3])
    columns = [list(c) for c in zip(*table)]
    expected = whole_table_model(names, columns, labels)
    assert expected.kinds == ["categorical", "categorical", "categorical", "gaussian", "categorical", "categorical"]
    assert expected.categories[0] == ["1", "1.0", "2", "3", "x"]
    got = fit_rows(row_docs(names, table, labels), TableColumns(), TableSettings(), None, False)
    same_model(got.model, expected)
    # calibrated (5-fold, the folds cut out of the columns): the same as the rows would give
    calibrated = fit_rows(row_docs(names, table, labels), TableColumns(), TableSettings(), "temperature", True)
    same_model(calibrated.model, expected)
    whole = table_classifier.TableClassifier(expected, {})
    classes = sorted(set(labels))
    y = np.array([classes.index(label) for label in labels])
    raw = [np.array(c, dtype=object) for c in columns]
    calibrate_rows(whole, classes, y, names, expected.kinds, raw, TableSettings(), "temperature", True)
    assert calibration_state(calibrated.calibration) == calibration_state(whole.calibration)


def test_json_records_with_fields_first_seen_late_and_two_tables_are_one_table(monkeypatch):
    monkeypatch.setattr(table_classifier, "BATCH_CELLS", 4, raising=False)
    records = [{"a": "1.5", "b": "x"}, {"a": "2.5", "b": "y"}, {"a": "0.5"}, {"b": "x", "c": "u"}]
    records += [{"a": str(i / 4), "c": "v" if i % 2 else "u", "b": "y"} for i in range(12)]
    labels = [["s", "t"][i % 2] for i in range(len(records))]
    docs = [Document(f"r{i}", label, rec, "row") for i, (rec, label) in enumerate(zip(records, labels))]
    got = fit_rows(iter(docs), TableColumns(), TableSettings(), None, False)
    names = ["a", "b", "c"]
    expected = whole_table_model(names, [[r.get(n, "") for r in records] for n in names], labels)
    same_model(got.model, expected)
    # two CSV tables with different headers: one table, a column missing from one file is missing there
    first = list(row_docs(["a", "b"], [["1.5", "x"], ["2.5", "y"]], ["s", "t"], "one.csv"))
    second = list(row_docs(["b", "a", "d"], [["y", "0.5", "k"], ["x", "3.5", "m"]] * 3, ["s", "t"] * 3, "two.csv"))
    got = fit_rows(iter(first + second), TableColumns(), TableSettings(), None, False)
    rows = [dict(d.data) for d in first + second]
    names = ["a", "b", "d"]
    expected = whole_table_model(
        names, [[r.get(n, "") for r in rows] for n in names], [d.label for d in first + second]
    )
    same_model(got.model, expected)


def test_given_types_and_features_are_kept_when_read_in_batches(monkeypatch):
    monkeypatch.setattr(table_classifier, "BATCH_CELLS", 3, raising=False)
    names = ["n", "c", "skip"]
    table = [[str(i % 3), f"{i}.5" if i != 4 else "oops", "z"] for i in range(12)]
    labels = ["u", "v", "w"] * 4
    columns = TableColumns(features=["c", "n", "skip"], ignore=["skip"], categorical=["c"], numeric=["n"])
    got = fit_rows(row_docs(names, table, labels), columns, TableSettings(), None, False)
    assert got.model.names == ["c", "n"] and got.model.kinds == ["categorical", "gaussian"]
    assert got.meta["notes"] == []  # every cell of n is a number
    classes = ["u", "v", "w"]
    y = np.array([classes.index(label) for label in labels])
    raw = [np.array([r[1] for r in table], dtype=object), np.array([float(r[0]) for r in table])]
    same_model(got.model, TableModel.fit(classes, y, ["c", "n"], ["categorical", "numeric"], raw, TableSettings()))
    # a cell of a --numeric column that is not a number: missing, and said once
    table[5][0] = "seven"
    got = fit_rows(row_docs(names, table, labels), TableColumns(numeric=["n"]), TableSettings(), None, False)
    assert got.meta["notes"] == ["1 cell(s) of n are not numbers; read as missing"]
    assert got.model.present[:, 0].sum() == 11


# -- predict ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def iris(tmp_path_factory):
    from sklearn.datasets import load_iris

    folder = tmp_path_factory.mktemp("iris")
    data = load_iris()
    lines = [IRIS_HEADER + ",class"]
    lines += [",".join([*map(str, x), data.target_names[t]]) for x, t in zip(data.data, data.target)]
    (folder / "iris.csv").write_text("\n".join(lines) + "\n")
    model = folder / "iris.nb"
    assert (
        run(["train", folder / "iris.csv", "--features", "all", "--label-field", "class", "-o", model, "-q"]).exit_code
        == 0
    )
    return model


def test_a_table_without_one_of_the_models_columns_is_one_line_naming_it(iris, tmp_path):
    rows = tmp_path / "rows.csv"
    rows.write_text("sepallength,sepalwidth,petallength\n5.1,3.5,1.4\n")
    result = run(["predict", iris, rows])
    assert result.exit_code != 0 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "internal error" not in result.stderr
    assert f"{rows} has no column 'petalwidth', which the model classifies by" in result.stderr
    assert "sepallength, sepalwidth, petallength, petalwidth" in result.stderr  # the hint names the model's columns
    # a JSON record may lack a field: that cell is missing
    result = run(["predict", iris, "-", "--input-format", "jsonl"], input='{"sepallength": 5.1}\n')
    assert result.exit_code == 0, result.stderr


@pytest.mark.parametrize(
    "table",
    [
        f"{IRIS_HEADER}\n5.1,3.5,1.4,0.2\n6.3,3.3,6.0,2.5\n",
        f"{IRIS_HEADER.replace(',', chr(9))}\n5.1\t3.5\t1.4\t0.2\n6.3\t3.3\t6.0\t2.5\n",
        '{"sepallength": 5.1, "sepalwidth": 3.5, "petallength": 1.4, "petalwidth": 0.2}\n'
        '{"sepallength": 6.3, "sepalwidth": 3.3, "petallength": 6.0, "petalwidth": 2.5}\n',
    ],
    ids=["csv", "tsv", "jsonl"],
)
def test_a_table_model_reads_stdin_as_a_table(iris, table):
    for args in (["predict", iris, "-", "--json"], ["predict", iris, "--json"]):
        result = run(args, input=table)
        assert result.exit_code == 0, result.stderr
        assert [json.loads(line)["label"] for line in result.stdout.splitlines()] == ["setosa", "virginica"]


def test_documents_for_a_table_model_name_the_input_format_and_all_columns(tmp_path):
    names = [f"f{i:02d}" for i in range(20)]
    table = tmp_path / "wide.csv"
    lines = [",".join([*names, "label"])]
    lines += [",".join([*(str((i * j) % 5) for j in range(20)), "ab"[i % 2]]) for i in range(40)]
    table.write_text("\n".join(lines) + "\n")
    model = tmp_path / "wide.nb"
    assert run(["train", table, "--features", "all", "-o", model, "-q"]).exit_code == 0
    (tmp_path / "doc.txt").write_text("just some words\n")
    result = run(["predict", model, tmp_path / "doc.txt"])
    assert result.exit_code != 0
    assert "--input-format csv" in result.stderr
    assert ", ".join(names[:10]) + ", … (and 10 more)" in result.stderr
    (tmp_path / "narrow.csv").write_text("f00\n1\n")
    result = run(["predict", model, tmp_path / "narrow.csv"])
    assert "has no column 'f01' (nor f02, f03" in result.stderr and "… (and 6 more))" in result.stderr
    assert ", ".join(names[:12]) + ", … (and 8 more)" in result.stderr


def test_numeric_cells_that_are_not_numbers_are_counted_in_one_warning(iris, tmp_path):
    rows = tmp_path / "rows.csv"
    lines = [IRIS_HEADER]
    for i in range(600):  # enough rows for predict to go to its workers with -j 2
        width = "abc" if i in (3, 10, 20, 30, 599) else "1e999" if i == 7 else "?" if i == 8 else "3.1"
        lines.append(f"5.1,{width},{'inf' if i == 50 else '1.4'},0.2")
    rows.write_text("\n".join(lines) + "\n")
    for jobs in ("1", "2"):
        result = run_process(["predict", iris, rows, "-j", jobs], timeout=300)
        assert result.returncode == 0, result.stderr
        assert len(result.stdout.splitlines()) == 600
        warnings = result.stderr.decode().splitlines()
        assert warnings == [
            "nbcli: warning: 7 cell(s) of numeric columns are not numbers; read as missing: "
            f"sepalwidth 6 ({rows}:5, {rows}:9, {rows}:12, …); petallength 1 ({rows}:52)"
        ]
    # read as missing: the row scores as the row without that cell
    one = run(["predict", iris, "-", "--json"], input=f"{IRIS_HEADER}\n5.1,abc,1.4,0.2\n5.1,,1.4,0.2\n")
    first, second = (json.loads(line) for line in one.stdout.splitlines())
    assert first["probabilities"] == second["probabilities"]
    assert "1 cell(s) of numeric columns are not numbers" in one.stderr

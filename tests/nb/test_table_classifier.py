"""The classifier of table rows (`nb.table_classifier.TableClassifier`):
rows to encoded cells, scores naming unreadable numeric cells, explanations
of columns, and the shared stream contract."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from nbcli.errors import NbcliError
from nbcli.nb.calibrators import Calibration
from nbcli.nb.table_classifier import RowScores, TableClassifier, UnreadableCells
from nbcli.nb.tables import TableModel, TableSettings
from nbcli.text.sources import Document


@pytest.fixture(scope="module")
def clf() -> TableClassifier:
    colour = np.array(["red", "red", "blue", "blue", "red", "blue"], dtype=object)
    size = np.array([1.0, 1.2, 3.0, 3.3, 0.9, 2.8])
    y = np.array([0, 0, 1, 1, 0, 1])
    model = TableModel.fit(
        ["a", "b"], y, ["colour", "size"], ["categorical", "numeric"], [colour, size], TableSettings()
    )
    return TableClassifier(model, {"table": {"label_field": "label", "id_field": None}})


def test_rows_are_scored_and_unreadable_numbers_are_named(clf):
    rows = [{"colour": "red", "size": "1.1"}, {"colour": "blue", "size": "lots"}, {"colour": "green", "size": "3"}]
    log_proba = clf.score(rows)
    assert isinstance(log_proba, RowScores) and log_proba.unreadable["size"].tolist() == [1]
    assert log_proba.argmax(axis=1).tolist() == [0, 1, 1]
    again = pickle.loads(pickle.dumps(log_proba))  # from a worker process
    assert again.unreadable["size"].tolist() == [1] and np.array_equal(again, log_proba)
    assert not isinstance(clf.score(rows[:1]), RowScores)
    cells = UnreadableCells()
    cells.add([Document(f"r{i}", None, row) for i, row in enumerate(rows)], log_proba)
    assert cells.message() == "1 cell(s) of numeric columns are not numbers; read as missing: size 1 (r1)"
    assert UnreadableCells().message() is None


def test_documents_and_rows_without_the_models_columns_are_refused(clf):
    with pytest.raises(NbcliError, match="classifies rows of a table"):
        clf.score(["a text"])
    assert clf.counts([{"colour": "red"}]).shape == (1, 2)  # a JSON record may lack a field: that cell is missing


def test_explanations_are_of_columns_and_add_up(clf):
    log_proba, explained = clf.score([{"colour": "red", "size": "3.0"}], explain=5)
    e = explained[0]
    assert e["versus"] in clf.classes and e["unit"] == "log-odds"
    assert sorted(t["term"] for t in e["terms"]) == ["colour=red", "size=3"]
    total = e["prior"] + sum(t["contribution"] for t in e["terms"])
    assert abs(total) == pytest.approx(abs(log_proba[0, 0] - log_proba[0, 1]))
    assert clf.score([{"colour": "pink", "size": ""}], explain=5)[1][0]["unknown"]["count"] == 1


def test_calibration_the_stream_and_evaluate(clf):
    calibrated = TableClassifier(
        clf.model, clf.meta, Calibration("temperature", 2, {"temperature": np.array([3.0])}, 6)
    )
    assert calibrated.uncalibrated().calibration is None and clf.uncalibrated() is clf
    assert calibrated.score([{"colour": "red", "size": "1"}], explain=1)[1][0]["unit"].startswith("raw log-odds")
    docs = [
        Document(f"r{i}", label, {"colour": c, "size": s})
        for i, (label, c, s) in enumerate([("a", "red", "1"), ("b", "blue", "3")])
    ]
    labels, log_proba = clf.score_labelled(iter(docs))
    assert labels == ["a", "b"] and log_proba.argmax(axis=1).tolist() == [0, 1]
    assert clf.evaluate(iter(docs))["accuracy"] == 1.0
    assert clf.names == ["colour", "size"] and clf.analyzer_options is None

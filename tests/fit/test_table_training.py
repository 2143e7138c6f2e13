"""Training, calibration, cross-validation and clustering of table models
(`fit.table_training`)."""

from __future__ import annotations

import numpy as np
import pytest

from nbcli.errors import NbcliError
from nbcli.fit.table_training import cluster_rows, cross_validate, fit_rows
from nbcli.nb.table_classifier import TableColumns, TableData, read_table
from nbcli.nb.tables import TableSettings
from nbcli.text.sources import Document


def _docs(n: int, seed: int = 0) -> list[Document]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        label = "ab"[i % 2]
        x = rng.normal(0.0 if label == "a" else 4.0, 1.0)
        colour = ("red" if label == "a" else "blue") if rng.random() < 0.8 else "green"
        out.append(Document(f"r{i}", label, {"x": f"{x:.3f}", "colour": colour}))
    return out


def test_fit_rows_keeps_the_fields_and_notes_a_calibration_it_skipped():
    clf = fit_rows(_docs(12), TableColumns(), TableSettings(), "default", False, "label", "id")
    assert clf.classes == ["a", "b"] and clf.names == ["x", "colour"]
    assert clf.meta["table"] == {"label_field": "label", "id_field": "id", "inferred": ["x", "colour"]}
    assert clf.calibration is None and "fewer than the" in clf.meta["calibration"]["skipped"]
    with pytest.raises(NbcliError, match="cannot calibrate by cross-validation: class b has only one row"):
        fit_rows(_docs(3), TableColumns(), TableSettings(), "temperature", True)
    with pytest.raises(NbcliError, match="the table has only one class"):
        fit_rows([d for d in _docs(6) if d.label == "a"], TableColumns(), TableSettings(), None, False)


def test_a_calibration_map_is_fitted_on_cross_validated_scores():
    clf = fit_rows(_docs(60), TableColumns(), TableSettings(), "temperature", True)
    assert clf.calibration is not None and clf.calibration.documents == 60
    assert clf.meta["calibration"] == {"source": "cross-validation", "model_documents": 60, "class_documents": [30, 30]}


def test_cross_validation_reports_every_fold_from_rows_or_a_table_read_once():
    docs = _docs(40)
    report = cross_validate(docs, TableColumns(), TableSettings(), 4, 0, None)
    assert report["folds"] == 4 and report["documents"] == 40 and len(report["fold_reports"]) == 4
    assert report["metrics"]["accuracy"]["mean"] > 0.8
    table = read_table(docs, TableColumns())
    assert isinstance(table, TableData)
    assert cross_validate(table, TableColumns(), TableSettings(), 4, 0, None)["metrics"] == report["metrics"]


def test_clusters_are_named_and_k_is_checked():
    rows = [Document(d.id, None, d.data) for d in _docs(30)]
    clf, bic = cluster_rows(rows, TableColumns(), TableSettings(), 2, restarts=2, seed=0)
    assert clf.classes == ["cluster1", "cluster2"] and bic is None
    assert clf.meta["clusters"]["k"] == 2 and clf.meta["table"] == {"label_field": None, "id_field": None}
    with pytest.raises(NbcliError, match="give 2 to 30 clusters"):
        cluster_rows(rows, TableColumns(), TableSettings(), 31, restarts=1, seed=0)

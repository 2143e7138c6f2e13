"""Metrics from true labels and predictions (nbcli/evaluate/metrics.py):
scikit-learn's definitions, undefined ratios reported as None, and a log
loss that one confident mistake cannot make infinite."""

import math

import numpy as np
import pytest
from sklearn import metrics as skm

from nbcli.evaluate.metrics import EPS, classification_report, confusion_matrix, log_loss


def test_per_class_and_averaged_figures_agree_with_scikit_learn():
    rng = np.random.default_rng(5)
    classes = ["ham", "news", "spam"]
    true = [classes[i] for i in rng.integers(0, 3, 200)]
    pred = [t if rng.random() < 0.7 else classes[rng.integers(0, 3)] for t in true]
    rep = classification_report(true, pred, classes)
    p, r, f, s = skm.precision_recall_fscore_support(true, pred, labels=classes, zero_division=0)
    for i, row in enumerate(rep["classes"]):
        assert row["class"] == classes[i] and row["support"] == s[i]
        assert (row["precision"], row["recall"], row["f1"]) == pytest.approx((p[i], r[i], f[i]))
    for avg in ("macro", "weighted"):
        sk = skm.precision_recall_fscore_support(true, pred, average=avg, zero_division=0)
        got = rep[f"{avg}_avg"]
        assert (got["precision"], got["recall"], got["f1"]) == pytest.approx(sk[:3])
    assert rep["accuracy"] == pytest.approx(skm.accuracy_score(true, pred))
    assert rep["confusion_matrix"]["matrix"] == skm.confusion_matrix(true, pred, labels=classes).tolist()


def test_a_ratio_over_nothing_is_none_not_zero():
    # "b" is never predicted (precision undefined); "c" is never true (recall undefined)
    rep = classification_report(["a", "b", "a"], ["a", "c", "c"], ["a", "b", "c"])
    by_class = {row["class"]: row for row in rep["classes"]}
    assert by_class["b"]["precision"] is None and by_class["b"]["recall"] == 0.0 and by_class["b"]["f1"] is None
    assert by_class["c"]["recall"] is None and by_class["c"]["precision"] == 0.0 and by_class["c"]["support"] == 0
    assert rep["macro_avg"]["precision"] == pytest.approx(1 / 3)  # undefined counts as 0 in the averages


def test_classes_reported_are_the_model_s_that_occur_then_unknown_ones():
    rep = classification_report(["b", "zz"], ["b", "b"], ["a", "b", "c"])
    assert rep["confusion_matrix"]["labels"] == ["b", "zz"] and rep["unknown_classes"] == ["zz"]
    assert confusion_matrix(np.array([0, 1, 1]), np.array([1, 1, 0]), 2).tolist() == [[0, 1], [1, 1]]


def test_one_confidently_wrong_document_costs_at_most_about_36_nats():
    assert log_loss(np.array([-np.inf])) == pytest.approx(-math.log(EPS))
    assert -math.log(EPS) < 37
    assert log_loss(np.log([0.5, 0.25])) == pytest.approx(-(math.log(0.5) + math.log(0.25)) / 2)
    assert math.isnan(log_loss(np.zeros(0)))
    rep = classification_report(["a", "zz"], ["a", "a"], ["a", "b"], np.log([0.8, 0.3]))
    assert rep["log_loss"] == pytest.approx(-math.log(0.8))  # the unknown class is left out

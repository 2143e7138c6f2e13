"""The `nbcli eval` report (nbcli/evaluate/report.py): the report dict, the
named figures that --fail-under/--fail-over and cross-validation use, the
limits, and what --plot draws."""

import numpy as np
import pytest
from sklearn import metrics as skm

from nbcli.errors import NbcliError
from nbcli.evaluate.report import EvalOptions, check_limits, figure, flat_metrics, parse_limit, report

P_SPAM = np.array([0.9, 0.2, 0.999, 0.001])
LOG_PROBA = np.log(np.c_[1 - P_SPAM, P_SPAM])
TRUE = ["spam", "ham", "spam", "ham"]


def test_report_flat_metrics_and_limits():
    p_spam = np.array([0.9, 0.2, 0.999, 0.001])
    log_proba = np.log(np.c_[1 - p_spam, p_spam])
    rep = report(["spam", "ham", "spam", "ham"], log_proba, ["ham", "spam"], EvalOptions(target_fpr=0.0))
    flat = flat_metrics(rep)
    assert flat["accuracy"] == 1.0 and flat["auc"] == 1.0 and flat["spam_recall"] == 0.5 and flat["unsure"] == 0.5
    assert flat["log_loss"] == pytest.approx(skm.log_loss([1, 0, 1, 0], p_spam))
    assert check_limits(flat, [("accuracy", 0.98)], [("ham_fpr", 0.0)]) is None
    # the library names the parameter; the command line's flag text is tests/cli/test_cli_eval.py's
    assert (
        str(check_limits(flat, [("spam_recall", 0.6)], []))
        == "spam_recall 0.5 is under 0.6 (fail_under spam_recall=0.6)"
    )
    assert str(check_limits(flat, [], [("unsure", 0.1)])) == "unsure 0.5 is over 0.1 (fail_over unsure=0.1)"
    multi = report(["a", "b", "c"], np.log(np.eye(3) * 0.98 + 0.01), ["a", "b", "c"])
    assert "spam_filter" not in multi
    with pytest.raises(Exception, match="does not report auc"):
        check_limits(flat_metrics(multi), [("auc", 0.9)], [])


def test_documents_of_no_class_of_the_model_are_refused_not_scored_zero():
    with pytest.raises(NbcliError, match="no document's label is a class of the model") as caught:
        report(["news", "sport"], np.log([[0.5, 0.5], [0.5, 0.5]]), ["ham", "spam"])
    assert "labelled news, sport" in caught.value.message and "the classes are ham, spam" in caught.value.message


def test_the_spam_filter_block_and_a_class_without_documents_is_undefined():
    sf = report(TRUE, LOG_PROBA, ["ham", "spam"])["spam_filter"]
    assert sf["spam_class"] == "spam" and sf["ham_class"] == "ham" and sf["auc"] == 1.0
    only_spam = report(["spam", "spam"], LOG_PROBA[[0, 2]], ["ham", "spam"])
    assert only_spam["spam_filter"]["ham_fpr"] is None and only_spam["spam_filter"]["auc"] is None  # not 0
    assert "ham_fpr" not in flat_metrics(only_spam) and "auc" not in flat_metrics(only_spam)


def test_calibration_adds_brier_and_ece_to_the_figures():
    rep = report(TRUE, LOG_PROBA, ["ham", "spam"], EvalOptions(calibration=True))
    flat = flat_metrics(rep)
    assert flat["brier"] == pytest.approx(2 * skm.brier_score_loss([1, 0, 1, 0], P_SPAM))  # multi-class: twice
    assert "ece" in flat
    assert figure(TRUE, LOG_PROBA, ["ham", "spam"], rep)["kind"] == "reliability"


def test_limits_are_parsed_with_the_metric_checked():
    assert parse_limit("accuracy=0.98") == ("accuracy", 0.98)
    assert parse_limit(" spam_recall =1") == ("spam_recall", 1.0)
    with pytest.raises(NbcliError, match="'accuracy' is not METRIC=VALUE"):
        parse_limit("accuracy")
    with pytest.raises(NbcliError, match="'accuracy=nan' is not METRIC=VALUE"):
        parse_limit("accuracy=nan")
    with pytest.raises(NbcliError, match="'acuracy' is not a metric") as caught:
        parse_limit("acuracy=0.9")
    assert "accuracy" in caught.value.hint


def test_the_plot_is_a_roc_curve_for_a_spam_model_and_a_confusion_matrix_otherwise():
    roc = figure(TRUE, LOG_PROBA, ["ham", "spam"], report(TRUE, LOG_PROBA, ["ham", "spam"]))
    assert roc["kind"] == "roc" and roc["auc"] == 1.0 and roc["title"] == "ROC: spam against ham"
    assert roc["fpr"][0] == 0.0 and roc["tpr"][-1] == 1.0
    labels = ["a", "b", "c"]
    log_proba = np.log(np.eye(3) * 0.98 + 0.01)
    cm = figure(labels, log_proba, labels, report(labels, log_proba, labels))
    assert cm == {
        "kind": "confusion",
        "labels": labels,
        "matrix": [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
        "title": "confusion matrix (3 documents)",
    }

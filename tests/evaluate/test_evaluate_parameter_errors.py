"""The evaluate package's errors name the library's parameters (errors.ParameterError),
and `nbcli eval` says the same errors with its flags (issue 26: the library never
speaks in flags). Each case: the library's text, then the CLI's line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from nbcli.errors import ParameterError
from nbcli.evaluate.predictions import read_predictions
from nbcli.evaluate.report import check_limits, flat_metrics, report

from conftest import one_line_error, run


@pytest.fixture
def trained(tmp_path, make_class_folders):
    corpus = make_class_folders(
        ["win money prize", "cash prize now", "lunch notes", "meeting tomorrow"], ["spam", "spam", "ham", "ham"]
    )
    model = tmp_path / "m.nb"
    assert run(["train", corpus, "-o", model, "-q"]).exit_code == 0
    return model, corpus


def test_labels_of_no_class_name_pairs(tmp_path, trained):
    model, _ = trained
    with pytest.raises(ParameterError) as caught:
        report(["politics"], np.log(np.array([[0.5, 0.5]])), ["ham", "spam"])
    assert str(caught.value) == (
        "no document's label is a class of the model: the documents are labelled politics, the classes are ham, spam; "
        "evaluate on documents of the model's classes (class folders named after them, or pairs='CLASS=PATH')"
    )
    other = tmp_path / "other" / "politics"
    other.mkdir(parents=True)
    (other / "1.txt").write_text("vote")
    assert one_line_error(run(["eval", model, other.parent])) == (
        "nbcli: error: no document's label is a class of the model: the documents are labelled politics, "
        "the classes are ham, spam; evaluate on documents of the model's classes (class folders named after them, "
        "or --label CLASS=PATH)"
    )


def test_limits_name_fail_under_fail_over_and_target_fpr(trained):
    model, corpus = trained
    flat = flat_metrics(report(["ham", "spam"], np.log(np.array([[0.9, 0.1], [0.2, 0.8]])), ["ham", "spam"]))
    with pytest.raises(ParameterError) as caught:
        check_limits(flat, [("target_spam_recall", 0.5)], [])
    assert str(caught.value) == (
        "fail_under target_spam_recall: this evaluation does not report target_spam_recall; spam-filter metrics "
        "need a two-class model with a spam class (and a rate, documents of its class); target_* need target_fpr"
    )
    assert str(check_limits(flat, [], [("ham_fpr", -1.0)])) == "ham_fpr 0 is over -1 (fail_over ham_fpr=-1)"
    assert one_line_error(run(["eval", model, corpus, "--fail-under", "target_spam_recall=0.5"])) == (
        "nbcli: error: --fail-under target_spam_recall: this evaluation does not report target_spam_recall; "
        "spam-filter metrics need a two-class model with a spam class (and a rate, documents of its class); "
        "target_* need --target-fpr"
    )
    assert one_line_error(run(["eval", model, corpus, "--fail-over", "ham_fpr=-1"])) == (
        "nbcli: error: ham_fpr 0 is over -1 (--fail-over ham_fpr=-1)"
    )


def test_an_unknown_true_class_names_truth(tmp_path):
    line = json.dumps({"id": "x/1", "label": "a", "probabilities": {"a": 0.5, "b": 0.5}})
    with pytest.raises(ParameterError) as caught:
        read_predictions([line], "p", truth={})
    assert str(caught.value) == (
        "p:1: the true class of 'x/1' is unknown: the id is not in the truth file; "
        "give truth FILE with id<TAB>label lines"
    )
    truth = tmp_path / "truth.tsv"
    truth.write_text("y/1\ta\n")
    assert one_line_error(run(["eval", "--predictions", "-", "--truth", truth], input=line + "\n")) == (
        "nbcli: error: stdin:1: the true class of 'x/1' is unknown: the id is not in the truth file; "
        "give --truth FILE with id<TAB>label lines"
    )

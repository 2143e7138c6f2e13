"""eval's reports (cli/reports.py): JSON or the table for people, written
first, then the exit status of --fail-under/--fail-over."""

import json
import re

import numpy as np
import pytest

from nbcli.cli.options import in_flag_terms
from nbcli.cli.reports import write_cv_report, write_eval_report
from nbcli.errors import NbcliError
from nbcli.evaluate.report import report

LIMITS = {"fail_under": [], "fail_over": []}


def _report():
    """A real report: four documents, one of them misclassified (accuracy 0.75)."""
    proba = np.array([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.6, 0.4]])
    return report(["ham", "spam", "spam", "ham"], np.log(proba), ["ham", "spam"])


def test_the_json_record_names_the_model(capsys):
    write_eval_report(_report(), "mail.nb", True, LIMITS)
    record = json.loads(capsys.readouterr().out)
    assert record["model"] == "mail.nb" and record["accuracy"] == 0.75


def test_the_table_for_people_names_the_source(capsys):
    write_eval_report(_report(), None, False, LIMITS)
    out = capsys.readouterr().out
    assert "predictions" in out and "accuracy" in out and not out.lstrip().startswith("{")


def test_a_broken_limit_fails_after_the_report_is_written(capsys):
    with pytest.raises(NbcliError) as caught:
        write_eval_report(_report(), "mail.nb", True, {"fail_under": [("accuracy", 0.8)], "fail_over": []})
    # a ParameterError: the command line's error boundary says it with the flag
    assert re.search(r"accuracy 0\.75 is under 0\.8 \(--fail-under accuracy=0\.8\)", str(in_flag_terms(caught.value)))
    assert json.loads(capsys.readouterr().out)["accuracy"] == 0.75  # written all the same
    write_eval_report(_report(), "mail.nb", True, {"fail_under": [("accuracy", 0.7)], "fail_over": []})


def test_cross_validation_limits_are_on_the_means(capsys):
    cv = {"folds": 2, "metrics": {"accuracy": {"mean": 0.9, "std": 0.05}, "log_loss": {"mean": 0.3, "std": 0.1}}}
    with pytest.raises(NbcliError, match=r"^mean log_loss 0\.3 is over 0\.25"):
        write_cv_report(cv, True, {"fail_under": [("accuracy", 0.85)], "fail_over": [("log_loss", 0.25)]})
    assert json.loads(capsys.readouterr().out) == cv

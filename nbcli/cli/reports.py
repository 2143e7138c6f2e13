"""The reports of `eval` (a model or predictions, --cv and --clusters): JSON,
or the tables for people (output.render_eval, output.render_cv,
output.render_clusters), then the exit
status of --fail-under/--fail-over. A support module: `eval`'s modes call
it, and it imports no command.
"""

from __future__ import annotations

import sys

from nbcli.cli.stdio import write_json


def write_cv_report(report, as_json, kw):
    """A cross-validation's report; the limits apply to the means over the folds."""
    from nbcli.cli.output import render_cv

    metrics = {n: m["mean"] for n, m in report["metrics"].items()}
    _write_report(report if as_json else None, lambda: render_cv(report, sys.stdout), metrics, kw, "mean ")


def write_eval_report(report, source, as_json, kw):
    """Write an eval report, then fail on a broken --fail-under/--fail-over."""
    from nbcli.cli.output import render_eval
    from nbcli.evaluate.report import flat_metrics

    record = {"model": source, **report} if as_json else None
    _write_report(record, lambda: render_eval(report, sys.stdout, source or "predictions"), flat_metrics(report), kw)


def write_clusters_report(report, source, as_json):
    """`eval --clusters`' report (evaluate.clustering): JSON with "model"
    first, as eval's, or the figures and the contingency table for people."""
    from nbcli.cli.output import render_clusters

    if as_json:
        write_json({"model": source, **report})
    else:
        render_clusters(report, sys.stdout, source or "predictions")


def _write_report(record, render, metrics, kw, prefix=""):
    """JSON (if `record`) or the table for people, then the exit status of
    --fail-under/--fail-over on `metrics`."""
    from nbcli.evaluate.report import check_limits

    if record is not None:
        write_json(record)
    else:
        render()
    sys.stdout.flush()
    broken = check_limits(metrics, kw["fail_under"], kw["fail_over"])
    if broken:  # the library's ParameterError: the error boundary says it with the flags
        broken.message = prefix + broken.message
        raise broken

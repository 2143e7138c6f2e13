"""Training, calibration, cross-validation and clustering of table models
(`train`, `eval --cv`, `tune` and `cluster` with --features).

The rows are read into columns by `nb.table_classifier.read_table` (or
`read_rows`, for clustering); a model is `nb.tables.TableModel.fit` of
them. Calibration maps are fitted on 5-fold stratified cross-validated
scores and `eval --cv` runs K-fold stratified cross-validation, both with
the folds of `fit.crossval` (`stratified_folds`, and its report
`summarise`); the folds' columns are cut one column at a time
(`nb.table_classifier.CutColumns`). Clustering runs EM for a mixture of
table models (`nb.table_em`).

Design (issue 26): this code left `nb.table_classifier`, because it uses
`fit.crossval` and `nb` may not import `fit`.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from nbcli.errors import NbcliError, ParameterError
from nbcli.fit.analysed import check_labels
from nbcli.nb.calibrators import documents_per_class
from nbcli.nb.table_classifier import (
    CutColumns,
    TableClassifier,
    TableColumns,
    TableData,
    read_rows,
    read_table,
    row_columns,
    typed_columns,
)
from nbcli.text.sources import Document


def fit_rows(
    docs: Iterable[Document],
    columns: TableColumns,
    settings,
    calibrate: str | None,
    strict: bool,
    label_field: str = "label",
    id_field: str | None = None,
    decide: str = "accuracy",
    positive: str | None = None,
):
    """A TableClassifier of labelled rows (documents whose data are
    {field: cell}); calibrate: the calibration method ('default': by the
    number of classes; None: none), fitted on 5-fold cross-validated
    scores of the rows (strict: refuse a table too small for that); decide,
    positive: `train --decide`'s threshold, chosen on the same scores
    (`deciding`). The label and id fields are kept in the meta: predict and
    eval read rows with them unless told otherwise."""
    import datetime

    from nbcli import __version__

    table = read_table(docs, columns)
    classes, y, names, kinds, data = table.classes, table.y, table.names, table.kinds, table.data
    check_labels(classes)
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
    if decide != "accuracy":
        from nbcli.fit.deciding import check_decide

        check_decide(decide, classes, positive)
    if calibrate is not None or decide != "accuracy":
        calibrate_rows(classifier, classes, y, names, kinds, data, settings, calibrate, strict, decide, positive)
    return classifier


def _fit(classes, y, names, kinds, data, settings):
    from nbcli.nb.tables import TableModel

    return TableModel.fit(classes, y, names, kinds, data, settings)


def _few_rows(classes, sizes, least: int) -> str | None:
    """Why a class has too few rows to cross-validate (None: none has)."""
    if sizes.min() >= least:
        return None
    smallest = classes[int(sizes.argmin())]
    if sizes.min() < 2:
        return f"class {smallest} has only one row"
    return f"class {smallest} has {int(sizes.min())} rows, fewer than the {least} a calibration map needs"


def calibrate_rows(
    classifier, classes, y, names, kinds, data, settings, calibrate, strict, decide="accuracy", positive=None
) -> None:
    """Fit the calibration map (calibrate None: none) on 5-fold stratified
    cross-validation scores: each fold's rows scored by the model of the
    other folds' rows; with decide, the decision threshold on the same
    scores, after the map (`deciding`)."""
    from nbcli.defaults import MIN_CALIBRATION_PER_CLASS, default_calibration
    from nbcli.fit.crossval import stratified_folds
    from nbcli.fit.deciding import refuse_too_few
    from nbcli.nb.calibrators import fit_cross_validated

    sizes = np.bincount(y, minlength=len(classes))
    deciding = decide != "accuracy"
    problem = None if calibrate is None else _few_rows(classes, sizes, 2 if strict else MIN_CALIBRATION_PER_CLASS)
    refuse_too_few(problem, strict, _few_rows(classes, sizes, 2) if deciding else None, "rows")
    if problem is not None:
        classifier.meta["calibration"] = {"skipped": problem}
        if not deciding:
            return
        calibrate = None  # the threshold is chosen on the raw posteriors
    k = int(min(5, sizes.min()))
    fold = stratified_folds(y, k, 0)
    scores = np.zeros((len(y), len(classes)))
    for f in range(k):
        train, test = fold != f, fold == f
        part = _fit(classes, y[train], names, kinds, CutColumns(data, train), settings)
        scores[test] = part.predict_log_proba(part.encode(CutColumns(data, test)))
    if calibrate is not None:
        method = default_calibration(len(classes)) if calibrate == "default" else calibrate
        classifier.calibration, skipped = fit_cross_validated(method, scores, y, classes, strict)
        if skipped is not None:
            classifier.meta["calibration"] = {"skipped": skipped}
        else:
            classifier.meta["calibration"] = {
                "source": "cross-validation",
                "model_documents": int(len(y)),
                "class_documents": documents_per_class(np.bincount(y, minlength=len(classes))),
            }
    if deciding:
        from nbcli.fit.deciding import decision_meta, positive_class

        calibrated = scores if classifier.calibration is None else classifier.calibration.apply(scores)
        where = positive_class(classes, sizes, positive)
        classifier.meta["decision"] = decision_meta(
            decide, classes, where, calibrated, y, "cross-validation", int(len(y)), class_documents=sizes
        )


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
            [classes[c] for c in present], _reindex(y[train], present), names, kinds, CutColumns(data, train), settings
        )
        log_proba = part.predict_log_proba(part.encode(CutColumns(data, test)))
        reports.append(report([classes[c] for c in y[test].tolist()], log_proba, part.classes, eval_options))
    return summarise(corpus, k, seed, reports)


def _reindex(y: np.ndarray, present: list[int]) -> np.ndarray:
    """Class indices among the classes present."""
    where = np.full(max(present) + 1, -1, dtype=np.int64)
    where[present] = np.arange(len(present))
    return where[y]


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
    k is at most the distinct rows; a cluster that no row prefers is
    dropped (`table_em`'s module docstring), so the model may have fewer
    clusters than k, never one of no row. A gaussian
    column's variances are floored at r^2/12, r the resolution its values
    are recorded to (`table_cells.recording_resolution`; the module docstring
    of `tables`): without it a cluster collapsed onto a repeated value has
    an unbounded likelihood, and BIC picks too many clusters."""
    from nbcli.nb.table_em import WeightedColumns, best_clustering, distinct_rows, free_parameters
    from nbcli.nb.tables import check_settings

    settings = check_settings(settings)
    if settings.m_estimate is not None and settings.m_estimate[1] is not None:
        raise ParameterError(
            "m_estimate",
            "cluster: an m-estimate with P is not a distribution, so EM has nothing to maximise",
            hint="give {m_estimate} M alone",
        )
    rows, _ = read_rows(docs)
    columns.check()
    names = columns.names(rows)
    kinds, data, _ = typed_columns(names, row_columns(rows, names), columns)
    prepared = WeightedColumns(names, kinds, data, settings, resolution_floor=True)
    n = len(rows)
    if np.isnan(prepared.X).all():
        raise NbcliError(
            f"none of the {n} rows has a cell that is not missing: nothing to cluster",
            hint="check the table and its columns (empty, ?, NA, N/A and nan cells are missing)",
        )
    distinct = distinct_rows(prepared.X)
    if distinct < 2:
        raise NbcliError(f"the {n} rows are all the same: nothing to cluster", hint="give different rows")
    table, fits = None, {}
    if k == "auto":
        table = []
        for kk in range(1, min(10, distinct) + 1):
            fits[kk] = best_clustering(prepared, kk, restarts if kk > 1 else 1, seed, max_iter, tol)
            fitted, objective, _ = fits[kk]
            loglik = objective - fitted.log_parameter_prior()
            bic = -2 * loglik + free_parameters(fitted) * np.log(n)
            table.append({"k": kk, "bic": float(bic), "log_likelihood": float(loglik)})
        k = min(table, key=lambda row: row["bic"])["k"]
        if k == 1:
            raise ParameterError(
                "k",
                "the rows look like one cluster (the lowest BIC is at k = 1)",
                hint="give {k} 2 or more to split them",
            )
    if not 2 <= k <= distinct:
        same = "" if distinct == n else f" ({n} rows, {distinct} distinct: identical ones go to one cluster)"
        raise ParameterError(
            "k", "{k} {value}: give 2 to {distinct} clusters{same}", value=k, distinct=distinct, same=same
        )
    import datetime

    from nbcli import __version__

    model, objective, iterations = fits.get(k) or best_clustering(prepared, k, restarts, seed, max_iter, tol)
    if len(model.classes) < 2:
        raise ParameterError(
            "k",
            "{k} {value}: EM left every row most probable in one cluster (the rows look like one cluster)",
            hint="give more rows, or a smaller {alpha} (smoothing draws a small cluster to the others)",
            value=k,
        )
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

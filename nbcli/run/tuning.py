"""`nbcli tune`: cross-validation over a small grid of training options.

No I/O. GRID maps a `TrainOptions` field to its candidate values; every
combination is cross-validated on the same folds (the corpus is read and
analysed once, the folds counted once), and the best by one metric wins.
Adding a dimension is one line here (its command-line flag comes from
options.TRAINING_FLAGS, the one table of field and flag names, through
`options.train_command`, which writes the winning `nbcli train` line: the
library speaks in fields, never in flags). A dimension the user fixes on the
command line (say --model bernoulli) is not searched: `nbcli tune` leaves it
out of the grid.

`cross_validate` (`eval --cv`, and each of tune's trials) is here too: it
maps the folds over the workers (`jobs`, see `parallel`), and tuning is
cross-validation repeated over the grid. The drivers that need `fit` sit
side by side at one height and never import each other (issue 26), so
tuning's cross-validation lives with it, not in `pipeline`.
"""

from __future__ import annotations

import dataclasses
import itertools

from nbcli.run.parallel import AUTO_DOCS, cpu_count, local_executor, placement, raised

GRID: dict[str, list] = {
    "kind": ["multinomial", "bernoulli", "complement"],
    "alpha": [1.0, 0.1, 0.01, 0.001, 0.0001],
}

# Table models (`tables.py`, train --features): TableSettings fields.
TABLE_GRID: dict[str, list] = {
    "numeric_model": ["gaussian", "kde", "discretize"],
    "alpha": [1.0, 0.1, 0.01],
}

# Metrics where smaller is better; for all others larger is better.
SMALLER_IS_BETTER = {"log_loss", "ham_fpr", "unsure", "target_ham_fpr"}
# Metrics of eval's --calibration and --target-unsure, which cross-validation does not compute: tune refuses them
NOT_CROSS_VALIDATED = {"brier", "ece", "target_unsure_accuracy"}


def combinations(grid: dict[str, list]) -> list[dict]:
    """Every combination of the grid's values, in grid order."""
    names = list(grid)
    return [dict(zip(names, values)) for values in itertools.product(*(grid[n] for n in names))]


def tune(
    corpus,
    k: int,
    seed: int,
    analyzer_options,
    options,
    eval_options,
    metric: str,
    jobs=1,
    grid: dict | None = None,
) -> dict:
    """{"metric", "folds", "seed", "documents", "results": [{"settings",
    "mean", "std"}], "best": settings}. Ties go to the earlier combination."""
    from nbcli.errors import ParameterError
    from nbcli.fit.crossval import fold_counts

    trials = [
        (settings, dataclasses.replace(options, **settings, described={**options.described, **settings}))
        for settings in combinations(GRID if grid is None else grid)
    ]
    counts = fold_counts(corpus, k, seed, any(trial.needs_doc_freq for _, trial in trials))
    results = []
    for settings, trial in trials:
        report = cross_validate(corpus, k, seed, analyzer_options, trial, eval_options, jobs, counts)
        if metric not in report["metrics"]:
            raise ParameterError(
                "metric",
                "{metric} {value}: cross-validation does not report {value} for this corpus",
                hint="give {target_fpr}"
                if metric.startswith("target_")
                else "spam-filter metrics need two classes, one of them the spam class",
                value=metric,
            )
        results.append({"settings": settings, **report["metrics"][metric]})
    return outcome(results, metric, k, seed, int(len(corpus.y)))


def cross_validate(corpus, k: int, seed: int, analyzer_options, options, eval_options, jobs=1, counts=None):
    """`tuning.cross_validate` with the folds scored on `jobs` workers."""
    from nbcli.fit import crossval

    if counts is None or (options.needs_doc_freq and counts.total_df is None):
        counts = crossval.fold_counts(corpus, k, seed, options.needs_doc_freq)
    job = (counts, analyzer_options, options, eval_options)
    jobs, executor = placement(jobs)
    if executor is None:
        workers = min(k, jobs if jobs > 0 else cpu_count())
        if jobs == 0 and len(corpus.y) < AUTO_DOCS:
            workers = 1
        executor = local_executor(workers if k > 1 else 1)
    reports = [report for _, report in raised(executor.map(_score_fold, job, ((f, f) for f in range(k))))]
    return crossval.summarise(corpus, k, seed, reports)


def _score_fold(job, f: int) -> dict:
    from nbcli.fit.training import score_fold

    return score_fold(job[0], f, *job[1:])


def outcome(results: list[dict], metric: str, k: int, seed: int, documents: int) -> dict:
    """The tune result of the trials' results: the best by `metric` (ties
    go to the earlier combination)."""
    sign = 1 if metric in SMALLER_IS_BETTER else -1
    best = min(range(len(results)), key=lambda i: (sign * results[i]["mean"], i))
    return {
        "metric": metric,
        "folds": k,
        "seed": seed,
        "documents": documents,
        "results": results,
        "best": results[best]["settings"],
    }


def tune_table(docs, columns, settings, k: int, seed: int, eval_options, metric: str, grid: dict) -> dict:
    """`tune` for a table model: every combination of TableSettings values
    in `grid`, cross-validated on the same folds of the rows `docs` (read
    once into columns; see `table_training.cross_validate`); the same
    result as `tune`'s."""
    from nbcli.errors import ParameterError
    from nbcli.fit.table_training import cross_validate
    from nbcli.nb.table_classifier import read_table

    docs = read_table(docs, columns)
    results, documents = [], 0
    for trial in combinations(grid):
        report = cross_validate(docs, columns, dataclasses.replace(settings, **trial), k, seed, eval_options)
        documents = report["documents"]
        if metric not in report["metrics"]:
            raise ParameterError(
                "metric", "{metric} {value}: cross-validation does not report {value} for this table", value=metric
            )
        results.append({"settings": trial, **report["metrics"][metric]})
    return outcome(results, metric, k, seed, documents)

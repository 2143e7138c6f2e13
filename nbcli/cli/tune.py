"""`nbcli tune`: training settings by cross-validation over a small grid
(run.tuning), for a text model or, with --features, a table model
(`_tune_table`); it ends with the 'nbcli train' command line of the best.
"""

from __future__ import annotations

import sys

import click

from nbcli.cli.option_bundles import cutoff_options, json_option, seed_option, target_fpr_option, trainer_options
from nbcli.cli.options import (
    READ_PARAM_NAMES,
    TABLE_PARAMS,
    TABLE_SMOOTHING,
    TRAINING_PARAM_NAMES,
    analysed_corpus,
    check_cutoffs,
    check_inputs,
    eval_options,
    given_options,
    is_given,
    make_diagnostics,
    pipeline_workers,
    refuse_cluster,
    refuse_training_options,
    table_rows,
    table_setup,
    train_command,
    unfixed,
)
from nbcli.cli.stdio import write_json


@click.command()
@click.argument("corpus", nargs=-1)
@click.option(
    "--label",
    "label_pairs",
    multiple=True,
    metavar="CLASS=PATH",
    help="Documents in PATH have class CLASS. Repeatable.",
)
@click.option(
    "--cv", type=click.IntRange(2), default=5, show_default=True, metavar="K", help="Folds of the cross-validation."
)
@seed_option
@click.option(
    "--metric",
    default="accuracy",
    show_default=True,
    help=(
        "The metric to optimise (its mean over the folds): any of 'nbcli eval --fail-under' but brier, ece and "
        "target_unsure_accuracy (eval's --calibration and --target-unsure); log_loss, ham_fpr, unsure and "
        "target_ham_fpr are minimised, the others maximised."
    ),
)
@cutoff_options
@target_fpr_option
@json_option
@trainer_options
@click.pass_context
def tune(ctx, corpus, label_pairs, cv, seed, metric, as_json, **kw):
    """Find training settings by cross-validation over a small grid.

    Cross-validates every combination of the grid (--model multinomial,
    bernoulli, complement; --alpha 1, 0.1, 0.01, 0.001, 0.0001) on the same
    stratified folds of CORPUS, with the other training options as given (a
    grid option you give is fixed, not searched), and prints each combination's mean ± std of
    --metric, the best settings, and, last, the 'nbcli train' command line
    that trains them. The corpus is read and analysed once.

    \b
    Example:
      nbcli tune sample_corpora/mail/train
      nbcli tune corpus/ --metric target_spam_recall --target-fpr 0.001
      $(nbcli tune corpus/ | tail -1 | sed 's/MODEL$/mail.nb/')
    """
    from nbcli.evaluate.report import METRICS
    from nbcli.run import tuning
    from nbcli.run.pipeline import analyse_corpus

    diagnostics = make_diagnostics(kw["quiet"])
    if any(is_given(ctx, name) for name in TABLE_PARAMS):
        refuse_cluster(kw, "a table model's tuning (it runs in this process)")
    workers = pipeline_workers(kw)
    check_cutoffs(kw["spam_cutoff"], kw["ham_cutoff"])
    tunable = [m for m in METRICS if m not in tuning.NOT_CROSS_VALIDATED]
    if metric not in tunable:
        said = (
            f"{metric!r} is eval's (--calibration, --target-unsure), not cross-validated"
            if metric in METRICS
            else (f"{metric!r} is not a metric")
        )
        raise click.BadParameter(f"{said}; use one of {', '.join(tunable)}", param_hint="'--metric'")
    if not corpus and not label_pairs:
        raise click.UsageError("give a CORPUS or at least one --label CLASS=PATH")
    if any(is_given(ctx, name) for name in TABLE_PARAMS):
        result = _tune_table(ctx, corpus, label_pairs, cv, seed, metric, kw, diagnostics)
    else:
        analyzer_options, options, analysed = analysed_corpus(
            corpus, label_pairs, kw, diagnostics, analyse_corpus, workers
        )
        result = tuning.tune(
            analysed,
            cv,
            seed,
            analyzer_options,
            options,
            eval_options(kw),
            metric,
            workers,
            unfixed(tuning.GRID, ctx),
        )
    given = given_options(ctx, {"label_pairs", *TRAINING_PARAM_NAMES, *READ_PARAM_NAMES, *TABLE_PARAMS})
    result["command"] = train_command(list(corpus), given, result["best"])
    if as_json:
        write_json(result)
    else:
        from nbcli.cli.output import render_tune

        render_tune(result, sys.stdout)
    diagnostics.finish()
    check_inputs()


def _tune_table(ctx, corpus, label_pairs, k, seed, metric, kw, diagnostics) -> dict:
    """`tune --features ...`: the table grid (tuning.TABLE_GRID) but the
    settings the user fixed, on the same folds of the rows."""
    from nbcli.run import tuning

    refuse_training_options(ctx, "a text model (not --features)", keep=TABLE_SMOOTHING | {"seed"})
    columns, settings = table_setup(kw)
    docs = table_rows(corpus, label_pairs, kw, diagnostics)
    grid = {f: v for f, v in tuning.TABLE_GRID.items() if not is_given(ctx, f)}
    return tuning.tune_table(docs, columns, settings, k, seed, eval_options(kw), metric, grid)

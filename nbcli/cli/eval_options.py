"""`nbcli eval`'s own options: its modes (--predictions, --truth, --cv,
--online and its settings, --clusters) and its limits and picture
(--fail-under, --fail-over, --plot), in the order `eval --help` lists them.
Beside the command (eval.py's options would make it a long module of
decorators); the options eval shares with other commands are
option_bundles'.
"""

from __future__ import annotations

import click

from nbcli.cli.option_bundles import bundle
from nbcli.cli.param_types import Limit

mode_options = bundle(
    [
        click.option(
            "--predictions",
            metavar="FILE",
            help=(
                "Evaluate 'nbcli predict --json' lines from FILE (- for stdin) instead of a model: no MODEL or CORPUS."
            ),
        ),
        click.option(
            "--truth",
            metavar="FILE",
            help="With --predictions: true labels as id<TAB>label lines [default: the class folder in each id].",
        ),
        click.option(
            "--cv",
            type=click.IntRange(2),
            metavar="K",
            help=(
                "Cross-validate instead of evaluating a model: train and test K stratified folds of CORPUS "
                "(no MODEL), with the training options of 'nbcli train'."
            ),
        ),
        click.option(
            "--online",
            is_flag=True,
            help="The TREC spam-track online protocol on CORPUS (no MODEL): each message, in order, is "
            "classified by the model learned so far, then learned per --train; reports lam%, (1-ROCA)%, hm%, sm%.",
        ),
        click.option(
            "--order",
            type=click.Choice(["date", "given"]),
            default="date",
            show_default=True,
            help="With --online: take messages by their Date header (undated ones keep their place), or as given.",
        ),
        click.option(
            "--train",
            "train_rule",
            type=click.Choice(["all", "errors", "unsure"]),
            default="errors",
            show_default=True,
            help="With --online: learn every message, the misclassified ones, or those and the unsure ones.",
        ),
        click.option(
            "--warmup",
            type=click.IntRange(0),
            default=0,
            metavar="N",
            help="With --online: learn the first N messages before scoring any.",
        ),
        click.option(
            "--clusters",
            is_flag=True,
            help=(
                "Measure the model's classes as clusters of the labelled documents (a 'nbcli cluster' model, or any): "
                "adjusted Rand index, normalised mutual information, purity and the table of labels by clusters."
            ),
        ),
    ]
)

limit_options = bundle(
    [
        click.option(
            "--fail-under",
            multiple=True,
            type=Limit(),
            help="Exit 1 if METRIC is under V (e.g. accuracy=0.98). Repeatable.",
        ),
        click.option(
            "--fail-over",
            multiple=True,
            type=Limit(),
            help="Exit 1 if METRIC is over V (e.g. ham_fpr=0.001). Repeatable.",
        ),
        click.option(
            "--plot",
            metavar="FILE",
            help=(
                "Also draw the ROC curve (a spam model), the confusion matrix (others), the reliability diagram "
                "(with --calibration) or the learning curve (with --online) into FILE: .svg, or .png with the extra "
                "nbcli-bayes[plot] (matplotlib)."
            ),
        ),
    ]
)

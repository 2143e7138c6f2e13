"""`nbcli eval`: the command, which dispatches to one small function per
mode: a model on a labelled corpus (`_eval_model`), predictions
(`_eval_predictions`), K-fold cross-validation of training settings
(`_eval_cv`, and `_cross_validate_table` for a table model) and the TREC
online protocol (`_eval_online`), and a model's classes measured as a
clustering of labelled documents (`_eval_clusters`, from a model or from
predictions). The checks of which options go with which mode come first,
in `eval_`; the reports are reports.py's.

--clusters takes a document's cluster to be its predicted class, the
argmax of the model's posteriors (calibrated, if the model is: what
`predict` says), so it measures any model, a `cluster` model or a
classifier. It reports the figures of evaluate.clustering only: the
spam-filter, calibration and plot options and --fail-under/--fail-over
(whose METRIC names are the classification report's) are usage errors
with it. With --predictions, the true labels come as they do there (the
class folder in each id, or --truth, which a cluster model's predictions
need: their classes are clusters, not folders).
"""

from __future__ import annotations

import click

from nbcli.cli.eval_options import limit_options, mode_options
from nbcli.cli.option_bundles import (
    calibration_options,
    cutoff_options,
    json_option,
    seed_option,
    target_fpr_option,
    trainer_options,
    true_label_option,
)
from nbcli.cli.options import (
    TABLE_PARAMS,
    TABLE_SMOOTHING,
    analysed_corpus,
    check_cutoffs,
    check_inputs,
    cutoffs_given,
    eval_options,
    given_options,
    is_given,
    load_model,
    make_diagnostics,
    model_read_opts,
    pipeline_workers,
    read_opts,
    refuse_cluster,
    refuse_options,
    refuse_training_options,
    table_rows,
    table_setup,
    training_setup,
)
from nbcli.cli.stdio import write, write_json
from nbcli.errors import NbcliError


@click.command("eval")
@click.argument("args", nargs=-1, metavar="[MODEL] [CORPUS]...")
@true_label_option
@mode_options
@seed_option
@cutoff_options
@target_fpr_option
@calibration_options
@limit_options
@json_option
@trainer_options
@click.pass_context
def eval_(
    ctx,
    args,
    label_pairs,
    predictions,
    truth,
    cv,
    online,
    order,
    train_rule,
    warmup,
    clusters,
    seed,
    plot,
    as_json,
    **kw,
):
    """Evaluate a model, predictions, or training settings.

    \b
      nbcli eval MODEL CORPUS...        a model on labelled documents
      nbcli eval --predictions FILE     'nbcli predict --json' lines (- for stdin)
      nbcli eval --cv K CORPUS...       K-fold cross-validation of training settings
      nbcli eval --online CORPUS...     the TREC online protocol (classify, then learn, in date order)
      nbcli eval MODEL CORPUS... --clusters   the model's classes as clusters of labelled documents

    CORPUS is given as for 'nbcli train'. With --predictions, the true
    class of each document is taken from the class folder in its id (as in
    corpus/spam/0001.eml) or from --truth. With --cv, the training options
    (--alpha, --ngrams, ...) are those of 'nbcli train' (they need --cv),
    and each metric is reported as mean ± std over the folds. Prints accuracy, per-class
    precision, recall, F1 and support, macro and weighted averages, the
    confusion matrix and the log loss; for a two-class model with a spam
    class also the ROC AUC and, at the cut-offs, the ham false-positive
    rate, spam recall and unsure fraction, and how many documents of each
    true class get each verdict (spam, unsure, ham: what predict, filter
    and serve say of them). Tables for people, or --json. With --clusters,
    the adjusted Rand index, normalised mutual information and purity of
    the predicted classes against the labels, and their contingency table.

    --fail-under/--fail-over METRIC=V make the exit status 1 when a metric
    is out of bounds (after the report is written), for cron jobs. METRIC is
    one of: accuracy, log_loss, macro_precision, macro_recall, macro_f1,
    weighted_precision, weighted_recall, weighted_f1, auc, ham_fpr,
    spam_recall, unsure, decided_accuracy, target_spam_recall,
    target_ham_fpr, and with --calibration brier, ece and (with
    --target-unsure) target_unsure_accuracy.

    \b
    Example:
      nbcli eval mail.nb sample_corpora/mail/test
      nbcli eval mail.nb sample_corpora/mail/test --target-fpr 0.001
      nbcli eval mail.nb new-mail/ --fail-under accuracy=0.98 --fail-over ham_fpr=0.001
      nbcli eval topics.nb sample_corpora/topics/test.jsonl --json
      nbcli predict mail.nb test/ --json | nbcli eval --predictions -
      nbcli eval --cv 10 --seed 1 sample_corpora/mail/train --alpha 0.01
      nbcli eval mail.nb sample_corpora/mail/test --plot roc.svg
      nbcli eval clusters.nb sample_corpora/topics/test.jsonl --clusters
    """
    diagnostics = make_diagnostics(kw["quiet"])
    check_cutoffs(kw["spam_cutoff"], kw["ham_cutoff"])
    if plot:
        from nbcli.cli.paths import check_output
        from nbcli.cli.plot import check_path

        check_path(plot)
        check_output(plot, [*args, *(p.partition("=")[2] for p in label_pairs), predictions, truth], "--plot")
    for name in ("order", "train_rule", "warmup"):
        if not online and is_given(ctx, name):
            raise click.UsageError(f"--{name.replace('_rule', '')} goes with --online")
    clash = given_options(ctx, _NOT_WITH_CLUSTERS) if clusters else []
    if clash:
        raise click.UsageError(f"--clusters does not go with {clash[0][0]}")
    if online:
        if cv or predictions or truth:
            raise click.UsageError("--online does not go with --cv, --predictions or --truth")
        clash = given_options(ctx, _NOT_WITH_ONLINE)
        if clash:  # (they were ignored: a cron job's --fail-under passed whatever the run measured)
            raise click.UsageError(f"--online reports the TREC measures only; it does not go with {clash[0][0]}")
        _eval_online(ctx, args, label_pairs, order, train_rule, warmup, plot, as_json, kw, diagnostics)
    elif cv:
        if plot:
            raise click.UsageError("--plot does not go with --cv: evaluate a model, or predictions, to plot")
        if predictions:
            raise click.UsageError("--cv and --predictions do not go together")
        _eval_cv(ctx, args, label_pairs, cv, seed, as_json, kw, diagnostics)
    else:
        refuse_training_options(ctx, "--cv or --online", keep={"max_message_bytes"})
        refuse_options(ctx, TABLE_PARAMS, "--cv (a table model's settings come with it)")
        if truth and not predictions:
            raise click.UsageError("--truth goes with --predictions")
        if clusters:
            _eval_clusters(ctx, args, label_pairs, predictions, truth, as_json, kw, diagnostics)
        elif predictions:
            _eval_predictions(args, label_pairs, predictions, truth, plot, as_json, kw)
        else:
            _eval_model(ctx, args, label_pairs, plot, as_json, kw, diagnostics)


# the options of the other modes, and the classification report's, that --clusters refuses
# what the online protocol's report (fit.online.report: TREC's measures) has no place for
_NOT_WITH_ONLINE = ("fail_under", "fail_over", "calibration", "target_fpr", "target_unsure")
_NOT_WITH_CLUSTERS = (
    "cv",
    "online",
    "plot",
    "spam_class",
    "spam_cutoff",
    "ham_cutoff",
    "target_fpr",
    "calibration",
    "target_unsure",
    "fail_under",
    "fail_over",
)


def _eval_model(ctx, args, label_pairs, plot, as_json, kw, diagnostics):
    """`eval MODEL CORPUS...`: score the labelled documents, then report."""
    classifier, labels, log_proba, raw = _scored(ctx, args, label_pairs, kw, diagnostics, kw.get("calibration", False))
    _evaluated(labels, log_proba, classifier.classes, args[0], plot, as_json, kw, raw, classifier.meta.get("decision"))
    diagnostics.finish()
    check_inputs()


def _scored(ctx, args, label_pairs, kw, diagnostics, calibration=False):
    """MODEL's classifier and the true labels and log-posteriors of the
    labelled documents of CORPUS; with `calibration`, a calibrated model is
    judged before and after its map: it scores raw, maps here, and also
    gives the raw log-posteriors (else None)."""
    from nbcli.run.parallel import score_labelled
    from nbcli.text.sources import labeled_corpus, parse_label_pair

    if not args:
        raise click.UsageError("give MODEL and CORPUS, or --predictions FILE")
    model, corpus = args[0], args[1:]
    if not corpus and not label_pairs:
        raise click.UsageError("give a CORPUS or at least one --label CLASS=PATH")
    pairs = [parse_label_pair(p) for p in label_pairs]

    given_cap = is_given(ctx, "max_message_bytes")
    classifier = load_model(model, kw["max_message_bytes"] if given_cap else None)
    workers = pipeline_workers(kw)
    docs = labeled_corpus(corpus, pairs, model_read_opts(classifier, kw, diagnostics))
    both = calibration and classifier.calibration is not None
    with diagnostics.progress("evaluating", docs.total) as advance:
        labels, log_proba = score_labelled(
            classifier.uncalibrated() if both else classifier,
            docs,
            progress=lambda batch: advance(docs.progress(batch)),
            jobs=workers,
        )
    if not labels:
        raise NbcliError("the evaluation corpus has no documents", hint="check the paths")
    raw = log_proba if both else None
    if both:
        log_proba = classifier.calibration.apply(raw)
    return classifier, labels, log_proba, raw


def _eval_predictions(args, label_pairs, predictions, truth, plot, as_json, kw):
    """`eval --predictions FILE`: 'nbcli predict --json' lines, no model."""
    labels, log_proba, classes = _predicted(args, label_pairs, predictions, truth, kw)
    _evaluated(labels, log_proba, classes, None, plot, as_json, kw)


def _predicted(args, label_pairs, predictions, truth, kw):
    """The true labels, log-posteriors and classes of --predictions FILE."""
    from nbcli.evaluate.predictions import read_files

    refuse_cluster(kw, "--predictions (there is nothing to compute)")
    if args or label_pairs:
        raise click.UsageError(
            "--predictions takes no MODEL, CORPUS or --label: the predictions hold the model's output"
        )
    return read_files(predictions, truth)


def _eval_clusters(ctx, args, label_pairs, predictions, truth, as_json, kw, diagnostics):
    """`eval MODEL CORPUS... --clusters` (or `--predictions FILE
    --clusters`): each document's predicted class is its cluster, measured
    against its label (evaluate.clustering)."""
    from nbcli.cli.reports import write_clusters_report
    from nbcli.evaluate.clustering import clustering_report

    if predictions:
        labels, log_proba, classes = _predicted(args, label_pairs, predictions, truth, kw)
        source = None
    else:
        classifier, labels, log_proba, _ = _scored(ctx, args, label_pairs, kw, diagnostics)
        classes, source = classifier.classes, args[0]
    clusters = [classes[i] for i in log_proba.argmax(axis=1).tolist()]
    write_clusters_report(clustering_report(labels, clusters, classes), source, as_json)
    if not predictions:
        diagnostics.finish()
        check_inputs()


def _eval_cv(ctx, corpus, label_pairs, k, seed, as_json, kw, diagnostics):
    """`eval --cv K CORPUS...`: cross-validation of a text model's training
    settings, or of a table model's (`_cross_validate_table`)."""
    from nbcli.cli.reports import write_cv_report
    from nbcli.run.pipeline import analyse_corpus
    from nbcli.run.tuning import cross_validate

    if not corpus and not label_pairs:
        raise click.UsageError("give a CORPUS or at least one --label CLASS=PATH to cross-validate")
    if any(is_given(ctx, name) for name in TABLE_PARAMS):
        refuse_cluster(kw, "a table model's cross-validation (it runs in this process)")
        _cross_validate_table(corpus, label_pairs, k, seed, as_json, kw, diagnostics)
        return
    workers = pipeline_workers(kw)
    analyzer_options, options, analysed = analysed_corpus(corpus, label_pairs, kw, diagnostics, analyse_corpus, workers)
    report = cross_validate(analysed, k, seed, analyzer_options, options, eval_options(kw), workers)
    write_cv_report(report, as_json, kw)
    diagnostics.finish()
    check_inputs()


def _evaluated(labels, log_proba, classes, source, plot, as_json, kw, uncalibrated=None, decision=None):
    """Report on scored documents, draw the --plot, then check the limits;
    decision: the model's decision threshold (`fit.deciding`), which also
    moves a spam model's cut-offs unless one is given (`Verdicts` does the
    same for filter, serve and predict)."""
    from nbcli.cli.reports import write_eval_report
    from nbcli.evaluate.report import figure, report

    options = eval_options(kw)
    if is_given(click.get_current_context(), "spam_class") and options.spam_class not in classes:
        raise NbcliError(
            (
                f"--spam-class {options.spam_class}: {'the model has' if source else 'the predictions have'} no such "
                f"class (classes: {', '.join(classes)})"
            ),
            hint="name one of those classes",
        )
    if decision and not cutoffs_given():
        import dataclasses

        from nbcli.evaluate.binary import spam_index
        from nbcli.evaluate.decision import decided_cutoffs

        rule = (classes.index(decision["positive"]), float(decision["threshold"]))
        spam, ham = decided_cutoffs(
            rule, spam_index(classes, options.spam_class), options.spam_cutoff, options.ham_cutoff
        )
        options = dataclasses.replace(options, spam_cutoff=spam, ham_cutoff=ham)
    result = report(labels, log_proba, classes, options, uncalibrated, decision)
    if plot:
        from nbcli.cli import plot as plotting

        plotting.write(figure(labels, log_proba, classes, result, options), plot)
    write_eval_report(result, source, as_json, kw)


def _cross_validate_table(corpus, label_pairs, k, seed, as_json, kw, diagnostics) -> None:
    """`eval --cv K TABLE --features ...`: cross-validation of a table model."""
    from nbcli.cli.reports import write_cv_report
    from nbcli.fit.table_training import cross_validate

    keep = TABLE_SMOOTHING | {"seed"}
    refuse_training_options(click.get_current_context(), "a text model (not --features)", keep=keep)
    columns, settings = table_setup(kw)
    docs = table_rows(corpus, label_pairs, kw, diagnostics)
    write_cv_report(cross_validate(docs, columns, settings, k, seed, eval_options(kw)), as_json, kw)
    diagnostics.finish()
    check_inputs()


def _online_cutoffs(kw) -> tuple[float, float]:
    """The online protocol's unsure band: as given, else the raw band (its
    models are uncalibrated; see defaults.ONLINE_SPAM_CUTOFF)."""
    from nbcli.defaults import ONLINE_HAM_CUTOFF, ONLINE_SPAM_CUTOFF

    ctx = click.get_current_context()
    return (
        kw["spam_cutoff"] if is_given(ctx, "spam_cutoff") else ONLINE_SPAM_CUTOFF,
        kw["ham_cutoff"] if is_given(ctx, "ham_cutoff") else ONLINE_HAM_CUTOFF,
    )


def _eval_online(ctx, corpus, label_pairs, order, train_rule, warmup, plot, as_json, kw, diagnostics):
    """`eval --online CORPUS...`: the TREC spam-track protocol (fit.online)."""
    from nbcli.cli.output import online_text
    from nbcli.fit import online
    from nbcli.fit.settings import described_options, resolved
    from nbcli.text.analyzer import Analyzer
    from nbcli.text.sources import labeled_corpus, parse_label_pair

    refuse_options(ctx, TABLE_PARAMS, "--cv (the online protocol learns mail, not table rows)")
    refuse_cluster(kw, "--online (the protocol is one message after another)")
    if not corpus and not label_pairs:
        raise click.UsageError("give a CORPUS or at least one --label CLASS=PATH to run the online protocol on")
    analyzer_options, options = training_setup(kw)
    if options.min_df != 1 or options.max_df != 1.0 or options.max_features is not None or options.select:
        raise NbcliError(
            "eval --online learns message by message, which cannot prune (--min-df, --max-df, "
            "--max-features, --select)",
            hint="drop them",
        )
    pairs = [parse_label_pair(p) for p in label_pairs]
    docs = labeled_corpus(corpus, pairs, read_opts(kw, diagnostics))
    with diagnostics.progress("reading", docs.total) as advance:
        stream = online.analyse_stream(
            docs, Analyzer(analyzer_options), progress=lambda batch: advance(docs.progress(batch))
        )
    if not len(stream.y):
        raise NbcliError("the corpus has no documents", hint="check the paths")
    options, alpha, unknown = resolved(options, 2 * stream.mail_docs > len(stream.y))
    settings = online.settings_for(options, alpha, unknown, stream.classes)
    result = online.run(
        stream,
        options.kind,
        settings,
        online.order_of(stream, order),
        train_rule,
        warmup,
        kw["spam_class"],
        *_online_cutoffs(kw),
    )
    report = online.report(result, train_rule, order)
    report["options"] = described_options(options, alpha, unknown)
    if plot:
        from nbcli.cli.plot import write as write_plot

        title = f"online learning curve ({report['messages']} messages, train on {train_rule})"
        write_plot(online.curve_figure(result, title), plot)
    if as_json:
        write_json(report)
    else:
        write(online_text(report))
    diagnostics.finish()
    check_inputs()

"""`nbcli train`: the command, which dispatches to one small function per
mode: a corpus (`_train_corpus`), --unlabeled (semi-supervised EM,
`_train_em`), --features (a table model, `_train_table`) and --from-model
(re-derived from the stored counts, `_retrain`). Each mode returns the
classifier and the line that says what was written; `train` writes it.
"""

from __future__ import annotations

import click

from nbcli.cli.option_bundles import trainer_options
from nbcli.cli.options import (
    TABLE_PARAMS,
    TABLE_SMOOTHING,
    check_inputs,
    is_given,
    make_diagnostics,
    pipeline_workers,
    read_opts,
    refuse_cluster,
    refuse_corpus_options,
    refuse_options,
    refuse_training_options,
    table_rows,
    table_setup,
    training_setup,
)
from nbcli.cli.param_types import FloatRange
from nbcli.errors import NbcliError

# train --em-weight's default: measured by make bench-em (docs/guide/unlabelled.md)
EM_WEIGHT = 1.0
# train --em-tokens's default: the E step's evidence cap, measured by make bench-em (em.posterior, em.labelled_start)
EM_TOKENS = 4.0


@click.command()
@click.argument("corpus", nargs=-1)
@click.option("-o", "--output", required=True, metavar="MODEL", help="Model file to write (replaced atomically).")
@click.option(
    "--label",
    "label_pairs",
    multiple=True,
    metavar="CLASS=PATH",
    help="Documents in PATH (a file or folder) have class CLASS. Repeatable.",
)
@click.option(
    "--from-model",
    metavar="MODEL",
    help="Re-derive the tables of MODEL from its stored counts with other smoothing, prior, event model "
    "(where the counts allow) or pruning options, without the corpus. Options not given keep MODEL's values.",
)
@click.option(
    "--calibrate",
    type=click.Choice(["platt", "temperature", "isotonic", "none"]),
    default=None,
    show_default="platt for two classes, temperature for more",
    help="Fit a map from the model's scores to probabilities that mean what they say, on held-out scores from "
    "5-fold cross-validation of the corpus (up to 2,500 documents per class are held out). platt and "
    "temperature keep the ranking of two classes; none gives the event model's raw posteriors.",
)
@click.option(
    "--decide",
    type=click.Choice(["accuracy", "f1", "balanced"]),
    default="accuracy",
    show_default=True,
    help="How a two-class model decides. accuracy: the most probable class. f1 (the positive class's F1) and "
    "balanced (balanced accuracy): the threshold on P(positive) that maximises it on the held-out scores "
    "--calibrate fits on (the raw posteriors with --calibrate none); predict, eval, filter, serve and the Python "
    "API decide by it (for a spam model it is the spam cut-off, unless --spam-cutoff/--ham-cutoff are given). "
    "Positive: the class spam, else the class with fewer documents. Refused for more than two classes.",
)
@click.option(
    "--positive",
    metavar="CLASS",
    default=None,
    help="The positive class of --decide f1 or balanced (default: spam, else the class with fewer documents).",
)
@click.option(
    "--unlabeled",
    multiple=True,
    metavar="PATH",
    help="Also learn from these unlabelled documents by EM (Nigam et al. 2000): their expected counts, weighted by "
    "--em-weight, join the labelled counts. Repeatable; --model multinomial or bernoulli. A document also in "
    "the labelled corpus is skipped (a warning counts them).",
)
@click.option(
    "--em-weight",
    type=FloatRange(0, 1),
    default=EM_WEIGHT,
    show_default=True,
    metavar="LAMBDA",
    help="Weight of an unlabelled document against a labelled one (0: the labelled counts alone, over all the "
    "documents' terms).",
)
@click.option("--em-iter", type=click.IntRange(1, 1000), default=20, show_default=True, help="EM iterations at most.")
@click.option(
    "--em-tokens",
    type=FloatRange(min=0),
    default=EM_TOKENS,
    show_default=True,
    metavar="N",
    help="E step: weigh a longer document's evidence as N tokens' (its log-likelihoods times N / length), so "
    "long messages do not pull EM into one class; 0: the plain E step.",
)
@click.option(
    "--em-components",
    type=click.IntRange(1, 99),
    default=1,
    show_default=True,
    metavar="K",
    help="Mixture components per class (Nigam et al. section 5): a class that is several topics gets several.",
)
@click.option(
    "--em-tol",
    type=FloatRange(min=0),
    default=1e-6,
    show_default=True,
    help="Stop when the objective's relative change is under this.",
)
@trainer_options
def train(
    corpus,
    output,
    label_pairs,
    from_model,
    calibrate,
    decide,
    positive,
    unlabeled,
    em_weight,
    em_iter,
    em_tokens,
    em_tol,
    em_components,
    **kw,
):
    """Train a model on labelled documents.

    CORPUS is a folder with one sub-folder per class (the sub-folder's name
    is the label; files are found recursively, hidden files are skipped), a
    TSV/CSV/JSON-lines file with text and label fields, or - for such a
    table on stdin. --label CLASS=PATH adds the documents in PATH with class
    CLASS. Bytes are decoded as UTF-8, or as Windows-1252 where they are not
    valid UTF-8.

    \b
    Example:
      nbcli train sample_corpora/mail/train -o mail.nb
      nbcli train --label spam=spam/ --label ham=ham/ -o mail.nb
      nbcli train sample_corpora/topics/train.jsonl --ngrams 2 -o topics.nb
      nbcli train sample_corpora/topics/train.jsonl --model complement --tf-log --idf --length-norm -o c.nb
      nbcli train --from-model mail.nb --alpha 0.1 -o mail-0.1.nb
    """
    from nbcli.cli.paths import check_output
    from nbcli.store import modelfile
    from nbcli.text.sources import parse_label_pair

    ctx = click.get_current_context()
    table = any(is_given(ctx, name) for name in TABLE_PARAMS)
    diagnostics = make_diagnostics(kw["quiet"])
    if table:
        refuse_cluster(kw, "a table model (it trains in this process)")
    workers = pipeline_workers(kw)
    check_output(output, [*corpus, *(parse_label_pair(p)[1] for p in label_pairs)])
    modelfile.check_writable(output)
    if positive is not None and decide == "accuracy":  # (it was ignored: the model decided by the argmax)
        raise click.UsageError("--positive names the positive class of --decide f1 or --decide balanced: give one")
    if (decide != "accuracy" or positive is not None) and (unlabeled or from_model):
        raise click.UsageError(
            "--decide f1|balanced chooses its threshold by cross-validating the corpus (no --unlabeled or --from-model)"
        )
    if unlabeled:
        if from_model or table:
            raise click.UsageError("--unlabeled trains a text model from a corpus (no --from-model, no --features)")
        classifier, said = _train_em(
            corpus,
            label_pairs,
            unlabeled,
            calibrate,
            em_weight,
            em_iter,
            em_tol,
            em_components,
            em_tokens,
            workers,
            kw,
            diagnostics,
        )
    else:
        refuse_options(ctx, ["em_weight", "em_iter", "em_tokens", "em_tol", "em_components"], "--unlabeled")
        if table:
            if from_model:
                raise click.UsageError("--from-model re-derives text models; train a table model from its table")
            classifier, said = _train_table(corpus, label_pairs, (calibrate, decide, positive), kw, diagnostics)
        elif from_model:
            if calibrate is not None:
                raise click.UsageError(
                    "--calibrate needs the corpus; calibrate the new model on held-out mail: "
                    "nbcli calibrate MODEL HELDOUT"
                )
            classifier, said = _retrain(from_model, corpus, label_pairs, kw, diagnostics)
        else:
            classifier, said = _train_corpus(
                corpus, label_pairs, (calibrate, decide, positive), workers, kw, diagnostics
            )
    modelfile.save(classifier, output)
    contents, *notes = said
    diagnostics.info(f"wrote {output}: {contents}")
    for note in notes:
        diagnostics.info(note)
    diagnostics.finish()
    check_inputs()


def _train_corpus(corpus, label_pairs, held_out, workers, kw, diagnostics):
    """`train CORPUS`: a text model, calibrated by cross-validation; held_out:
    (--calibrate, --decide, --positive)."""
    from nbcli.fit.training import calibration_choice
    from nbcli.run.pipeline import train as train_model
    from nbcli.text.sources import labeled_corpus, parse_label_pair

    if not corpus and not label_pairs:
        raise click.UsageError("give a CORPUS or at least one --label CLASS=PATH")
    pairs = [parse_label_pair(p) for p in label_pairs]
    calibrate, decide, positive = held_out
    analyzer_options, options = training_setup(kw)
    if options.needs_second_pass and ("-" in corpus or any(path == "-" for _, path in pairs)):
        raise NbcliError(
            "--tf-log and --length-norm read the corpus twice, so it cannot come from stdin",
            hint="save it to a file first",
        )
    method, strict, note = calibration_choice(calibrate, options)
    if note:
        diagnostics.info(note)
    docs = labeled_corpus(corpus, pairs, read_opts(kw, diagnostics))
    with diagnostics.progress("training", docs.total) as advance:
        classifier = train_model(
            docs,
            analyzer_options,
            options,
            progress=lambda batch: advance(docs.progress(batch)),
            jobs=workers,
            calibrate=method,
            strict=strict,
            bar=advance,
            decide=decide,
            positive=positive,
        )
    return classifier, _text_model_said(classifier)


def _text_model_said(classifier) -> list[str]:
    """What `train` says after writing a text model: what it holds (after
    "wrote MODEL: "), then why it has no calibration map, if it has none."""
    counts = _class_counts(classifier)
    said = [f"{classifier.meta['n_documents']} documents ({counts}), {len(classifier.vocabulary)} terms"]
    skipped = (classifier.meta.get("calibration") or {}).get("skipped")
    if skipped:
        said.append(f"not calibrated: {skipped}")
    return said + _decision_said(classifier)


def _decision_said(classifier) -> list[str]:
    """The line `train --decide` adds: the threshold it chose."""
    if not classifier.meta.get("decision"):
        return []
    from nbcli.cli.output import decision_text
    from nbcli.store.describe import describe_decision

    return [f"decision: {decision_text(describe_decision(classifier))}"]


def _train_em(
    corpus, label_pairs, unlabeled, calibrate, weight, max_iter, tol, components, tokens, workers, kw, diagnostics
):
    """`train --unlabeled`: semi-supervised EM (semi.py)."""
    from nbcli.cli.diagnostics import em_log
    from nbcli.run.semi import train_em
    from nbcli.text.sources import Corpus, documents_in, labeled_corpus, parse_label_pair

    if calibrate not in (None, "none"):
        raise click.UsageError(
            "--calibrate does not go with --unlabeled (cross-validation would rerun EM per fold); "
            "calibrate the model on held-out documents: nbcli calibrate MODEL HELDOUT"
        )
    if not corpus and not label_pairs:
        raise click.UsageError("give the labelled CORPUS too")
    # EM fits a multinomial or bernoulli mixture's counts smoothed by --alpha, on the analyser's terms: the other
    # training options have no place in it (they were ignored: the same model whatever --min-df or --prior said)
    used = {"token_pattern", "ngrams", "stop_words", "mail", "max_message_bytes", "kind", "alpha", "seed"}
    refuse_training_options(click.get_current_context(), "a model trained without --unlabeled", keep=used)
    analyzer_options, options = training_setup(kw)
    kind = "multinomial" if options.kind == "auto" else options.kind
    alpha = options.alpha  # None: as `nbcli train` resolves it for the corpus (semi.train_em)
    opts = read_opts(kw, diagnostics)
    labelled = labeled_corpus(corpus, [parse_label_pair(p) for p in label_pairs], opts)
    unlabelled = Corpus([documents_in(path, opts) for path in unlabeled])
    classifier, _ = train_em(
        labelled,
        unlabelled,
        analyzer_options,
        kind,
        alpha,
        weight,
        max_iter,
        tol,
        log=em_log(diagnostics, "EM"),
        jobs=workers,
        components=components,
        e_tokens=tokens,
    )
    skipped = classifier.meta["em"]["unlabelled_skipped_as_labelled"]
    if skipped:
        diagnostics.warn(f"--unlabeled: skipped {skipped} documents also in the labelled corpus (each counts once)")
    diagnostics.info("not calibrated: EM models give their raw posteriors (nbcli calibrate MODEL HELDOUT fits a map)")
    em = classifier.meta["em"]
    return classifier, [
        f"{classifier.meta['n_documents']} labelled documents and {em['unlabelled_documents']} unlabelled (weight "
        f"{weight:g}, {em['iterations']} EM iterations), {len(classifier.vocabulary)} terms"
    ]


# A kernel density estimate is exact: scoring a cell costs its class's
# training values; past this many rows, train says so.
KDE_WARN_ROWS = 20_000


def _train_table(corpus, label_pairs, held_out, kw, diagnostics):
    """`train --features ...`: a table model (see table_classifier.py);
    held_out: (--calibrate, --decide, --positive)."""
    from nbcli.fit.table_training import fit_rows
    from nbcli.fit.training import calibration_choice

    ctx = click.get_current_context()
    refuse_training_options(ctx, "a text model (not --features)", keep=TABLE_SMOOTHING)
    refuse_options(ctx, ["text_field"], "a text model (not --features: a table model reads its columns)")
    if not corpus and not label_pairs:
        raise click.UsageError("give a table (CORPUS) to train on")
    columns, settings = table_setup(kw)
    calibrate, decide, positive = held_out
    method, strict, _ = calibration_choice(calibrate, None)
    docs = table_rows(corpus, label_pairs, kw, diagnostics)
    with diagnostics.progress("reading", docs.total) as advance:
        classifier = fit_rows(
            _progressing(docs, advance),
            columns,
            settings,
            method,
            strict,
            label_field=kw["label_field"] or "label",
            id_field=kw["id_field"],
            decide=decide,
            positive=positive,
        )
    for note in classifier.meta.get("notes", []):
        diagnostics.warn(note)
    rows = classifier.meta["n_documents"]
    if "kde" in classifier.model.kinds and rows > KDE_WARN_ROWS:
        diagnostics.warn(
            f"--numeric-model kde scores every cell against each class's training values ({rows} rows here), "
            "so classifying is slow at this size; --numeric-model discretize or gaussian is not"
        )
    skipped = (classifier.meta.get("calibration") or {}).get("skipped")
    if skipped:
        from nbcli.nb.calibrators import RANKS_AGAINST

        anyway = "" if RANKS_AGAINST in skipped else " (--calibrate METHOD fits one anyway)"
        diagnostics.info(f"not calibrated: {skipped}{anyway}")
    classifier.meta.pop("notes", None)
    counts = _class_counts(classifier)
    kinds = _kinds_text(classifier)
    return classifier, [
        f"{classifier.meta['n_documents']} rows ({counts}), {len(classifier.names)} columns ({kinds})",
        *_decision_said(classifier),
    ]


def _class_counts(classifier) -> str:
    """ "ham 12, spam 8": the documents (rows) of each class."""
    return ", ".join(f"{c} {int(n)}" for c, n in zip(classifier.classes, classifier.model.class_count))


def _progressing(docs, advance):
    for doc in docs:
        yield doc
        if doc.first:
            advance(1)


def _kinds_text(classifier) -> str:
    kinds = classifier.model.kinds
    return ", ".join(f"{kinds.count(k)} {k}" for k in dict.fromkeys(kinds))


def _retrain(path, corpus, label_pairs, kw, diagnostics):
    """`train --from-model`: the stored counts, new options. A calibration
    belongs to the old tables: it is not carried over."""
    from nbcli.fit.training import refit
    from nbcli.store import modelfile

    if corpus or label_pairs:
        raise click.UsageError("--from-model re-derives a model from its stored counts; give no CORPUS or --label")
    refuse_corpus_options(click.get_current_context())
    old = modelfile.load(path)
    if old.meta.get("components"):
        raise NbcliError(f"{path} has several mixture components per class", hint="train it again with the options")
    _, options = training_setup(kw, base_kind=old.model.kind)
    expected = getattr(old, "expected", None)
    if expected is not None and options.pruning:
        raise NbcliError(f"{path} was trained by EM: pruning it needs the corpus", hint="train it again")
    new = refit(old, options, path)
    new.expected = expected  # the same terms: the expected counts stay apart, re-smoothed with the others
    if old.calibration is not None:
        diagnostics.info(
            f"the new model is not calibrated ({path}'s calibration was fitted to its own tables); "
            "fit one on held-out documents: nbcli calibrate MODEL HELDOUT"
        )
    return new, _text_model_said(new)

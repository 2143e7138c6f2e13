"""Training: counts to a Classifier, in one pass over the corpus.

Every Classifier built from counted documents is built here, by one
builder (`_build`: prune, select, then the event model): of a whole corpus
(`train`, `from_table`; `pipeline.train` is the same with the counting on
workers), of part of one (`fit_part`: calibration's held-out groups and
cross-validation's folds, `fold_classifier` and `score_fold`), and of a
model's stored counts with other options (`refit`, `train --from-model`).
Calibration by cross-validation of the training corpus is `_fit`'s.

The pieces below it: the options (`training_options`, checked, and
`settings`, resolved), the counting pass (`count_table`), the held-out
sample (`heldout`, `heldout_sample`), --select (`selection`) and the folds
(`crossval`). Kept in one module because each of these paths builds a
Classifier through the same builder, and a builder imports the models.
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Iterable

import numpy as np

from nbcli import __version__
from nbcli.errors import NbcliError, ParameterError
from nbcli.fit.analysed import check_labels
from nbcli.fit.count_table import CountTable, count_corpus
from nbcli.fit.crossval import FoldCounts
from nbcli.fit.exact_sums import FIT_SCALE
from nbcli.fit.heldout_sample import SAMPLE_PER_CLASS, groups_for
from nbcli.fit.selection import select_mask
from nbcli.fit.settings import TrainOptions, described_options, model_settings, plain_prior, resolved
from nbcli.nb.calibrators import documents_per_class
from nbcli.nb.classifier import Classifier
from nbcli.nb.event_models import DOC_FREQ_HINT, build_event_model
from nbcli.nb.record import Record
from nbcli.text.analyzer import Analyzer, AnalyzerOptions
from nbcli.text.sources import Document, batches
from nbcli.text.vectorize import prune_mask


def train(
    docs: Iterable[Document],
    analyzer_options: AnalyzerOptions,
    options: TrainOptions,
    progress=None,
    calibrate: str | None = None,
    strict: bool = True,
    decide: str = "accuracy",
    positive: str | None = None,
) -> Classifier:
    """Train a Classifier on labelled documents, in this process (see
    `pipeline.train` for the counting on several workers); calibrate: the
    calibration method (`calibrators.METHODS`), None for none; strict: see
    `_fit`; decide, positive: `train --decide`, `--positive` (`deciding`)."""
    check_trainable(docs, options, calibrate, decide)
    table = count_corpus(
        docs,
        Analyzer(analyzer_options),
        options.needs_doc_freq,
        progress,
        options.first_pass_transform,
        sample_size(calibrate, decide),
    )
    return from_table(table, docs, analyzer_options, options, calibrate, strict, decide=decide, positive=positive)


def check_trainable(
    docs: Iterable[Document], options: TrainOptions, calibrate: str | None = None, decide: str = "accuracy"
) -> None:
    """Refuse, before reading anything, what training could not finish
    (the options themselves were checked where they entered: `training_options`)."""
    if options.needs_second_pass and iter(docs) is docs:
        raise ParameterError(
            "tf_log", "{tf_log} and {length_norm} read the corpus twice, and this corpus can be read only once"
        )
    if calibrate is not None:
        check_calibratable(options, calibrate)
    if decide != "accuracy" and options.needs_second_pass:
        raise ParameterError(
            "decide",
            "{decide} cannot cross-validate complement's {tf_log}/{length_norm} with pruning or {idf}",
            hint="train with {decide:accuracy}",
        )


def check_calibratable(options: TrainOptions | None, calibrate: str) -> None:
    """Refuse a calibration method training cannot fit with these options
    (None: a table model's)."""
    from nbcli.nb.calibrators import METHODS

    if calibrate not in (*METHODS, "default"):
        raise ParameterError(
            "calibrate",
            "{calibrate} {value!r} is not one of {choices}, none",
            value=calibrate,
            choices=", ".join(METHODS),
        )
    if options is not None and options.needs_second_pass:
        raise ParameterError(
            "calibrate",
            "{calibrate} cannot cross-validate complement's {tf_log}/{length_norm} with pruning or {idf}",
            hint="train with {calibrate:none}, then fit one on held-out mail: nbcli calibrate MODEL HELDOUT",
        )


def calibration_choice(calibrate: str | None, options: TrainOptions | None) -> tuple[str | None, bool, str | None]:
    """(method or None, strict, note) for `train --calibrate` (None: not
    given, 'none': no calibration): the default ('default': the method
    `defaults.default_calibration` picks for the number of classes) where
    training can cross-validate, and no calibration, with a note saying
    why, where it cannot; a method the user named must be fitted (strict)
    or refused. options None: a table model's (rows, read once in memory)."""
    if calibrate == "none":
        return None, True, None
    if calibrate is None:
        if options is not None and options.needs_second_pass:
            return None, False, "not calibrated: these complement options read the corpus twice (see --calibrate)"
        return "default", False, None
    check_calibratable(options, calibrate)
    return calibrate, True, None


# `train --decide`'s held-out sample per class: bigger than calibration's alone
# (measured by make bench-decide, see `deciding`).
DECIDE_SAMPLE_PER_CLASS = 20_000


def sample_size(calibrate: str | None, decide: str = "accuracy") -> int:
    """The documents per class the counting pass keeps for calibration and
    the decision threshold."""
    if decide != "accuracy":
        return DECIDE_SAMPLE_PER_CLASS
    return SAMPLE_PER_CLASS if calibrate is not None else 0


def from_table(
    table: CountTable,
    docs: Iterable[Document],
    analyzer_options: AnalyzerOptions,
    options: TrainOptions,
    calibrate: str | None = None,
    strict: bool = True,
    bar=None,
    decide: str = "accuracy",
    positive: str | None = None,
) -> Classifier:
    """The Classifier of the counts of `docs`; complement's document
    transforms read `docs` a second time (`transformed_sums`); with a
    calibration method, calibrated on the held-out scores of the documents
    the table sampled (see `heldout`; strict: see `_fit`). bar: the
    progress bar (`diagnostics.Advance`), relabelled when the calibration
    starts and advanced by one per cross-validation model. decide,
    positive: see `train`."""
    classifier = _fit(table, analyzer_options, options, calibrate, strict, bar, decide, positive)
    if options.needs_second_pass:
        classifier.model = classifier.model.rebuilt(fit_count=transformed_sums(classifier, docs))
    return classifier


def _fit(
    table: CountTable,
    analyzer_options: AnalyzerOptions,
    options: TrainOptions,
    calibrate: str | None = None,
    strict: bool = True,
    bar=None,
    decide: str = "accuracy",
    positive: str | None = None,
) -> Classifier:
    """Prune the vocabulary, smooth the counts, and build the Classifier;
    calibrate it on held-out scores of the table's sample (strict: refuse
    a corpus too small for that; otherwise the meta says why it was not;
    bar: see `from_table`), and choose its decision threshold on the same
    scores (decide, positive: see `deciding`)."""
    finished = table.finish()
    classes, class_count, vocab, tf, df = finished
    classifier = fit_counts(
        classes,
        class_count,
        vocab,
        tf,
        df,
        table.mail_docs,
        analyzer_options,
        options,
        record=None if table.record_entries is None else Record.build(*table.record_entries),
        last_seen=table.last_seen,
        fit=table.fit,
    )
    if calibrate is None and decide == "accuracy":
        return classifier
    return _heldout_fit(
        classifier, table, finished, analyzer_options, options, calibrate, strict, bar, decide, positive
    )


def _heldout_fit(classifier, table, finished, analyzer_options, options, calibrate, strict, bar, decide, positive):
    """`_fit`'s calibration map and decision threshold (`deciding`), both on
    the held-out scores of the table's sample."""
    from nbcli.defaults import MIN_CALIBRATION_PER_CLASS
    from nbcli.fit.deciding import refuse_too_few
    from nbcli.fit.heldout import heldout_problem
    from nbcli.nb.calibrators import fit_cross_validated

    classes, class_count = classifier.classes, classifier.model.class_count
    deciding = decide != "accuracy"
    if deciding:
        from nbcli.fit.deciding import check_decide

        check_decide(decide, classes, positive)
    heldout = table.heldout
    problem = (
        None if calibrate is None else heldout_problem(heldout, classes, 2 if strict else MIN_CALIBRATION_PER_CLASS)
    )
    refuse_too_few(problem, strict, heldout_problem(heldout, classes, 2) if deciding else None, "documents")
    if problem is not None:
        classifier.meta["calibration"] = {"skipped": problem}
        if not deciding:
            return classifier
        calibrate = None  # the threshold is chosen on the raw posteriors
    scores, truth = heldout_of(table, finished, analyzer_options, options, bar)
    if calibrate is not None:
        if calibrate == "default":
            from nbcli.defaults import default_calibration

            calibrate = default_calibration(len(classes))
        classifier.calibration, skipped = fit_cross_validated(calibrate, scores, truth, classes, strict)
        if skipped is not None:
            classifier.meta["calibration"] = {"skipped": skipped}
            if not deciding:
                return classifier
        else:
            classifier.meta["calibration"] = calibration_meta(classifier, "cross-validation")
    if deciding:
        from nbcli.fit.deciding import decision_meta, positive_class

        calibrated = scores if classifier.calibration is None else classifier.calibration.apply(scores)
        classifier.meta["decision"] = decision_meta(
            decide,
            classes,
            positive_class(classes, class_count, positive),
            calibrated,
            truth,
            "cross-validation",
            int(class_count.sum()),
            class_count,
            class_documents=classifier.model.class_count,
        )
    return classifier


def heldout_of(table: CountTable, finished: tuple, analyzer_options: AnalyzerOptions, options: TrainOptions, bar=None):
    """(raw held-out log-probabilities (n, C), their true class indices) of
    the table's sample, by cross-validation (see `heldout`); finished: what
    `table.finish()` gave."""
    from nbcli.fit.heldout import heldout_scores

    classes, class_count, vocab, tf, df = finished
    heldout = table.heldout
    fit_one = functools.partial(fit_part, analyzer_options=analyzer_options, options=options, texts=False)
    k = groups_for(len(heldout), int(class_count.sum()))
    if bar is not None:
        bar.phase(f"calibrating ({len(heldout)} held-out documents, {k} models)", k)
    return heldout_scores(
        heldout,
        classes,
        class_count,
        vocab,
        tf,
        df,
        table.fit,
        table.mail_docs,
        fit_one,
        table.transform,
        FIT_SCALE,
        k,
        bar,
    )


def calibration_meta(classifier: Classifier, source: str) -> dict:
    """What the model's meta says of its calibration: how it was fitted
    (source: 'cross-validation' of the training corpus, or the held-out
    documents' path) and the model's documents then (for the staleness
    rule, `learning`)."""
    counts = np.asarray(classifier.model.class_count)
    return {"source": source, "model_documents": int(counts.sum()), "class_documents": documents_per_class(counts)}


def fit_counts(
    classes,
    class_count,
    vocab,
    tf,
    df,
    mail_docs,
    analyzer_options: AnalyzerOptions,
    options: TrainOptions,
    record=None,
    last_seen=None,
    fit=None,
) -> Classifier:
    """The Classifier of finished counts: classes (C,) by name, class_count
    (C,), vocab, tf and df (C, V) (df may be None), and how many of the
    documents were mail (which decides the defaults); the record of the
    documents and the terms' last-seen days, if kept; fit: the per-class
    sums of the transformed documents (`TrainOptions.first_pass_transform`),
    if the counting pass added them up."""
    n_docs = int(class_count.sum())
    mostly_mail = 2 * mail_docs > n_docs
    options, alpha, unknown = resolved(options, mostly_mail)  # alpha: checked by the event model (EventModel)
    check_labels(classes)  # here, where every path to a model meets (workers and --cv folds too)
    if n_docs == 0:
        raise NbcliError(
            "the corpus has no documents",
            hint="check the paths, and that class folders contain files (hidden files are skipped)",
        )
    if len(classes) < 2:
        raise NbcliError(
            f"the corpus has only one class ({classes[0]})",
            hint="a classifier needs documents of at least two classes",
        )
    if len(vocab) == 0:
        raise ParameterError(
            "token_pattern",
            "the corpus has no terms: every document is empty after tokenizing",
            hint="check the documents, {token_pattern} and {stop_words}",
        )
    meta = {
        "n_documents": n_docs,
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "nbcli_version": __version__,
        "options": described_options(options, alpha, unknown),
        "mail_documents": int(mail_docs),
    }
    transformed = options.kind == "complement" and (options.tf_log or options.length_norm)
    return _build(
        classes,
        class_count,
        vocab,
        tf,
        df,
        analyzer_options,
        options,
        alpha,
        unknown,
        meta,
        fit_count=fit if transformed and not options.needs_second_pass else None,
        record=record,
        last_seen=last_seen,
    )


def fit_part(classes, class_count, vocab, tf, df, fit, mail_docs, analyzer_options, options, texts: bool = True):
    """The Classifier of part of a corpus, given its counts on the corpus's
    vocabulary (tf, df, and fit, complement's transformed sums, (C, V) or
    None): on the classes it has documents of and the terms they contain,
    pruned by the training options, as `nbcli train` on that part would
    build it (but for the mail defaults, which the caller's mail_docs
    decide). texts=False leaves the terms' texts out of its vocabulary (a
    model that only scores needs the hashes)."""
    from nbcli.text.vectorize import Vocabulary

    present = np.flatnonzero(class_count > 0)
    seen = np.flatnonzero(tf[present].sum(axis=0) > 0)
    tf = tf[present][:, seen]
    df = df[present][:, seen] if df is not None else None
    fit = fit[present][:, seen] if fit is not None else None
    names = [classes[c] for c in present.tolist()]
    if texts:
        part_vocab = vocab.subset(seen)
    else:
        part_vocab = Vocabulary(vocab.hashes[seen], np.zeros(0, dtype=np.uint8), np.zeros(len(seen) + 1, np.int64))
    return fit_counts(names, class_count[present], part_vocab, tf, df, mail_docs, analyzer_options, options, fit=fit)


def _build(
    classes,
    class_count,
    vocab,
    tf,
    df,
    analyzer_options,
    options: TrainOptions,
    alpha,
    unknown,
    meta,
    fit_count=None,
    record=None,
    last_seen=None,
) -> Classifier:
    """Prune (--min-df, --max-df, --max-features, then --select) and build
    the event model from counts: the end of training, and all of
    `train --from-model`."""
    n_docs = int(class_count.sum())
    if df is not None or options.max_features is not None or options.select is not None:
        keep = prune_mask(
            tf.sum(axis=0),
            df.sum(axis=0) if df is not None else None,
            n_docs,
            options.min_df,
            options.max_df,
            options.max_features,
        )
        if options.select is not None:
            if df is None:
                raise ParameterError(
                    "select", "{select} needs document frequencies, and these counts have none", hint=DOC_FREQ_HINT
                )
            keep = select_mask(keep, df, class_count, options.select, options.select_by)
        if not keep.all():
            cols = np.flatnonzero(keep)
            vocab = vocab.subset(cols)
            tf = np.ascontiguousarray(tf[:, cols])
            df = np.ascontiguousarray(df[:, cols]) if df is not None else None
            fit_count = np.ascontiguousarray(fit_count[:, cols]) if fit_count is not None else None
            last_seen = last_seen[cols] if last_seen is not None else None
    settings = model_settings(options, alpha, unknown)
    prior = settings["prior"]
    complement = options.kind == "complement"
    model = build_event_model(
        options.kind,
        classes,
        class_count,
        tf,
        doc_freq=df,
        idf=complement and options.idf,
        fit_count=fit_count if complement else None,
        **settings,
    )
    meta = {**meta, "options": {**meta.get("options", {}), "prior": plain_prior(prior)}}
    return Classifier(analyzer_options, vocab, model, meta, record=record, last_seen=last_seen)


def transformed_sums(classifier: Classifier, docs: Iterable[Document]) -> np.ndarray:
    """The second pass for complement's document transforms: per-class sums
    (C, V) of transform(x) over the documents, on the final vocabulary. In
    this process and in input order, so the sums do not depend on --jobs."""
    index = {c: i for i, c in enumerate(classifier.classes)}
    sums = np.zeros((len(index), len(classifier.vocabulary)))
    for batch in batches(docs):
        X = classifier.counts([d.data for d in batch], [d.kind for d in batch])
        sums += classifier.model.class_sums(X, np.array([index[d.label] for d in batch], dtype=np.int64))
    return sums


def refit(old: Classifier, options: TrainOptions, source: str = "model") -> Classifier:
    """`train --from-model`: a new Classifier from `old`'s stored counts,
    with the options the user gave (`options.given`) and `old`'s settings
    for the rest. Pruning and --select narrow the stored vocabulary."""
    import dataclasses

    model = old.model
    if getattr(model, "kind", None) == "table":  # its tables are per column, not the term counts re-derived here
        raise NbcliError(
            f"{source} is a table model: its tables cannot be re-derived from term counts",
            hint="train it again from its table, with the new options",
        )
    given = options.given
    kind = options.kind
    same = kind == model.kind
    complement = model if model.kind == "complement" and same else None
    if model.kind == "complement" and model.length_norm and given & {"min_df", "max_df", "max_features", "select"}:
        raise NbcliError(
            f"{source} normalises document lengths, so pruning it needs the corpus",
            hint="train from the corpus instead",
        )
    alpha = options.alpha if "alpha" in given else model.alpha
    if "m_estimate" in given:
        m_estimate = options.m_estimate
    else:
        m_estimate = None if "alpha" in given else model.m_estimate
    prior = options.prior if "prior" in given else model.prior if same else None
    prior_alpha = options.prior_alpha if "prior_alpha" in given else None if "prior" in given else model.prior_alpha
    unknown = options.unknown if "unknown" in given else model.unknown if kind == "multinomial" else "skip"
    per_document = None if given & {"alpha", "m_estimate"} else model.alpha_per_document
    new = dataclasses.replace(
        options,
        alpha_per_document=per_document,
        estimate=options.estimate if "estimate" in given else model.estimate,
        m_estimate=m_estimate,
        prior=prior,
        prior_alpha=prior_alpha,
        tf_log=complement is not None and complement.tf_log,
        idf=complement is not None and complement.idf is not None,
        length_norm=complement is not None and complement.length_norm,
        weight_norm=options.weight_norm or (complement is not None and complement.weight_norm),
    )
    fit_count = complement.fit_count if complement is not None else None
    described = {k: v for k, v in new.described.items() if ("kind" if k == "model" else k) in given}
    described = {
        **old.meta.get("options", {}),
        **described,
        "alpha": f"{per_document:g}/N" if per_document is not None else alpha,
        "unknown_terms": unknown,
        "model": kind,
    }
    meta = {
        **old.meta,
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "nbcli_version": __version__,
        "options": described,
        "from_model": source,
    }
    meta.pop("decision", None)  # chosen on the old model's (calibrated) scores (see `deciding`)
    vocab, tf, df = old.vocabulary, np.asarray(model.feature_count), model.doc_freq
    return _build(
        model.classes,
        model.class_count,
        vocab,
        tf,
        None if df is None else np.asarray(df),
        old.analyzer_options,
        new,
        alpha,
        unknown,
        meta,
        fit_count,
        record=old.record,
        last_seen=old.last_seen,
    )


# -- cross-validation's fold models --------------------------------------------------


def fold_classifier(counts: FoldCounts, f: int, analyzer_options, options):
    """The Classifier trained on every fold but f."""
    from nbcli.fit.heldout import counts_on_vocabulary
    from nbcli.fit.training import fit_part

    corpus = counts.corpus
    class_count, tf, df = counts.training(f)
    mail_docs = corpus.mail_docs * class_count.sum() / max(len(corpus.y), 1)
    clf = fit_part(corpus.classes, class_count, corpus.vocab, tf, df, None, mail_docs, analyzer_options, options)
    model = clf.model
    if model.kind == "complement" and (model.tf_log or model.length_norm):
        # complement's --tf-log / --length-norm: the per-class sums of the
        # training documents' transformed counts, on the fold's vocabulary
        # (what `training.transformed_sums` adds up in a second reading)
        rows = np.flatnonzero(counts.fold != f)
        index = {name: i for i, name in enumerate(clf.classes)}
        cls = np.array([index[corpus.classes[c]] for c in corpus.y[rows].tolist()], dtype=np.int64)
        sums = clf.model.class_sums(counts_on_vocabulary(*_csr_parts(corpus.X[rows]), corpus.vocab.hashes, clf), cls)
        clf.model = clf.model.rebuilt(fit_count=sums)
    return clf


def score_fold(counts: FoldCounts, f: int, analyzer_options, options, eval_options) -> dict:
    """The eval report of fold f's documents under the model of the others."""
    from nbcli.evaluate.report import report
    from nbcli.fit.heldout import counts_on_vocabulary

    corpus = counts.corpus
    clf = fold_classifier(counts, f, analyzer_options, options)
    rows = np.flatnonzero(counts.fold == f)
    Xf = counts_on_vocabulary(*_csr_parts(corpus.X[rows]), corpus.vocab.hashes, clf)
    log_proba = clf.model.predict_log_proba(Xf)
    return report([corpus.classes[c] for c in corpus.y[rows].tolist()], log_proba, clf.classes, eval_options)


def _csr_parts(X) -> tuple:
    return X.indptr, X.indices, X.data

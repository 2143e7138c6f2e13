"""Training: a stream of labelled documents to a Classifier, in one pass.

Documents are read, analysed and counted batch by batch; only the counts are
kept (`CountTable`), so memory is bounded by the vocabulary and the count
tables, never by the number of documents.

The entries: `training_options` (the options, checked once, for the CLI and
the API), `train` (documents -> Classifier, in this process;
`pipeline.train` is the same with the counting on workers) and `refit`
(a model's stored counts -> Classifier with other options, no corpus).
`count_corpus`, `check_trainable`, `from_table` and `fit_counts` are the
steps `pipeline` and `crossval` compose; `_fit` and `_build` are private.
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from nbcli import __version__
from nbcli.defaults import DEFAULT_MAX_MESSAGE_BYTES
from nbcli.errors import NbcliError, ParameterError
from nbcli.fit.heldout import Sample
from nbcli.nb.classifier import Classifier
from nbcli.nb.event_models import (
    DOC_FREQ_HINT,
    EVENT_MODELS,
    UNKNOWN_TERMS,
    build_event_model,
    check_unknown_terms,
    label_problem,
)
from nbcli.nb.smoothing import (
    ESTIMATES,
    check_alpha,
    check_m_estimate,
    check_prior_alpha,
    check_prior_smoothing,
    parse_m_estimate,
    parse_prior,
)
from nbcli.text.analyzer import Analyzer, AnalyzerOptions, load_stop_words
from nbcli.text.hashing import TokenBatch
from nbcli.text.sources import Document, batches
from nbcli.text.vectorize import VocabularyBuilder, prune_mask


@dataclass
class TrainOptions:
    """Smoothing and vocabulary pruning (see `nbcli train --help`)."""

    alpha: float | None = None  # None: TEXT_ALPHA, or MAIL_ALPHA for a corpus of mail
    unknown: str | None = None  # None: TEXT_UNKNOWN, or MAIL_UNKNOWN for a corpus of mail
    prior: object = None  # 'fit', 'uniform' or {class: weight}; None: fit (uniform for complement)
    min_df: int | float = 1
    max_df: int | float = 1.0
    max_features: int | None = None
    kind: str = "auto"  # see model.EVENT_MODELS; auto: decided by the corpus (see `resolved`)
    estimate: str = "mean"  # 'mean' or 'map'
    m_estimate: tuple | None = None  # (M, P or None)
    prior_alpha: float | None = None
    tf_log: bool = False  # complement's document transforms
    idf: bool = False
    length_norm: bool = False
    weight_norm: bool = False
    select: int | None = None  # keep the K best terms by select_by
    select_by: str = "ig"
    alpha_per_document: float | None = None  # alpha = this / documents (the mail model's rule)
    given: frozenset = frozenset()  # the names of the options the user gave (see OPTION_DEFAULTS)
    described: dict = field(default_factory=dict)  # options as the user gave them

    @property
    def needs_doc_freq(self) -> bool:
        return self.min_df != 1 or self.max_df != 1.0 or self.kind == "bernoulli" or self.idf or self.select is not None

    @property
    def pruning(self) -> bool:
        return self.min_df != 1 or self.max_df != 1.0 or self.max_features is not None or self.select is not None

    @property
    def first_pass_transform(self) -> tuple[bool, bool] | None:
        """(tf_log, length_norm) of complement's document transforms when the
        counting pass can add up the transformed documents itself: each
        document's transform depends only on its own terms, so it can,
        unless pruning narrows the vocabulary (the norm is over the kept
        terms) or idf weighs the terms before normalising. For the `auto`
        model, the mail model's, approximately when pruning (see `resolved`)."""
        if self.kind == "auto":
            return MAIL_TRANSFORMS
        if self.kind == "complement" and (self.tf_log or self.length_norm) and not self.idf and not self.pruning:
            return (self.tf_log, self.length_norm)
        return None

    @property
    def needs_second_pass(self) -> bool:
        """Complement's tf-log and length normalisation on a pruned
        vocabulary, or after idf: each document's own view on the final
        vocabulary needs a second pass over the corpus."""
        return self.kind == "complement" and (self.tf_log or self.length_norm) and self.first_pass_transform is None


# The training options a caller leaves alone, by field name (AnalyzerOptions
# and TrainOptions fields; `kind` None: the base kind). An option passed with
# another value counts as given: `refit` keeps the old model's value for the
# rest, and the model file records the newer options only when given.
OPTION_DEFAULTS = {
    "token_pattern": None,
    "ngrams": 1,
    "stop_words": None,
    "min_df": 1,
    "max_df": 1.0,
    "max_features": None,
    "alpha": None,
    "unknown": None,
    "mail": True,
    "max_message_bytes": DEFAULT_MAX_MESSAGE_BYTES,
    "prior": None,
    "prior_alpha": None,
    "kind": None,
    "estimate": None,
    "m_estimate": None,
    "tf_log": False,
    "idf": False,
    "length_norm": False,
    "weight_norm": False,
    "select": None,
    "select_by": "ig",
}
# Recorded in the model file only when given, so the common case stays short.
_DESCRIBED_WHEN_GIVEN = (
    "kind",
    "estimate",
    "m_estimate",
    "prior_alpha",
    "tf_log",
    "idf",
    "length_norm",
    "weight_norm",
    "select",
    "select_by",
)


def training_options(
    base_kind: str = "auto", given: Iterable[str] | None = None, **fields
) -> tuple[AnalyzerOptions, TrainOptions]:
    """Check a combination of training options and build (AnalyzerOptions,
    TrainOptions), before any document is read: every check of `nbcli
    train`'s options lives here, and its errors name the command's flags.

    fields: named as in OPTION_DEFAULTS (the option objects' field names:
    `kind` for --model, `unknown` for --unknown-terms, `mail` for not
    --no-mail), with the values `nbcli train` takes: prior 'fit', 'uniform'
    or 'CLASS=W,...'; m_estimate 'M' or 'M,P'; stop_words 'english' or a
    file of words. base_kind: the event model when kind is None (for
    `train --from-model`, the old model's). given: the fields the user gave
    (the command line's, typed defaults too); None: those passed with a value
    other than OPTION_DEFAULTS'."""
    unknown_names = sorted(set(fields) - set(OPTION_DEFAULTS))
    if unknown_names:
        raise TypeError(f"unknown training option(s): {', '.join(unknown_names)}")
    kw = {**OPTION_DEFAULTS, **fields}
    if given is None:
        given = (k for k, v in OPTION_DEFAULTS.items() if kw[k] != v)
    given = frozenset(given)
    _check_choices(kw)
    if kw["alpha"] is not None:
        check_alpha(kw["alpha"])  # alpha's one check on its way in (the event model checks what reaches it)
    check_prior_alpha(kw["prior_alpha"])
    prior = parse_prior(kw["prior"]) if kw["prior"] is not None else None
    kind = kw["kind"] or base_kind
    m_estimate = parse_m_estimate(kw["m_estimate"]) if kw["m_estimate"] is not None else None
    for name in ("tf_log", "idf", "length_norm", "weight_norm"):
        if kw[name] and kind != "complement":
            raise ParameterError(name, f"{{{name}}} is for {{kind:complement}}")
    if m_estimate is not None and kw["alpha"] is not None:
        raise ParameterError("alpha", "give {alpha} or {m_estimate}, not both")
    check_m_estimate(m_estimate, kind)
    if kw["estimate"] == "map" and m_estimate is None and (kw["alpha"] is None or kw["alpha"] <= 1):
        raise ParameterError(
            "estimate",
            "{estimate:map} needs {alpha} above 1 (got {got})",
            got=kw["alpha"] if kw["alpha"] is not None else "the default",
            hint=(
                "the MAP estimate (N + alpha - 1) / (T + K (alpha - 1)) is zero or negative for unseen terms when "
                "alpha <= 1"
            ),
        )
    check_unknown_terms(kw["unknown"], "multinomial" if kind == "auto" else kind)
    check_prior_smoothing(prior, kw["prior_alpha"])
    stop_words = load_stop_words(kw["stop_words"]) if kw["stop_words"] else ()
    analyzer_options = AnalyzerOptions(
        token_pattern=kw["token_pattern"],
        ngrams=kw["ngrams"],
        stop_words=stop_words,
        mail=kw["mail"],
        max_message_bytes=kw["max_message_bytes"],
    )
    analyzer_options.check()
    described = {
        k: kw[k]
        for k in ("alpha", "prior", "token_pattern", "ngrams", "stop_words", "min_df", "max_df", "max_features", "mail")
    }
    described.update({k: kw[k] for k in _DESCRIBED_WHEN_GIVEN if k in given})
    if "kind" in described:
        described["model"] = described.pop("kind")
    options = TrainOptions(
        alpha=kw["alpha"],
        unknown=kw["unknown"],
        prior=prior,
        min_df=kw["min_df"],
        max_df=kw["max_df"],
        max_features=kw["max_features"],
        kind=kind,
        estimate=kw["estimate"] or "mean",
        m_estimate=m_estimate,
        prior_alpha=kw["prior_alpha"],
        tf_log=kw["tf_log"],
        idf=kw["idf"],
        length_norm=kw["length_norm"],
        weight_norm=kw["weight_norm"],
        select=kw["select"],
        select_by=kw["select_by"],
        given=given,
        described=described,
    )
    return analyzer_options, options


def _check_choices(kw: dict) -> None:
    """The values the command line's option types check, for callers of
    `training_options` from Python (the command line never fails these)."""
    for name, choices in (
        ("kind", (None, *EVENT_MODELS)),
        ("unknown", (None, *UNKNOWN_TERMS)),
        ("estimate", (None, *ESTIMATES)),
        ("select_by", ("ig", "chi2")),
    ):
        if kw[name] not in choices:
            raise ParameterError(
                name,
                f"{{{name}}} {{value!r}} is not one of {{choices}}",
                value=kw[name],
                choices=", ".join(c for c in choices if c),
            )
    for name in ("max_features", "select"):
        value = kw[name]
        if value is not None and not (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
            raise ParameterError(name, f"{{{name}}} must be a whole number of at least 1, not {{value!r}}", value=value)
    for name in ("min_df", "max_df"):
        value = kw[name]
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not (value >= 0 if isinstance(value, int) else 0.0 <= value <= 1.0)
        ):
            raise ParameterError(
                name,
                f"{{{name}}} {{value!r}} is neither a document count nor a proportion from 0.0 to 1.0",
                value=value,
            )


# The default pseudo-count and unknown-term rule. For text: 1 (Laplace) and
# skip, as scikit-learn does. For a corpus that is mostly email they were
# chosen by 5-fold cross-validation on the training part of the SpamAssassin
# split, never on its held-out part (benchmarks/tune_mail.py writes the
# table and the rule to docs/benchmarks.md).
TEXT_ALPHA = 1.0
MAIL_ALPHA = 0.0001
# Mail models count terms outside the vocabulary as never-seen terms (see
# model.MultinomialNB), which is evidence: spam is full of made-up words.
TEXT_UNKNOWN = "skip"
MAIL_UNKNOWN = "smooth"
# The mail model (see `resolved`): chosen by measurement of the TREC online
# protocol on the SpamAssassin corpus in date order and of the batch split
# (benchmarks/online_tuning.py; the table in docs/benchmarks.md).
MAIL_TRANSFORMS = (True, True)  # complement's tf-log, length-norm
MAIL_ALPHA_PER_DOCUMENT = 0.3
FIT_SCALE = float(1 << 36)  # fixed-point unit of CountTable's transformed sums (a value <= 1 is exact to 1.5e-11)


class CountTable:
    """Per-class term counts (and optionally document frequencies) of a
    growing vocabulary, accumulated batch by batch; with record=True also
    the record of the documents counted (see `record`) and each term's
    last-seen day, when the documents' data are given to `add`."""

    def __init__(
        self,
        doc_freq: bool = False,
        record: bool = True,
        transform: tuple[bool, bool] | None = None,
        sample: int = 0,
        now: int | None = None,
    ):
        from nbcli.text.identity import run_time

        self.transform = transform
        self.sample_size = sample
        # the date of a document without one: when this run started (one
        # time for every worker's table, so the record is the same for any --jobs)
        self.now = run_time() if now is None else now
        # a sample of the documents with their counts, for calibration (see `heldout`)
        self._sample = Sample(sample) if sample else None
        self.heldout = None  # set by finish(): heldout.HeldOut
        # complement's transformed documents, summed per class in fixed point
        # (FIT_SCALE units): integer sums are the same in any order, so the
        # model does not depend on how the corpus was split among workers
        self._fit = np.zeros((0, 0), dtype=np.int64) if transform is not None else None
        self.fit = None  # set by finish(): (C, V) float
        self.vocab = VocabularyBuilder()
        self.class_ids: dict[str, int] = {}
        self.class_docs: list[int] = []
        self._tf = np.zeros((0, 0), dtype=np.int64)  # (term capacity, class capacity)
        self._df = np.zeros((0, 0), dtype=np.int64) if doc_freq else None
        self._seen = np.zeros(0, dtype=np.int32) if record else None  # (term capacity,) day numbers
        self._record: list[tuple] | None = [] if record else None  # (digests, class ids, message ids, when)
        self.mail_docs = 0
        self.record = None  # set by finish()
        self.last_seen = None

    def _class_id(self, label: str) -> int:
        cid = self.class_ids.get(label)
        if cid is None:
            cid = self.class_ids[label] = len(self.class_ids)
            self.class_docs.append(0)
        return cid

    def _reserve(self, n_terms: int) -> None:
        rows, cols = self._tf.shape
        want_cols = len(self.class_ids)
        if n_terms <= rows and want_cols <= cols:
            return
        new_rows = max(rows, 1024)
        while new_rows < n_terms:
            new_rows *= 2
        new_cols = max(cols, want_cols, 2)
        for name in ("_tf", "_df", "_fit"):
            old = getattr(self, name)
            if old is None:
                continue
            grown = np.zeros((new_rows, new_cols), dtype=np.int64)
            grown[: old.shape[0], : old.shape[1]] = old
            setattr(self, name, grown)
        if self._seen is not None:
            seen = np.zeros(new_rows, dtype=np.int32)
            seen[: len(self._seen)] = self._seen
            self._seen = seen

    def add(self, batch: TokenBatch, labels: list[str], datas: list | None = None) -> None:
        """Count the tokens of a batch whose documents have these labels
        (and how many of them were read as mail); `datas`, the documents'
        data, for the record."""
        self.mail_docs += batch.mail_docs
        ids = self.vocab.ids(batch)
        cls_doc = np.array([self._class_id(lab) for lab in labels], dtype=np.int64)
        for cid in cls_doc.tolist():
            self.class_docs[cid] += 1
        self._reserve(len(self.vocab))
        n_cols = self._tf.shape[1]
        doc_len = np.diff(batch.doc_ptr)
        cls_tok = np.repeat(cls_doc, doc_len)
        np.add.at(self._tf.reshape(-1), ids * n_cols + cls_tok, 1)
        if self._df is not None and len(ids):
            n = len(self.vocab)
            doc_of = np.repeat(np.arange(len(labels), dtype=np.int64), doc_len)
            pairs = np.unique(doc_of * n + ids)
            docs, terms = pairs // n, pairs % n
            np.add.at(self._df.reshape(-1), terms * n_cols + cls_doc[docs], 1)
        if self._fit is not None and len(ids):
            self._add_transformed(ids, doc_len, cls_doc, n_cols)
        digest = None
        if self._record is not None and datas is not None:
            from nbcli.text.identity import document_entries

            digest, message_id, when = document_entries(batch, datas, self.now)
            self._record.append((digest, cls_doc, message_id, when))
            np.maximum.at(self._seen, ids, np.repeat((when // 86400).astype(np.int32), doc_len))
        if self._sample is not None:
            if digest is None:
                from nbcli.text.identity import digests

                digest = digests(batch.hashes, batch.doc_ptr)
            self._sample.add(digest[:, 0], cls_doc, ids, doc_len)

    def _add_transformed(self, ids: np.ndarray, doc_len: np.ndarray, cls_doc: np.ndarray, n_cols: int) -> None:
        """Add each document's transformed counts (log(1 + x) and/or x / ||x||)
        to its class's sums."""
        n = len(self.vocab)
        doc_of = np.repeat(np.arange(len(cls_doc), dtype=np.int64), doc_len)
        pairs, counts = np.unique(doc_of * n + ids, return_counts=True)
        docs, terms = pairs // n, pairs % n
        values = counts.astype(np.float64)
        tf_log, length_norm = self.transform
        if tf_log:
            values = np.log1p(values)
        if length_norm:
            from nbcli.fit.heldout import doc_norms  # the same norm, to the bit, for any --jobs

            values = values / doc_norms(docs, values, len(cls_doc))[docs]
        fixed = np.rint(values * FIT_SCALE).astype(np.int64)
        np.add.at(self._fit.reshape(-1), terms * n_cols + cls_doc[docs], fixed)

    @property
    def doc_freq_wanted(self) -> bool:
        return self._df is not None

    def state(self) -> dict:
        """A compact, picklable summary, for `merge` in another process."""
        keys, terms = self.vocab.state()
        n, c = len(keys), len(self.class_ids)
        return {
            "keys": keys,
            "terms": terms,
            "classes": sorted(self.class_ids, key=self.class_ids.get),
            "class_docs": list(self.class_docs),
            "tf": self._tf[:n, :c].copy(),
            "df": None if self._df is None else self._df[:n, :c].copy(),
            "mail_docs": self.mail_docs,
            "record": None if self._record is None else self._record_parts(),
            "fit": None if self._fit is None else self._fit[:n, :c].copy(),
            "seen": None if self._seen is None else self._seen[:n].copy(),
            "sample": None
            if self._sample is None
            else self._sample.state(sorted(self.class_ids, key=self.class_ids.get), keys),
        }

    def _record_parts(self) -> tuple:
        parts = self._record
        if not parts:
            return (np.zeros((0, 2), np.uint64), np.zeros(0, np.int64), np.zeros(0, np.uint64), np.zeros(0, np.int64))
        return tuple(np.concatenate([p[k] for p in parts]) for k in range(4))

    def merge(self, state: dict) -> None:
        """Add the counts of another table's `state()` to this one."""
        ids = self.vocab.add_terms(state["keys"], state["terms"])
        cols = [self._class_id(name) for name in state["classes"]]
        for col, docs in zip(cols, state["class_docs"]):
            self.class_docs[col] += docs
        self._reserve(len(self.vocab))
        for theirs, col in enumerate(cols):
            self._tf[ids, col] += state["tf"][:, theirs]
            if self._df is not None:
                self._df[ids, col] += state["df"][:, theirs]
            if self._fit is not None:
                self._fit[ids, col] += state["fit"][:, theirs]
        self.mail_docs += state["mail_docs"]
        if self._record is not None and state.get("record") is not None:
            digest, cls, message_id, when = state["record"]
            self._record.append((digest, np.asarray(cols, dtype=np.int64)[cls], message_id, when))
            np.maximum.at(self._seen, ids, state["seen"])
        if self._sample is not None and state.get("sample") is not None:
            self._sample.merge(state["sample"], self._class_id, lambda hashes: self.vocab.add_terms(hashes, []))

    def finish(self):
        """(classes sorted by name, class_count (C,), vocabulary,
        feature_count (C, V), doc_freq (C, V) or None), columns sorted."""
        vocab, new_of_old = self.vocab.finish()
        classes = sorted(self.class_ids)
        cols = [self.class_ids[c] for c in classes]
        n = len(vocab)
        order = np.empty(n, dtype=np.int64)
        order[new_of_old] = np.arange(n)
        tf = np.ascontiguousarray(self._tf[:n][order][:, cols].T) if n else np.zeros((len(cols), 0), np.int64)
        df = None
        if self._df is not None:
            df = np.ascontiguousarray(self._df[:n][order][:, cols].T) if n else np.zeros((len(cols), 0), np.int64)
        class_count = np.array([self.class_docs[i] for i in cols], dtype=np.float64)
        if self._fit is not None:
            fixed = self._fit[:n][order][:, cols].T if n else np.zeros((len(cols), 0), np.int64)
            self.fit = np.ascontiguousarray(fixed, dtype=np.float64) / FIT_SCALE
        if self._record is not None:
            from nbcli.nb.record import Record

            column_of = np.empty(max(len(self.class_ids), 1), dtype=np.int64)
            column_of[cols] = np.arange(len(cols))
            digest, cls, message_id, when = self._record_parts()
            self.record = Record.build(digest, column_of[cls], np.ones(len(cls), np.int64), message_id, when)
            self.last_seen = self._seen[:n][order] if n else np.zeros(0, np.int32)
        if self._sample is not None:
            self.heldout = self._sample.finish({c: i for i, c in enumerate(cols)}, new_of_old, n)
        # the growing tables and the builder's term texts are in the results now: free them before the
        # calibration's fold models are built
        self._tf = self._df = self._fit = self._seen = self._sample = None
        self.vocab = None
        return classes, class_count, vocab, tf, df


def count_corpus(
    docs: Iterable[Document],
    analyzer: Analyzer,
    doc_freq: bool,
    progress: Callable[[list], None] | None = None,
    transform: tuple[bool, bool] | None = None,
    sample: int = 0,
) -> CountTable:
    """One streaming pass over labelled documents, in this process (see
    `pipeline.count_corpus` for the same on several workers)."""
    table = CountTable(doc_freq=doc_freq, transform=transform, sample=sample)
    for batch in batches(docs):
        datas = [d.data for d in batch]
        table.add(analyzer.analyze(datas, [d.kind for d in batch]), [d.label for d in batch], datas)
        if progress is not None:
            progress(batch)
    return table


def _fit(
    table: CountTable,
    analyzer_options: AnalyzerOptions,
    options: TrainOptions,
    calibrate: str | None = None,
    strict: bool = True,
    bar=None,
) -> Classifier:
    """Prune the vocabulary, smooth the counts, and build the Classifier;
    calibrate it on held-out scores of the table's sample (strict: refuse
    a corpus too small for that; otherwise the meta says why it was not;
    bar: see `from_table`)."""
    classes, class_count, vocab, tf, df = table.finish()
    classifier = fit_counts(
        classes,
        class_count,
        vocab,
        tf,
        df,
        table.mail_docs,
        analyzer_options,
        options,
        record=table.record,
        last_seen=table.last_seen,
        fit=table.fit,
    )
    if calibrate is not None:
        from nbcli.defaults import MIN_CALIBRATION_PER_CLASS
        from nbcli.fit.heldout import groups_for, heldout_problem, heldout_scores
        from nbcli.nb.calibrators import fit_cross_validated

        heldout = table.heldout
        problem = heldout_problem(heldout, classes, 2 if strict else MIN_CALIBRATION_PER_CLASS)
        if problem is not None:
            if strict:
                raise NbcliError(
                    f"cannot calibrate by cross-validation: {problem}",
                    hint="give more documents, or --calibrate none",
                )
            classifier.meta["calibration"] = {"skipped": problem}
            return classifier
        fit_one = functools.partial(fit_part, analyzer_options=analyzer_options, options=options, texts=False)
        k = groups_for(len(heldout), int(class_count.sum()))
        if bar is not None:
            bar.phase(f"calibrating ({len(heldout)} held-out documents, {k} models)", k)
        scores, truth = heldout_scores(
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
        if calibrate == "default":
            from nbcli.defaults import default_calibration

            calibrate = default_calibration(len(classes))
        classifier.calibration, skipped = fit_cross_validated(calibrate, scores, truth, classes, strict)
        if skipped is not None:
            classifier.meta["calibration"] = {"skipped": skipped}
            return classifier
        classifier.meta["calibration"] = calibration_meta(classifier, "cross-validation")
    return classifier


def calibration_meta(classifier: Classifier, source: str) -> dict:
    """What the model's meta says of its calibration: how it was fitted
    (source: 'cross-validation' of the training corpus, or the held-out
    documents' path) and the model's documents then (for the staleness
    rule, `learning`)."""
    return {"source": source, "model_documents": int(classifier.model.class_count.sum())}


def resolved(options: TrainOptions, mostly_mail: bool) -> tuple[TrainOptions, float, str]:
    """(the options with the event model decided, alpha, unknown-term rule)
    for a corpus that is mostly mail or not: what depends on the corpus.

    The `auto` event model (no --model given) is, for a corpus mostly of
    mail, the mail model: complement Naive Bayes with --tf-log and
    --length-norm, the pseudo-count MAIL_ALPHA_PER_DOCUMENT / N for N
    documents learned (unless --alpha or --m-estimate is given), unknown
    terms skipped, a uniform prior (see "Online defaults" in
    docs/benchmarks.md for the measurements that chose it); --unknown-terms
    smooth asks for the multinomial model. Otherwise it is the multinomial
    model with TEXT_ALPHA. With pruning, the mail model's transformed sums
    are those of the counting pass (norms over all of a document's terms,
    not only the kept ones: an approximation, documented)."""
    import dataclasses

    if options.kind == "auto":
        mail_model = mostly_mail and options.unknown != "smooth"
        if mail_model:
            per_document = MAIL_ALPHA_PER_DOCUMENT if options.alpha is None and options.m_estimate is None else None
            options = dataclasses.replace(
                options, kind="complement", tf_log=True, length_norm=True, alpha_per_document=per_document
            )
        else:
            options = dataclasses.replace(options, kind="multinomial")
    alpha, unknown = resolved_defaults(options, mostly_mail)
    return options, alpha, unknown


def resolved_defaults(options: TrainOptions, mostly_mail: bool) -> tuple[float, str]:
    """(alpha, unknown-term rule) of options whose event model is decided, for
    a corpus that is mostly mail or not (with alpha_per_document, alpha is
    that: the model divides it by its number of documents)."""
    if options.alpha_per_document is not None:
        alpha = options.alpha_per_document
    else:
        alpha = options.alpha if options.alpha is not None else MAIL_ALPHA if mostly_mail else TEXT_ALPHA
    unknown = options.unknown or (MAIL_UNKNOWN if mostly_mail and options.kind == "multinomial" else TEXT_UNKNOWN)
    return alpha, unknown


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
    for label in classes:  # here, where every path to a model meets (workers and --cv folds too)
        problem = label_problem(label)
        if problem:
            raise NbcliError(
                problem, hint="class labels go into mail headers and TSV rows; rename that class (its folder or label)"
            )
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
        raise NbcliError(
            "the corpus has no terms: every document is empty after tokenizing",
            hint="check the documents, --token-pattern and --stop-words",
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


def described_options(options: TrainOptions, alpha: float, unknown: str) -> dict:
    """The options as the model's meta records them: as given, with the
    resolved pseudo-count and unknown-term rule, and the event model the
    corpus decided when none was given."""
    described = {**options.described, "alpha": alpha, "unknown_terms": unknown}
    if options.alpha_per_document is not None:
        described["alpha"] = f"{options.alpha_per_document:g}/N"
    if "model" not in described and options.kind != "multinomial":
        described["model"] = options.kind
        described.update({k: True for k in ("tf_log", "length_norm") if getattr(options, k)})
    return described


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


def model_settings(options: TrainOptions, alpha: float, unknown: str) -> dict:
    """The event model's keyword arguments for TrainOptions, with the
    resolved pseudo-count and unknown-term rule (all but the count-derived
    doc_freq, idf and fit_count): training, learning from nothing and the
    online protocol build their models from these."""
    # complement's prior is uniform by default (Rennie et al., scikit-learn), unless --prior-alpha asks to fit one
    uniform = options.kind == "complement" and options.prior_alpha is None
    prior = options.prior if options.prior is not None else "uniform" if uniform else "fit"
    settings = dict(
        alpha=alpha,
        prior=prior,
        unknown=unknown,
        estimate=options.estimate,
        m_estimate=options.m_estimate,
        prior_alpha=options.prior_alpha,
        alpha_per_document=options.alpha_per_document,
    )
    if options.kind == "complement":
        settings.update(tf_log=options.tf_log, length_norm=options.length_norm, weight_norm=options.weight_norm)
    return settings


def plain_prior(prior) -> str:
    """A prior as `--prior` takes it (for the model's meta)."""
    return prior if isinstance(prior, str) else ",".join(f"{c}={w:g}" for c, w in prior.items())


def select_scores(df: np.ndarray, class_count: np.ndarray, by: str = "ig") -> np.ndarray:
    """Each term's score for --select, from document frequencies.

    df: (C, V) documents of each class containing the term; class_count (C,).
    'ig': information gain (nats), H(C) - H(C | term present or absent);
    'chi2': Pearson's chi-squared statistic of the 2 x C table (present /
    absent by class), 0 for a term in every document or in none.
    """
    from scipy.special import xlogy

    df = np.asarray(df, dtype=np.float64)
    n_c = np.asarray(class_count, dtype=np.float64)[:, None]
    n = n_c.sum()
    present = df
    absent = n_c - df
    n1 = present.sum(axis=0)
    n0 = n - n1
    if by == "ig":
        h_c = -xlogy(n_c[:, 0] / n, n_c[:, 0] / n).sum()
        with np.errstate(divide="ignore", invalid="ignore"):
            h1 = -np.nan_to_num(xlogy(present / n1, present / n1)).sum(axis=0)
            h0 = -np.nan_to_num(xlogy(absent / n0, absent / n0)).sum(axis=0)
        return h_c - (n1 / n) * h1 - (n0 / n) * h0
    if by == "chi2":
        with np.errstate(divide="ignore", invalid="ignore"):
            e1 = n1 * n_c / n
            e0 = n0 * n_c / n
            stat = np.nan_to_num((present - e1) ** 2 / e1) + np.nan_to_num((absent - e0) ** 2 / e0)
        return np.where((n1 > 0) & (n0 > 0), stat.sum(axis=0), 0.0)
    raise ParameterError("select_by", "{select_by} {value!r} is not one of ig, chi2", value=by)


def select_mask(keep: np.ndarray, df: np.ndarray, class_count: np.ndarray, k: int, by: str) -> np.ndarray:
    """Of the terms in `keep`, the k with the highest score (ties: by column)."""
    if df is None:
        raise ParameterError(
            "select", "{select} needs document frequencies, and these counts have none", hint=DOC_FREQ_HINT
        )
    candidates = np.flatnonzero(keep)
    if len(candidates) <= k:
        return keep
    scores = select_scores(df[:, candidates], class_count, by)
    best = np.argsort(-scores, kind="stable")[:k]
    out = np.zeros_like(keep)
    out[candidates[best]] = True
    return out


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


def train(
    docs: Iterable[Document],
    analyzer_options: AnalyzerOptions,
    options: TrainOptions,
    progress=None,
    calibrate: str | None = None,
    strict: bool = True,
) -> Classifier:
    """Train a Classifier on labelled documents, in this process (see
    `pipeline.train` for the counting on several workers); calibrate: the
    calibration method (`calibrators.METHODS`), None for none; strict: see
    `_fit`."""
    check_trainable(docs, options, calibrate)
    table = count_corpus(
        docs,
        Analyzer(analyzer_options),
        options.needs_doc_freq,
        progress,
        options.first_pass_transform,
        sample_size(calibrate),
    )
    return from_table(table, docs, analyzer_options, options, calibrate, strict)


def check_trainable(docs: Iterable[Document], options: TrainOptions, calibrate: str | None = None) -> None:
    """Refuse, before reading anything, what training could not finish
    (the options themselves were checked where they entered: `training_options`)."""
    if options.needs_second_pass and iter(docs) is docs:
        raise ParameterError(
            "tf_log", "{tf_log} and {length_norm} read the corpus twice, and this corpus can be read only once"
        )
    if calibrate is not None:
        check_calibratable(options, calibrate)


def check_calibratable(options: TrainOptions | None, calibrate: str) -> None:
    """Refuse a calibration method training cannot fit with these options
    (None: a table model's)."""
    from nbcli.nb.calibrators import METHODS

    if calibrate not in (*METHODS, "default"):
        raise NbcliError(f"--calibrate {calibrate!r} is not one of {', '.join(METHODS)}, none")
    if options is not None and options.needs_second_pass:
        raise NbcliError(
            "--calibrate cannot cross-validate complement's --tf-log/--length-norm with pruning or --idf",
            hint="train with --calibrate none, then fit one on held-out mail: nbcli calibrate MODEL HELDOUT",
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


def sample_size(calibrate: str | None) -> int:
    """The documents per class the counting pass keeps for calibration."""
    from nbcli.fit.heldout import SAMPLE_PER_CLASS

    return SAMPLE_PER_CLASS if calibrate is not None else 0


def from_table(
    table: CountTable,
    docs: Iterable[Document],
    analyzer_options: AnalyzerOptions,
    options: TrainOptions,
    calibrate: str | None = None,
    strict: bool = True,
    bar=None,
) -> Classifier:
    """The Classifier of the counts of `docs`; complement's document
    transforms read `docs` a second time (`transformed_sums`); with a
    calibration method, calibrated on the held-out scores of the documents
    the table sampled (see `heldout`; strict: see `_fit`). bar: the
    progress bar (`diagnostics.Advance`), relabelled when the calibration
    starts and advanced by one per cross-validation model."""
    classifier = _fit(table, analyzer_options, options, calibrate, strict, bar)
    if options.needs_second_pass:
        classifier.model = classifier.model.rebuilt(fit_count=transformed_sums(classifier, docs))
    return classifier


def refit(old: Classifier, options: TrainOptions, source: str = "model") -> Classifier:
    """`train --from-model`: a new Classifier from `old`'s stored counts,
    with the options the user gave (`options.given`) and `old`'s settings
    for the rest. Pruning and --select narrow the stored vocabulary."""
    import dataclasses

    model = old.model
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

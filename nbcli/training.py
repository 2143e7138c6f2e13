"""Training: a stream of labelled documents to a Classifier, in one pass.

Documents are read, analysed and counted batch by batch; only the counts are
kept (`CountTable`), so memory is bounded by the vocabulary and the count
tables, never by the number of documents.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np

from nbcli import __version__
from nbcli.classifier import Classifier
from nbcli.errors import NbcliError
from nbcli.model import MultinomialNB, check_alpha
from nbcli.sources import Document, batches
from nbcli.tokenize import Analyzer, AnalyzerOptions, TokenBatch
from nbcli.vectorize import Vocabulary, VocabularyBuilder, prune_mask


@dataclass
class TrainOptions:
    """Smoothing and vocabulary pruning (see `nbcli train --help`)."""

    alpha: float | None = None  # None: TEXT_ALPHA, or MAIL_ALPHA for a corpus of mail
    unknown: str | None = None  # None: TEXT_UNKNOWN, or MAIL_UNKNOWN for a corpus of mail
    prior: object = "fit"  # 'fit', 'uniform' or {class: weight}
    min_df: int | float = 1
    max_df: int | float = 1.0
    max_features: int | None = None
    described: dict = field(default_factory=dict)  # options as the user gave them

    @property
    def needs_doc_freq(self) -> bool:
        return self.min_df != 1 or self.max_df != 1.0


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


class CountTable:
    """Per-class term counts (and optionally document frequencies) of a
    growing vocabulary, accumulated batch by batch."""

    def __init__(self, doc_freq: bool = False):
        self.vocab = VocabularyBuilder()
        self.class_ids: dict[str, int] = {}
        self.class_docs: list[int] = []
        self._tf = np.zeros((0, 0), dtype=np.int64)  # (term capacity, class capacity)
        self._df = np.zeros((0, 0), dtype=np.int64) if doc_freq else None
        self.mail_docs = 0

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
        for name in ("_tf", "_df"):
            old = getattr(self, name)
            if old is None:
                continue
            grown = np.zeros((new_rows, new_cols), dtype=np.int64)
            grown[: old.shape[0], : old.shape[1]] = old
            setattr(self, name, grown)

    def add(self, batch: TokenBatch, labels: list[str]) -> None:
        """Count the tokens of a batch whose documents have these labels."""
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
        }

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
        self.mail_docs += state["mail_docs"]

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
        return classes, class_count, vocab, tf, df


def count_corpus(docs: Iterable[Document], analyzer: Analyzer, doc_freq: bool, progress: Callable[[list], None] | None = None, jobs: int = 1) -> CountTable:
    """One streaming pass over labelled documents (see `parallel.count`)."""
    from nbcli import parallel

    table = CountTable(doc_freq=doc_freq)
    parallel.count(batches(docs), analyzer, table, jobs, progress)
    table.mail_docs += analyzer.mail_docs
    return table


def fit(table: CountTable, analyzer_options: AnalyzerOptions, options: TrainOptions) -> Classifier:
    """Prune the vocabulary, smooth the counts, and build the Classifier."""
    classes, class_count, vocab, tf, df = table.finish()
    return fit_counts(classes, class_count, vocab, tf, df, table.mail_docs, analyzer_options, options)


def fit_counts(classes, class_count, vocab, tf, df, mail_docs, analyzer_options: AnalyzerOptions, options: TrainOptions) -> Classifier:
    """The Classifier of finished counts: classes (C,) by name, class_count
    (C,), vocab, tf and df (C, V) (df may be None), and how many of the
    documents were mail (which decides the defaults)."""
    n_docs = int(class_count.sum())
    mostly_mail = 2 * mail_docs > n_docs
    alpha = options.alpha if options.alpha is not None else MAIL_ALPHA if mostly_mail else TEXT_ALPHA
    unknown = options.unknown or (MAIL_UNKNOWN if mostly_mail else TEXT_UNKNOWN)
    check_alpha(alpha)
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
    if df is not None or options.max_features is not None:
        keep = prune_mask(
            tf.sum(axis=0),
            df.sum(axis=0) if df is not None else None,
            n_docs,
            options.min_df,
            options.max_df,
            options.max_features,
        )
        if not keep.all():
            cols = np.flatnonzero(keep)
            vocab = vocab.subset(cols)
            tf = np.ascontiguousarray(tf[:, cols])
            df = np.ascontiguousarray(df[:, cols]) if df is not None else None
    model = MultinomialNB(classes, class_count, tf, alpha=alpha, prior=options.prior, doc_freq=df, unknown=unknown)
    meta = {
        "n_documents": n_docs,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "nbcli_version": __version__,
        "options": {**options.described, "alpha": alpha, "unknown_terms": unknown},
        "mail_documents": int(mail_docs),
    }
    return Classifier(analyzer_options, vocab, model, meta)


def train(docs: Iterable[Document], analyzer_options: AnalyzerOptions, options: TrainOptions, progress=None, jobs: int = 1) -> Classifier:
    """Train a Classifier on labelled documents (jobs: see `parallel`)."""
    analyzer = Analyzer(analyzer_options)
    if options.alpha is not None:
        check_alpha(options.alpha)
    table = count_corpus(docs, analyzer, options.needs_doc_freq, progress, jobs)
    return fit(table, analyzer_options, options)

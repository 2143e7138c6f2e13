"""K-fold cross-validation that reads and analyses the corpus once.

Counts are the sufficient statistic of a Naive Bayes model, so after one
pass that keeps each document's term counts (a CSR matrix over the whole
corpus's vocabulary), fold k's model needs no second reading: its counts are
the corpus's counts minus fold k's. Its vocabulary is the terms that occur
in the other folds, pruned by the training options, exactly as `nbcli
train` on those documents would build it; the documents of fold k are then
scored on that vocabulary (their other terms are unknown terms). The one
difference from training on the other folds: the mail defaults (alpha, the
unknown-term rule) are decided once for the whole corpus.

Folds are stratified: each class's documents, shuffled with the seed, are
dealt to the folds in turn (continuing from class to class), so every
class is split as evenly as it can be and the folds' sizes differ by at
most one. Folds are scored in parallel by `tuning.cross_validate`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from nbcli.errors import NbcliError, ParameterError


@dataclass
class AnalysedCorpus:
    """X: scipy CSR (n_docs, n_terms) term counts; y: class index per
    document; classes: sorted names; vocab: the Vocabulary of X's columns;
    mail_docs: documents read as mail."""

    X: object
    y: np.ndarray
    classes: list[str]
    vocab: object
    mail_docs: int


def analyse_corpus(docs, analyzer, progress=None, analysed_batches=None) -> AnalysedCorpus:
    """One pass over labelled documents, keeping each one's counts (see
    `analyse_streams` for `analysed_batches`)."""
    [(X, labels)], vocab, mail_docs = analyse_streams([docs], analyzer, progress, analysed_batches)
    classes = sorted(set(labels))
    index = {c: i for i, c in enumerate(classes)}
    y = np.array([index[lab] for lab in labels], dtype=np.int64)
    return AnalysedCorpus(X, y, classes, vocab, mail_docs)


def analyse_streams(parts: list, analyzer, progress=None, analysed_batches=None) -> tuple[list, object, int]:
    """Analyse several streams of documents on one vocabulary: ([(X, a
    scipy CSR (documents x terms) of counts, [labels])] per stream, the
    Vocabulary, how many documents were read as mail).

    `analysed_batches(docs)`, if given, yields (batch, its TokenBatch) for
    the batches of a stream, in order: where the analysis runs is its
    business (`parallel.analysed_batches` runs it on workers). Term ids are
    assigned here, in input order, so the result is the same either way."""
    import scipy.sparse

    from nbcli.text.vectorize import VocabularyBuilder

    if analysed_batches is None:
        analysed_batches = partial(_analysed_here, analyzer)
    builder = VocabularyBuilder()
    raw, mail_docs = [], 0
    for docs in parts:
        ids, ptrs, labels, offset = [], [np.zeros(1, dtype=np.int64)], [], 0
        for batch, tokens in analysed_batches(docs):
            mail_docs += tokens.mail_docs
            ids.append(builder.ids(tokens))
            ptrs.append(np.asarray(tokens.doc_ptr[1:], dtype=np.int64) + offset)
            offset += len(ids[-1])
            labels.extend(d.label for d in batch)
            if progress is not None:
                progress(batch)
        raw.append((ids, ptrs, labels))
    vocab, new_of_old = builder.finish()
    out = []
    for ids, ptrs, labels in raw:
        indices = new_of_old[np.concatenate(ids)] if ids else np.zeros(0, dtype=np.int64)
        X = scipy.sparse.csr_matrix(
            (np.ones(len(indices)), indices, np.concatenate(ptrs)), shape=(len(labels), len(vocab))
        )
        X.sum_duplicates()
        out.append((X, labels))
    return out, vocab, mail_docs


def _analysed_here(analyzer, docs):
    """(batch, its TokenBatch) for the batches of docs, in this process."""
    from nbcli.text.sources import batches

    for batch in batches(docs):
        yield batch, analyzer.analyze([d.data for d in batch], [d.kind for d in batch])


def stratified_folds(y: np.ndarray, k: int, seed: int) -> np.ndarray:
    """The fold (0..k-1) of each document, stratified by class y."""
    rng = np.random.default_rng(seed)
    fold = np.empty(len(y), dtype=np.int64)
    dealt = 0
    for c in np.unique(y):
        members = rng.permutation(np.flatnonzero(y == c))
        fold[members] = (dealt + np.arange(len(members))) % k
        dealt += len(members)
    return fold


class FoldCounts:
    """Per-fold class and term counts (sparse), and the corpus's (dense),
    so that any fold's training counts are one subtraction away."""

    def __init__(self, corpus: AnalysedCorpus, fold: np.ndarray, k: int, doc_freq: bool):
        import scipy.sparse

        self.corpus, self.fold, self.k = corpus, fold, k
        C = len(corpus.classes)
        onehot = scipy.sparse.csr_matrix(
            (np.ones(len(corpus.y)), corpus.y, np.arange(len(corpus.y) + 1)), shape=(len(corpus.y), C)
        )
        binary = corpus.X.copy()
        binary.data[:] = 1
        self.tf, self.df, self.docs = [], [], []
        for f in range(k):
            rows = np.flatnonzero(fold == f)
            part = onehot[rows].T
            self.tf.append((part @ corpus.X[rows]).tocsr())  # sparse: (C, V) per fold
            self.df.append((part @ binary[rows]).tocsr() if doc_freq else None)
            self.docs.append(np.bincount(corpus.y[rows], minlength=C).astype(np.float64))
        self.total_tf = _dense(onehot.T @ corpus.X)
        self.total_df = _dense(onehot.T @ binary) if doc_freq else None
        self.total_docs = sum(self.docs)

    def training(self, f: int):
        """(class_count, tf, df) of every fold but f, dense (C, V) int64."""
        df = self.total_df - _dense(self.df[f]) if self.total_df is not None else None
        return self.total_docs - self.docs[f], self.total_tf - _dense(self.tf[f]), df


def _dense(m) -> np.ndarray:
    return np.rint(m.toarray()).astype(np.int64)


def fold_counts(corpus: AnalysedCorpus, k: int, seed: int, doc_freq: bool) -> FoldCounts:
    """The corpus dealt to k stratified folds, with each fold's counts."""
    check_folds(corpus, k)
    return FoldCounts(corpus, stratified_folds(corpus.y, k, seed), k, doc_freq)


def summarise(corpus: AnalysedCorpus, k: int, seed: int, reports: list[dict]) -> dict:
    """The cross-validation report of the folds' eval reports: {"folds",
    "seed", "documents", "metrics": {name: {"mean", "std"}}, "fold_reports":
    [eval report...]}. std is the population standard deviation over the
    folds. (`tuning.cross_validate` scores the folds, in parallel.)"""
    from nbcli.evaluate.report import flat_metrics

    flats = [flat_metrics(r) for r in reports]
    names = [n for n in flats[0] if all(n in f for f in flats)]
    metrics = {
        n: {"mean": float(np.mean([f[n] for f in flats])), "std": float(np.std([f[n] for f in flats]))} for n in names
    }
    return {"folds": k, "seed": seed, "documents": int(len(corpus.y)), "metrics": metrics, "fold_reports": reports}


def check_folds(corpus: AnalysedCorpus, k: int) -> None:
    if len(corpus.y) == 0:
        raise NbcliError("the corpus has no documents", hint="check the paths")
    if len(corpus.classes) < 2:
        raise NbcliError(
            f"the corpus has only one class ({corpus.classes[0]})",
            hint="cross-validation needs documents of at least two classes",
        )
    sizes = np.bincount(corpus.y, minlength=len(corpus.classes))
    if sizes.min() < 2:
        lonely = corpus.classes[int(sizes.argmin())]
        raise NbcliError(
            f"class {lonely} has only one document: a fold's training part would lack it",
            hint="cross-validation needs at least two documents of each class",
        )
    if k > len(corpus.y):
        raise ParameterError("cv", "{cv} {k} needs at least {k} documents; the corpus has {n}", k=k, n=len(corpus.y))

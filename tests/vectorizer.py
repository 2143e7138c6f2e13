"""A scipy-facing vectorizer for tests: documents to CSR count matrices.

Built from the pieces the CLI streams batch by batch (`Analyzer`,
`VocabularyBuilder`, `Vocabulary.lookup`, `SparseCounts`); tests compare
it with scikit-learn's CountVectorizer, which checks those pieces. (It
lived in nbcli/text/vectorize.py, where nothing but tests used it.)
"""

from __future__ import annotations

import numpy as np

from nbcli.text.analyzer import Analyzer
from nbcli.text.vectorize import SparseCounts, Vocabulary, VocabularyBuilder


class Vectorizer:
    """Documents to CSR count matrices, with a fitted or growing vocabulary.

    The scipy-facing API (used by tests and library users); the CLI streams
    the same pieces (`Analyzer`, `VocabularyBuilder`, `known_counts`) batch
    by batch instead of building one matrix for a whole corpus.
    """

    def __init__(self, analyzer: Analyzer | None = None, vocabulary: Vocabulary | None = None):
        self.analyzer = analyzer or Analyzer()
        self.vocabulary = vocabulary

    def fit_transform(self, docs, batch_docs: int = 512):
        """Learn the vocabulary of `docs` and return their scipy CSR counts."""
        builder = VocabularyBuilder()
        parts = []
        for start in range(0, len(docs), batch_docs):
            batch = self.analyzer.analyze(docs[start : start + batch_docs])
            parts.append((batch.doc_ptr, builder.ids(batch)))
        self.vocabulary, new_of_old = builder.finish()
        return self._stack([(p, new_of_old[i]) for p, i in parts])

    def transform(self, docs, batch_docs: int = 512):
        """scipy CSR counts of `docs` on the fitted vocabulary."""
        if self.vocabulary is None:
            raise ValueError("the vectorizer has no vocabulary; call fit_transform first")
        parts = []
        for start in range(0, len(docs), batch_docs):
            batch = self.analyzer.analyze(docs[start : start + batch_docs])
            parts.append((batch.doc_ptr, self.vocabulary.lookup(batch.hashes)))
        return self._stack(parts)

    def _stack(self, parts):
        indptrs, indices = [np.zeros(1, dtype=np.int64)], []
        base = 0
        for doc_ptr, ids in parts:
            known = ids >= 0
            cum = np.concatenate([[0], np.cumsum(known)])
            indptrs.append(cum[doc_ptr[1:]] + base)
            indices.append(ids[known])
            base += int(cum[-1])
        indptr = np.concatenate(indptrs)
        idx = np.concatenate(indices) if indices else np.zeros(0, dtype=np.int64)
        shape = (len(indptr) - 1, len(self.vocabulary))
        return SparseCounts(indptr, idx, None, shape).to_scipy()

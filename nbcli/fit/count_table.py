"""The counting pass of training: `CountTable`, the per-class term counts
of a growing vocabulary, accumulated batch by batch.

Only the counts are kept, so memory is bounded by the vocabulary and the
count tables, never by the number of documents. Tables of several workers
merge (`state`, `merge`) into the table of the whole corpus, the same for
any --jobs. The table keeps plain arrays: the record of the documents
counted is the arguments of `record.Record.build` (`record_entries`), which
`training` builds, so that counting needs nothing of the models.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from nbcli.fit.exact_sums import FIT_SCALE, doc_norms
from nbcli.fit.heldout_sample import Sample
from nbcli.nb.counts import sorted_distinct
from nbcli.text.analyzer import Analyzer, TokenBatch
from nbcli.text.sources import Document, batches
from nbcli.text.vectorize import VocabularyBuilder


class CountTable:
    """Per-class term counts (and optionally document frequencies) of a
    growing vocabulary, accumulated batch by batch; with record=True also
    the record of the documents counted (see `record_entries`) and each term's
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
        self.record_entries: tuple | None = None  # set by finish(): the arguments of `Record.build`
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
            pairs = sorted_distinct(doc_of * n + ids)  # np.unique hashes: 10x slower for a batch's pairs
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
            values = values / doc_norms(docs, values, len(cls_doc))[docs]  # the same norm, to the bit, for any --jobs
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
            column_of = np.empty(max(len(self.class_ids), 1), dtype=np.int64)
            column_of[cols] = np.arange(len(cols))
            digest, cls, message_id, when = self._record_parts()
            self.record_entries = (digest, column_of[cls], np.ones(len(cls), np.int64), message_id, when)
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

"""Documents analysed for learning and forgetting: per document its content
digest, Message-ID hash, date, label, whether it was read as mail, and its
distinct terms with their counts (`Analysed`). Analysed once, before the
model's lock is taken (`fit.learning` then decides and applies the changes
under the lock); `pipeline.analyse_to_learn` runs `analyse_batch` on workers.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from nbcli.errors import NbcliError
from nbcli.nb.counts import found_in
from nbcli.text.documents import label_problem
from nbcli.text.sources import Document, batches


class Texts(Mapping):
    """The text of each distinct term of a batch (hash -> text), each made
    from the tokens when first asked for: a learn needs the texts of the
    terms new to the model only, and an n-gram's text is a join of its
    words (the texts of all 1,000 terms of a 3-gram message cost spamd's
    TELL more than a whole CHECK). Pickled (to or from a worker) as a
    plain dict of them all."""

    def __init__(self, hashes: np.ndarray, first: np.ndarray | None = None, strings=None, made: dict | None = None):
        self._hashes, self._first, self._strings = hashes, first, strings  # hashes ascending
        self._made: dict = made if made is not None else {}

    @classmethod
    def of_dict(cls, texts: dict) -> Texts:
        return cls(np.array(sorted(texts), dtype=np.uint64), made=dict(texts))

    def of(self, hashes: list) -> list[str]:
        """The texts of `hashes` (terms of the batch), made in one call."""
        missing = [h for h in hashes if h not in self._made]
        if missing:
            pos, hit = found_in(self._hashes, np.array(missing, dtype=np.uint64))
            if not hit.all() or self._strings is None:
                raise KeyError("a term not in the batch")
            self._made.update(zip(missing, self._strings(self._first[pos])))
        return [self._made[h] for h in hashes]

    def __getitem__(self, h) -> str:
        return self._made[h] if h in self._made else self.of([h])[0]

    def __iter__(self) -> Iterator[int]:
        return iter(self._hashes.tolist())

    def __len__(self) -> int:
        return len(self._hashes)

    def __reduce__(self):
        return (Texts.of_dict, (dict(zip(self._hashes.tolist(), self.of(self._hashes.tolist()))),))


@dataclass
class Analysed:
    """Documents analysed once, before the model's lock is taken.

    Per document: its digest (n, 2), Message-ID hash, date, label, whether
    it was read as mail, an id for messages, and its distinct terms
    (pair_* arrays: the pairs of document d are doc_ptr[d]:doc_ptr[d+1]),
    with the text of each distinct term met (`texts`: hash -> text, `Texts`)."""

    digest: np.ndarray
    message_id: np.ndarray
    when: np.ndarray
    labels: list
    mail: np.ndarray
    ids: list
    doc_ptr: np.ndarray
    pair_hash: np.ndarray
    pair_count: np.ndarray
    texts: Texts

    def __len__(self) -> int:
        return len(self.labels)


def analyse_for_learning(analyzer, docs: Iterable[Document], label: str | None = None, progress=None) -> Analysed:
    """Analyse documents for learning, in this process (`pipeline.analyse_to_learn`
    does it on workers); `label` overrides the documents' own."""
    parts = []
    for batch in batches(docs):
        if batch:
            parts.append(
                analyse_batch(
                    analyzer,
                    [d.id for d in batch],
                    [d.data for d in batch],
                    [d.kind for d in batch],
                    [label if label is not None else d.label for d in batch],
                )
            )
            if progress is not None:
                progress(batch)
    return join(parts)


def analyse_batch(analyzer, ids: list, datas: list, kinds: list, labels: list, now: int | None = None) -> Analysed:
    """One batch of documents analysed for learning (see `Analysed`); a
    document without a Date gets `now` (default `identity.run_time()`)."""
    from nbcli.text.identity import document_entries
    from nbcli.text.mail import looks_like_mail

    tokens = analyzer.analyze(datas, kinds)
    digest, message_id, when = document_entries(tokens, datas, now)
    n = len(datas)
    doc_of = np.repeat(np.arange(n, dtype=np.int64), np.diff(tokens.doc_ptr))
    # one document (a TELL, a learn of one message): one stable sort of its hashes is both orders
    order = np.argsort(tokens.hashes, kind="stable") if n == 1 else np.lexsort((tokens.hashes, doc_of))
    h, d = tokens.hashes[order], doc_of[order]
    new = np.ones(len(h), dtype=bool)
    new[1:] = (h[1:] != h[:-1]) | (d[1:] != d[:-1])
    starts = np.flatnonzero(new)
    counts = np.diff(np.append(starts, len(h))).astype(np.int64)
    unique, first = (h[starts], order[starts]) if n == 1 else np.unique(tokens.hashes, return_index=True)
    texts = Texts(unique, first, tokens.strings)
    mail = [
        analyzer.options.mail
        and isinstance(data, bytes)
        and (kind == "mail" or (kind == "auto" and looks_like_mail(data)))
        for data, kind in zip(datas, kinds)
    ]
    return Analysed(
        digest,
        message_id,
        when,
        list(labels),
        np.array(mail, dtype=bool),
        list(ids),
        np.append(np.searchsorted(d[starts], np.arange(n)), len(starts)).astype(np.int64),
        h[starts],
        counts,
        texts,
    )


def join(parts: list[Analysed]) -> Analysed:
    """The batches' analyses as one, in order."""
    if not parts:
        return Analysed(
            np.zeros((0, 2), np.uint64),
            np.zeros(0, np.uint64),
            np.zeros(0, np.int64),
            [],
            np.zeros(0, bool),
            [],
            np.zeros(1, np.int64),
            np.zeros(0, np.uint64),
            np.zeros(0, np.int64),
            Texts.of_dict({}),
        )
    if len(parts) == 1:
        return parts[0]
    offsets = np.cumsum([0] + [len(p.pair_hash) for p in parts])
    texts: dict = {}
    for p in parts:
        texts.update(zip(p.texts, p.texts.of(list(p.texts))))
    return Analysed(
        np.concatenate([p.digest for p in parts]),
        np.concatenate([p.message_id for p in parts]),
        np.concatenate([p.when for p in parts]),
        [label for p in parts for label in p.labels],
        np.concatenate([p.mail for p in parts]),
        [i for p in parts for i in p.ids],
        np.append(np.concatenate([p.doc_ptr[:-1] + off for p, off in zip(parts, offsets)]), offsets[-1]),
        np.concatenate([p.pair_hash for p in parts]),
        np.concatenate([p.pair_count for p in parts]),
        Texts.of_dict(texts),
    )


def check_labels(labels) -> None:
    """NbcliError for the first of `labels` that cannot name a class
    (`label_problem`): train, learn, --new-class and table models refuse it
    before any model is written (a model with such a class is one every
    reader calls corrupt)."""
    for label in labels:
        problem = label_problem(label)
        if problem:
            raise NbcliError(
                problem, hint="class labels go into mail headers and TSV rows; rename that class (its folder or label)"
            )

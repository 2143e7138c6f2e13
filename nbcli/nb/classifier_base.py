"""What every classifier shares, text or table: the contract the commands use.

`classifier.Classifier` (documents: analyzer, vocabulary, event model) and
`table_classifier.TableClassifier` (rows: a table model) both derive from
`BaseClassifier`, so predict, eval, explain, calibrate, the model file,
dump and info treat them alike: `model` (with `classes`, `class_count`,
`log_prior`, `joint_log_likelihood` and `predict_log_proba`, see
`ScoringModel`), `meta`, a calibration map, `score` (and `log_proba`) of a batch,
`classify` of a stream, `score_labelled`, `check_ready`, `uncalibrated`
and `with_message_cap`.

Design: this module is a leaf of the package (it imports no sibling, no
`text`, no `evaluate`), so both classifiers can build on it. What needs
`text` (grouping a stream into batches: `sources.batches`) or `evaluate`
(the report of `evaluate`) stays with each classifier: `classify` asks the
class for its batches (`batches`), and each classifier's `evaluate` is its
own three lines. The table classifier used to subclass the text one and
pass None for its analyzer and vocabulary; it no longer does.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Protocol

import numpy as np


class ScoringModel(Protocol):
    """The scoring contract of an event model and a table model alike."""

    classes: list[str]
    class_count: np.ndarray
    log_prior: np.ndarray

    def joint_log_likelihood(self, X) -> np.ndarray: ...

    def predict_log_proba(self, X) -> np.ndarray: ...


class BaseClassifier:
    """model: a `ScoringModel`; meta: how it was trained; calibration: the
    `calibrators.Calibration` applied to the model's posteriors (None: raw
    posteriors)."""

    model: Any

    def __init__(self, model, meta: dict, calibration=None):
        self.model = model
        self.meta = meta
        self.calibration = calibration

    @property
    def classes(self) -> list[str]:
        return self.model.classes

    def score(self, docs: list, kinds: list[str] | None = None, explain: int = 0):
        """log P(class | document) (n, C) of a batch, or with explain > 0
        (log-posteriors, explanations)."""
        raise NotImplementedError

    def log_proba(self, docs: list, kinds: list[str] | None = None) -> np.ndarray:
        """log P(class | document), shape (len(docs), n_classes): `score`
        without explanations (the text classifier's docs are str or bytes,
        see `Analyzer.analyze` for kinds; the table classifier's are rows)."""
        return self.score(docs, kinds)

    def decision_rule(self) -> tuple[int, float] | None:
        """How a two-class model trained with `train --decide f1|balanced`
        decides (meta "decision", see `fit.deciding`): (the positive class's
        column, the threshold on its log-odds), for
        `evaluate.decision.decided`; None: the argmax (every other model,
        and every model written before --decide)."""
        decision = self.meta.get("decision")
        if not decision:
            return None
        return self.classes.index(decision["positive"]), float(decision["threshold"])

    def uncalibrated(self) -> BaseClassifier:
        """The same classifier giving the model's raw posteriors."""
        raise NotImplementedError

    def with_message_cap(self, max_message_bytes: int | None) -> BaseClassifier:
        """The same classifier analysing at most `max_message_bytes` of each
        document (None: as trained)."""
        return self

    def check_ready(self, name: str = "the model") -> None:
        """Refuse (NbcliError) a model that cannot classify yet."""
        return None

    @staticmethod
    def batches(docs: Iterable) -> Iterator[list]:
        """A stream of documents grouped into batches (empty ones say the
        input went quiet)."""
        raise NotImplementedError

    def classify(self, docs: Iterable, explain: int = 0) -> Iterator[tuple[list, Any]]:
        """(batch of documents, their `score`: log-posteriors, or with
        explain > 0 (log-posteriors, explanations)) for a stream of
        documents, in order, in this process (`parallel.classify_docs` does
        the same on several workers)."""
        for batch in self.batches(docs):
            if batch:
                yield batch, self.score([d.data for d in batch], [d.kind for d in batch], explain)

    def score_labelled(self, docs: Iterable, progress=None, scored=None) -> tuple[list[str], np.ndarray]:
        """(true labels, log-posteriors (n_docs, n_classes)) of labelled
        documents, scored here, or taken from `scored` ((batch, log-posteriors)
        pairs, as `parallel.classify_docs` gives them from workers)."""
        true_labels: list[str] = []
        parts: list[np.ndarray] = []
        for batch, log_proba in self.classify(docs) if scored is None else scored:
            true_labels.extend(doc.label for doc in batch)
            parts.append(log_proba)
            if progress is not None:
                progress(batch)
        log_proba = np.vstack(parts) if parts else np.zeros((0, len(self.classes)))
        return true_labels, log_proba

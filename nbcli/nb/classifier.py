"""A trained classifier: analyzer options + vocabulary + event model.

`Classifier` is what `nbcli train` produces and the model file stores; it
classifies a stream of documents batch by batch, so results come out while
later documents are still being read.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from nbcli.nb.event_models import EventModel
from nbcli.nb.scoring import TextScoring
from nbcli.text.analyzer import Analyzer, AnalyzerOptions
from nbcli.text.sources import batches
from nbcli.text.vectorize import SparseCounts, Vocabulary, known_counts

if TYPE_CHECKING:
    from nbcli.nb.counts import Counts


class Classifier(TextScoring):
    """analyzer_options: how text becomes terms; vocabulary: term -> column;
    model: the event model over those columns; meta: how it was trained;
    record: the documents its counts hold (`record.Record`, None: not kept);
    last_seen: (V,) int32, the day (since 1970-01-01) each term was last
    seen in a learned document (None: not kept); calibration: the
    `calibrators.Calibration` applied to the event model's posteriors
    (None: raw posteriors). The stream methods (`classify`,
    `score_labelled`) are `BaseClassifier`'s."""

    model: EventModel
    batches = staticmethod(batches)

    def __init__(
        self,
        analyzer_options: AnalyzerOptions,
        vocabulary: Vocabulary,
        model: EventModel,
        meta: dict,
        record=None,
        last_seen=None,
        calibration=None,
    ):
        super().__init__(model, meta, calibration)
        self.analyzer_options = analyzer_options
        self.vocabulary = vocabulary
        self.record = record
        self.last_seen = last_seen
        # a model trained by EM: the unlabelled documents' expected counts ((C, V), (C,)), kept apart from
        # the learned documents' (see `counts.Counts`); its event model is fitted to their sum
        self.expected: tuple[np.ndarray, np.ndarray] | None = None
        self._analyzer: Analyzer | None = None

    def with_message_cap(self, max_message_bytes: int | None) -> Classifier:
        """The same classifier analysing at most `max_message_bytes` of each
        message (None: as trained). Lowering it bounds the work per message
        and ignores the tail of longer messages, as training ignored theirs."""
        if max_message_bytes is None:
            return self
        options = dataclasses.replace(self.analyzer_options, max_message_bytes=max_message_bytes)
        capped = Classifier(
            options, self.vocabulary, self.model, self.meta, self.record, self.last_seen, self.calibration
        )
        capped.expected = self.expected
        return capped

    def uncalibrated(self) -> Classifier:
        """The same classifier giving the event model's raw posteriors."""
        if self.calibration is None:
            return self
        raw = Classifier(self.analyzer_options, self.vocabulary, self.model, self.meta, self.record, self.last_seen)
        raw.expected = self.expected
        return raw

    @property
    def analyzer(self) -> Analyzer:
        if self._analyzer is None:
            self._analyzer = Analyzer(self.analyzer_options)
        return self._analyzer

    def counts(self, docs: list, kinds: list[str] | None = None) -> SparseCounts:
        """CSR counts (token-occurrence form) of documents' data on the vocabulary."""
        batch = self.analyzer.analyze(docs, kinds)
        return known_counts(batch, self.vocabulary.lookup(batch.hashes), len(self.vocabulary))

    def scoring(self, docs: list, kinds: list[str] | None = None):
        """(counts X of the documents, the event model and the vocabulary
        that score them): the model's own, over its whole vocabulary; a
        model read through its journal (`nb.overlay.JournalView`) derives
        a model over the documents' terms alone."""
        return self.counts(docs, kinds), self.model, self.vocabulary


class ComponentClassifier(Classifier):
    """A model of several mixture components per class (Nigam et al. §5):
    its event model's "classes" are the components (CLASS~01, CLASS~02,
    ...; `meta["components"]` names each one's class), and it answers for
    the classes, P(c | x) = sum of its components' posteriors. It is saved
    as the component-level model and wrapped again when loaded
    (`wrap_components`, which `store.modelfile.load` calls)."""

    def __init__(self, inner: Classifier):
        super().__init__(
            inner.analyzer_options,
            inner.vocabulary,
            inner.model,
            inner.meta,
            inner.record,
            inner.last_seen,
            inner.calibration,
        )
        spec = inner.meta["components"]
        self._classes = list(spec["classes"])
        self._of = np.asarray(spec["of"], dtype=np.int64)

    @property
    def classes(self) -> list[str]:
        return self._classes

    def check_ready(self, name: str = "the model") -> None:
        return None

    def uncalibrated(self):
        return self

    def score(self, docs: list, kinds: list[str] | None = None, explain: int = 0):
        """Class log-posteriors: each class's components' log-posteriors
        added in log space; explanations are of the components'."""
        X = self.counts(docs, kinds)
        per_component = self.model.predict_log_proba(X)
        log_proba = np.full((per_component.shape[0], len(self._classes)), -np.inf)
        for c in range(len(self._classes)):
            log_proba[:, c] = np.logaddexp.reduce(per_component[:, self._of == c], axis=1)
        return (log_proba, self._explanations(X, explain, self.model, self.vocabulary)) if explain else log_proba


def wrap_components(classifier):
    """A loaded model of mixture components, as its classes' classifier."""
    spec = classifier.meta.get("components")
    if not isinstance(spec, dict):
        return classifier
    classes, of = spec.get("classes"), spec.get("of")
    ok = (
        isinstance(classes, list)
        and len(classes) >= 2
        and all(isinstance(c, str) for c in classes)
        and isinstance(of, list)
        and len(of) == len(classifier.model.classes)
        and all(type(i) is int and 0 <= i < len(classes) for i in of)
        and set(of) == set(range(len(classes)))
    )
    if not ok:
        from nbcli.errors import NbcliError

        raise NbcliError("the model's mixture components are damaged", hint="train it again")
    return ComponentClassifier(classifier)


def classifier_of(counts: Counts, kind: str, settings: dict, idf: bool, analyzer_options, meta: dict) -> Classifier:
    """A Classifier of `counts` with event model `kind` and its `settings`
    (EventModel keyword arguments without doc_freq, fit_count and idf;
    idf: complement's idf, derived from the document frequencies)."""
    from nbcli.errors import ParameterError
    from nbcli.nb.event_models import build_event_model

    prior = settings["prior"]
    if isinstance(prior, dict) and sorted(prior) != sorted(counts.classes):
        new = sorted(set(counts.classes) - set(prior))
        raise ParameterError(
            "prior",
            "the model's {prior} gives weights for {weighted} only, so it cannot learn class {new}",
            hint="learn into one of its classes, or train it again with a prior for every class",
            weighted=", ".join(sorted(prior)),
            new=", ".join(new),
        )
    complement = kind == "complement"
    tf, df, class_count = counts.tf, counts.df, counts.class_count
    if counts.expected_tf is not None:  # an EM model: the learned documents' counts plus the expected ones
        tf = tf + counts.expected_tf
        class_count = class_count + counts.expected_docs
        if df is not None:
            df = np.minimum(df + counts.expected_tf, class_count[:, None])
    built = build_event_model(
        kind,
        counts.classes,
        class_count,
        tf,
        doc_freq=df,
        idf=complement and bool(idf),
        fit_count=counts.fit if complement else None,
        **settings,
    )
    vocab = Vocabulary(counts.hashes, counts.blob, counts.offsets)
    classifier = Classifier(analyzer_options, vocab, built, meta, counts.record, counts.last_seen)
    if counts.expected_tf is not None and counts.expected_docs is not None:  # an EM model has both
        classifier.expected = (counts.expected_tf, counts.expected_docs)
    return classifier


def classifier_like(counts: Counts, template, meta: dict) -> Classifier:
    """The Classifier of `counts` with the analyzer and event-model settings
    of `template` (a Classifier) and `meta`: what learning rebuilds
    (`fit.learning.rebuild`) and what a model's journal is replayed into
    (`store.modelfile.load`)."""
    model = template.model
    settings = model.settings()
    for key in ("doc_freq", "fit_count", "idf"):
        settings.pop(key, None)
    idf = model.kind == "complement" and model.idf is not None
    return classifier_of(counts, model.kind, settings, idf, template.analyzer_options, meta)

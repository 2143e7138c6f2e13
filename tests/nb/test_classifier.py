"""The text classifier (`nb.classifier`): analysis and scoring of a batch,
streams, calibration, the message cap, readiness and mixture components."""

from __future__ import annotations

import numpy as np
import pytest

from nbcli.errors import NbcliError
from nbcli.evaluate.report import report
from nbcli.fit.training import TrainOptions, train
from nbcli.nb.calibrators import Calibration
from nbcli.nb.classifier import Classifier, ComponentClassifier, wrap_components
from nbcli.nb.event_models import MultinomialNB
from nbcli.text.analyzer import AnalyzerOptions
from nbcli.text.sources import Document

TEXTS = ["dog cat dog", "cat dog", "tulip rose", "rose rose tulip"]
LABELS = ["animal", "animal", "flower", "flower"]


@pytest.fixture(scope="module")
def clf() -> Classifier:
    docs = [Document(str(i), lab, t) for i, (t, lab) in enumerate(zip(TEXTS, LABELS))]
    return train(docs, AnalyzerOptions(), TrainOptions())


def test_counts_and_scores_of_a_batch(clf):
    X = clf.counts(["dog dog zebra", "rose"])
    assert X.shape == (2, len(clf.vocabulary)) and X.unknown.tolist() == [1, 0]
    log_proba = clf.log_proba(["dog dog zebra", "rose"])
    assert log_proba.argmax(axis=1).tolist() == [0, 1]
    assert np.allclose(np.exp(log_proba).sum(axis=1), 1.0)
    scores, explained = clf.score(["dog dog zebra"], explain=1)
    assert np.array_equal(scores, log_proba[:1])
    assert explained[0]["versus"] == "flower" and explained[0]["terms"][0]["term"] == "dog"
    assert explained[0]["unit"] == "log-odds" and explained[0]["unknown"]["count"] == 1


def test_a_stream_scores_as_its_batches_and_evaluates(clf):
    docs = [Document(f"d{i}", lab, t) for i, (t, lab) in enumerate(zip(TEXTS * 3, LABELS * 3))]
    labels, log_proba = clf.score_labelled(iter(docs))
    assert labels == LABELS * 3 and np.array_equal(log_proba, clf.log_proba(TEXTS * 3))
    batches = list(clf.classify(iter(docs)))
    assert [d.id for batch, _ in batches for d in batch] == [d.id for d in docs]
    assert report(*clf.score_labelled(iter(docs)), clf.classes)["accuracy"] == 1.0


def test_calibration_and_the_message_cap_are_views_of_the_same_model(clf):
    identity = Calibration("temperature", 2, {"temperature": np.array([2.0])}, 4)
    calibrated = Classifier(clf.analyzer_options, clf.vocabulary, clf.model, clf.meta, calibration=identity)
    raw = calibrated.uncalibrated()
    assert raw.calibration is None and raw.model is clf.model and clf.uncalibrated() is clf
    assert not np.allclose(calibrated.log_proba(["dog"]), raw.log_proba(["dog"]))
    assert calibrated.score(["dog"], explain=1)[1][0]["unit"] == "raw log-odds, before calibration"
    assert clf.with_message_cap(None) is clf
    capped = clf.with_message_cap(5)
    assert capped.analyzer_options.max_message_bytes == 5 and capped.model is clf.model


def test_a_model_without_documents_of_a_class_is_not_ready(clf):
    model = MultinomialNB(clf.classes, [2, 0], np.ones((2, len(clf.vocabulary))))
    empty = Classifier(clf.analyzer_options, clf.vocabulary, model, {})
    with pytest.raises(NbcliError, match="has no documents of class flower yet"):
        empty.check_ready("m.nb")
    clf.check_ready()


def test_mixture_components_answer_for_their_classes(clf):
    model = MultinomialNB(["a~01", "a~02", "b~01"], [1, 1, 2], np.arange(3 * len(clf.vocabulary)).reshape(3, -1) + 1)
    meta = {"components": {"classes": ["a", "b"], "of": [0, 0, 1]}}
    wrapped = wrap_components(Classifier(clf.analyzer_options, clf.vocabulary, model, meta))
    assert isinstance(wrapped, ComponentClassifier) and wrapped.classes == ["a", "b"]
    per_component = np.exp(model.predict_log_proba(wrapped.counts(["dog rose"])))
    assert np.exp(wrapped.log_proba(["dog rose"]))[0] == pytest.approx(
        [per_component[0, :2].sum(), per_component[0, 2]]
    )
    assert wrap_components(clf) is clf
    damaged = {"components": {"classes": ["a", "b"], "of": [0, 0, 2]}}
    with pytest.raises(NbcliError, match="mixture components are damaged"):
        wrap_components(Classifier(clf.analyzer_options, clf.vocabulary, model, damaged))

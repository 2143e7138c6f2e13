"""The contract every classifier shares (`nb.classifier_base`): a stream
scored batch by batch, labelled documents gathered, and both the text and
the table classifier built on it."""

from __future__ import annotations

import numpy as np
import pytest

from nbcli.nb.classifier import Classifier
from nbcli.nb.classifier_base import BaseClassifier
from nbcli.nb.table_classifier import TableClassifier
from nbcli.text.sources import Document


class _Lengths(BaseClassifier):
    """Scores a document by its length: class "long" above 3 characters."""

    @staticmethod
    def batches(docs):
        batch = []
        for doc in docs:
            batch.append(doc)
            if len(batch) == 2:
                yield batch
                batch = []
        yield []  # an empty batch (the input went quiet) is passed over
        if batch:
            yield batch

    def score(self, docs, kinds=None, explain=0):
        long = np.array([len(d) > 3 for d in docs])
        log_proba = np.log(np.where(long[:, None], [0.1, 0.9], [0.9, 0.1]))
        return (log_proba, [{"n": len(d)} for d in docs]) if explain else log_proba


class _Model:
    classes = ["short", "long"]


def _docs():
    return [
        Document(f"d{i}", label, text)
        for i, (label, text) in enumerate([("short", "ab"), ("long", "abcdef"), ("long", "a")])
    ]


def test_a_stream_is_scored_batch_by_batch_in_order():
    clf = _Lengths(_Model(), {"n_documents": 3})
    assert clf.classes == ["short", "long"] and clf.calibration is None
    got = list(clf.classify(iter(_docs()), explain=1))
    assert [[d.id for d in batch] for batch, _ in got] == [["d0", "d1"], ["d2"]]
    assert got[0][1][1] == [{"n": 2}, {"n": 6}]
    assert np.exp(clf.log_proba(["abcd"]))[0] == pytest.approx([0.1, 0.9])


def test_labelled_documents_give_their_labels_and_log_posteriors():
    clf = _Lengths(_Model(), {})
    seen = []
    labels, log_proba = clf.score_labelled(iter(_docs()), progress=seen.append)
    assert labels == ["short", "long", "long"]
    assert log_proba.argmax(axis=1).tolist() == [0, 1, 0]
    assert [len(batch) for batch in seen] == [2, 1]
    scored = [(_docs()[:1], np.log([[0.5, 0.5]]))]  # as workers hand them back
    labels, log_proba = clf.score_labelled([], scored=scored)
    assert labels == ["short"] and log_proba.shape == (1, 2)
    assert clf.score_labelled([])[1].shape == (0, 2)


def test_the_defaults_and_both_classifiers():
    clf = _Lengths(_Model(), {})
    clf.check_ready()
    assert clf.with_message_cap(10) is clf
    assert issubclass(Classifier, BaseClassifier) and issubclass(TableClassifier, BaseClassifier)
    assert not issubclass(TableClassifier, Classifier)  # no analyzer, no vocabulary handed None
    assert not hasattr(TableClassifier(None, {}), "vocabulary")

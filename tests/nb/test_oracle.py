"""End to end through the CLI: nbcli's probabilities against scikit-learn's.

Given the same tokens (--token-pattern), the same alpha and fitted priors,
`nbcli predict --json` must agree with CountVectorizer + MultinomialNB's
predict_proba to 1e-9 on a multi-class corpus of thousands of documents.
"""

import json

import numpy as np
import pytest
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.naive_bayes import MultinomialNB

from conftest import SAMPLES, make_docs, run

PATTERN = r"(?u)\b\w\w+\b"


def _predict_json(model, path):
    result = run(["predict", model, path, "--json"])
    assert result.exit_code == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def _sklearn(train_texts, train_labels, test_texts, alpha, **cv):
    vec = CountVectorizer(lowercase=True, token_pattern=PATTERN, **cv)
    nb = MultinomialNB(alpha=alpha).fit(vec.fit_transform(train_texts), train_labels)
    return list(nb.classes_), nb.predict_proba(vec.transform(test_texts))


@pytest.mark.parametrize(
    "alpha, extra", [("1", []), ("0.01", []), ("1", ["--token-pattern", PATTERN]), ("0.5", ["--ngrams", "2"])]
)
def test_cli_probabilities_agree_with_scikit_learn(tmp_path, make_class_folders, make_jsonl, alpha, extra):
    train_texts, train_labels = make_docs(4000, seed=31)
    test_texts, _ = make_docs(1000, seed=32)
    corpus = make_class_folders(train_texts, train_labels)
    model = tmp_path / "m.nb"
    result = run(["train", corpus, "-o", model, "--alpha", alpha, "-q", "--calibrate", "none", *extra])
    assert result.exit_code == 0, result.stderr
    records = _predict_json(model, make_jsonl(test_texts))
    ngram_range = (1, 2) if "--ngrams" in extra else (1, 1)
    classes, expected = _sklearn(train_texts, train_labels, test_texts, float(alpha), ngram_range=ngram_range)
    got = np.array([[r["probabilities"][c] for c in classes] for r in records])
    assert got.shape == (1000, 4)
    assert np.abs(got - expected).max() < 1e-9
    assert [r["label"] for r in records] == [classes[i] for i in expected.argmax(axis=1)]


def test_on_the_bundled_topics_corpus(tmp_path):
    train_path, test_path = SAMPLES / "topics" / "train.jsonl", SAMPLES / "topics" / "test.jsonl"
    model = tmp_path / "topics.nb"
    assert (
        run(["train", train_path, "-o", model, "-q", "--token-pattern", PATTERN, "--calibrate", "none"]).exit_code == 0
    )
    train = [json.loads(line) for line in train_path.read_text(encoding="utf-8").splitlines()]
    test = [json.loads(line) for line in test_path.read_text(encoding="utf-8").splitlines()]
    records = _predict_json(model, test_path)
    classes, expected = _sklearn(
        [r["text"] for r in train], [r["label"] for r in train], [r["text"] for r in test], 1.0
    )
    got = np.array([[r["probabilities"][c] for c in classes] for r in records])
    assert np.abs(got - expected).max() < 1e-9

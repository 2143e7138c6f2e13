"""`nbcli eval`: the report, as tables and as JSON, checked against scikit-learn."""

import json

import numpy as np
import pytest
from sklearn import metrics as skm

from nbcli import modelfile
from nbcli.metrics import classification_report

from conftest import make_docs, run


@pytest.fixture
def topic_model(tmp_path, make_class_folders):
    texts, labels = make_docs(800, seed=21)
    model = tmp_path / "t.nb"
    assert run(["train", make_class_folders(texts, labels, name="train"), "-o", model, "-q"]).exit_code == 0
    test_texts, test_labels = make_docs(300, seed=22)
    return model, make_class_folders(test_texts, test_labels, name="test"), test_texts, test_labels


def test_json_report_agrees_with_scikit_learn(topic_model):
    model, test_dir, texts, labels = topic_model
    result = run(["eval", model, test_dir, "--json"])
    assert result.exit_code == 0 and result.stderr == ""
    report = json.loads(result.stdout)
    clf = modelfile.load(str(model))
    proba = np.exp(clf.log_proba(texts))
    pred = [clf.classes[i] for i in proba.argmax(axis=1)]
    assert report["documents"] == 300
    assert report["accuracy"] == pytest.approx(skm.accuracy_score(labels, pred))
    assert report["log_loss"] == pytest.approx(skm.log_loss(labels, proba, labels=clf.classes))
    p, r, f, s = skm.precision_recall_fscore_support(labels, pred, labels=clf.classes, zero_division=0)
    for i, row in enumerate(report["classes"]):
        assert row["class"] == clf.classes[i]
        assert (row["precision"], row["recall"], row["f1"], row["support"]) == pytest.approx((p[i], r[i], f[i], s[i]))
    for avg in ("macro", "weighted"):
        p, r, f, _ = skm.precision_recall_fscore_support(labels, pred, average=avg, zero_division=0)
        got = report[f"{avg}_avg"]
        assert (got["precision"], got["recall"], got["f1"]) == pytest.approx((p, r, f))
    assert report["confusion_matrix"]["labels"] == clf.classes
    assert report["confusion_matrix"]["matrix"] == skm.confusion_matrix(labels, pred, labels=clf.classes).tolist()
    assert 0.6 < report["accuracy"] < 1.0  # the corpus is neither trivial nor noise


def test_table_report_for_people(topic_model):
    model, test_dir, _, _ = topic_model
    result = run(["eval", model, test_dir])
    assert result.exit_code == 0
    out = result.stdout
    assert out.startswith(f"{model}: 300 documents, accuracy 0.")
    for word in ["precision", "recall", "f1", "support", "macro avg", "weighted avg", "confusion matrix", "space", "sport"]:
        assert word in out


def test_metrics_with_classes_the_model_does_not_know():
    report = classification_report(["a", "b", "zz", "a"], ["a", "a", "b", "a"], ["a", "b"], np.log([0.9, 0.4, np.nan, 0.8]))
    assert report["confusion_matrix"]["labels"] == ["a", "b", "zz"]
    assert report["unknown_classes"] == ["zz"]
    assert report["accuracy"] == 0.5
    assert report["log_loss"] == pytest.approx(-np.mean(np.log([0.9, 0.4, 0.8])))
    sk = skm.precision_recall_fscore_support(["a", "b", "zz", "a"], ["a", "a", "b", "a"], average="macro", zero_division=0)
    assert report["macro_avg"]["f1"] == pytest.approx(sk[2])


def test_eval_errors(tmp_path, topic_model):
    model, test_dir, _, _ = topic_model
    result = run(["eval", model])
    assert result.exit_code == 2 and result.stderr == "nbcli: error: give a CORPUS or at least one --label CLASS=PATH (see 'nbcli eval --help')\n"
    (tmp_path / "none" / "x").mkdir(parents=True)
    result = run(["eval", model, tmp_path / "none"])
    assert result.exit_code == 1 and result.stderr == "nbcli: error: the evaluation corpus has no documents; check the paths\n"


def test_eval_with_label_pairs(tmp_path, topic_model):
    model, test_dir, _, _ = topic_model
    result = run(["eval", model, "--label", f"food={test_dir / 'food'}", "--json"])
    report = json.loads(result.stdout)
    assert report["documents"] == 75 and report["classes"][[r["class"] for r in report["classes"]].index("food")]["support"] == 75

"""`nbcli eval`: the report, as tables and as JSON, checked against scikit-learn."""

import json

import numpy as np
import pytest
from sklearn import metrics as skm

from nbcli.defaults import DEFAULT_HAM_CUTOFF, DEFAULT_SPAM_CUTOFF
from nbcli.evaluate.metrics import classification_report
from nbcli.store import modelfile

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
    for word in [
        "precision",
        "recall",
        "f1",
        "support",
        "macro avg",
        "weighted avg",
        "confusion matrix",
        "space",
        "sport",
    ]:
        assert word in out


def test_metrics_with_classes_the_model_does_not_know():
    report = classification_report(
        ["a", "b", "zz", "a"], ["a", "a", "b", "a"], ["a", "b"], np.log([0.9, 0.4, np.nan, 0.8])
    )
    assert report["confusion_matrix"]["labels"] == ["a", "b", "zz"]
    assert report["unknown_classes"] == ["zz"]
    assert report["accuracy"] == 0.5
    assert report["log_loss"] == pytest.approx(-np.mean(np.log([0.9, 0.4, 0.8])))
    sk = skm.precision_recall_fscore_support(
        ["a", "b", "zz", "a"], ["a", "a", "b", "a"], average="macro", zero_division=0
    )
    assert report["macro_avg"]["f1"] == pytest.approx(sk[2])


def test_eval_errors(tmp_path, topic_model):
    model, test_dir, _, _ = topic_model
    result = run(["eval", model])
    assert (
        result.exit_code == 2
        and result.stderr
        == "nbcli: error: give a CORPUS or at least one --label CLASS=PATH (see 'nbcli eval --help')\n"
    )
    (tmp_path / "none" / "x").mkdir(parents=True)
    result = run(["eval", model, tmp_path / "none"])
    assert (
        result.exit_code == 1
        and result.stderr == "nbcli: error: the evaluation corpus has no documents; check the paths\n"
    )


def test_eval_with_label_pairs(tmp_path, topic_model):
    model, test_dir, _, _ = topic_model
    result = run(["eval", model, "--label", f"food={test_dir / 'food'}", "--json"])
    report = json.loads(result.stdout)
    assert (
        report["documents"] == 75
        and report["classes"][[r["class"] for r in report["classes"]].index("food")]["support"] == 75
    )


@pytest.fixture(scope="module")
def mail_model(tmp_path_factory):
    from conftest import SAMPLES

    model = tmp_path_factory.mktemp("mail") / "mail.nb"
    assert run(["train", SAMPLES / "mail" / "train", "-o", model, "-q"]).exit_code == 0
    return model, SAMPLES / "mail" / "test"


def test_spam_filter_metrics_agree_with_scikit_learn(mail_model):
    model, test_dir = mail_model
    result = run(["eval", model, test_dir, "--json", "--target-fpr", "0.01"])
    sf = json.loads(result.stdout)["spam_filter"]
    clf = modelfile.load(str(model))
    from nbcli.text.sources import ReadOptions, labeled_corpus

    labels, log_proba = clf.score_labelled(labeled_corpus([str(test_dir)], [], ReadOptions()))
    s = clf.classes.index("spam")
    is_spam = np.array(labels) == "spam"
    log_odds = log_proba[:, s] - log_proba[:, 1 - s]
    assert sf["auc"] == pytest.approx(skm.roc_auc_score(is_spam, log_odds))
    p = np.exp(log_proba[:, s])
    high, low = DEFAULT_SPAM_CUTOFF, DEFAULT_HAM_CUTOFF
    assert sf["ham_fpr"] == pytest.approx(((p >= high) & ~is_spam).sum() / (~is_spam).sum())
    assert sf["spam_recall"] == pytest.approx(((p >= high) & is_spam).sum() / is_spam.sum())
    decided = (p >= high) | (p <= low)
    assert sf["decided_accuracy"] == pytest.approx(((p >= high) == is_spam)[decided].mean())
    target = sf["target_fpr"]
    assert target["ham_fpr"] <= 0.01
    assert target["spam_recall"] == pytest.approx((log_odds[is_spam] > target["log_odds_cutoff"]).mean())
    text = run(["eval", model, test_dir, "--target-fpr", "0.01"]).stdout
    assert (
        "spam filter (spam against ham): ROC AUC 0.9" in text
        and "for ham false-positive rate <= 0.01: spam when log-odds >" in text
    )


def test_eval_on_documents_of_no_class_of_the_model_is_an_error(tmp_path, mail_model):
    model, _ = mail_model
    for name, text in (("politics", "the vote and the election"), ("sports", "a goal in the match")):
        (tmp_path / "news" / name).mkdir(parents=True)
        (tmp_path / "news" / name / "1.txt").write_text(text)
    result = run(["eval", model, tmp_path / "news"])
    assert result.exit_code == 1 and result.stdout == "" and result.stderr.count("\n") == 1
    assert "no document's label is a class of the model: the documents are labelled politics, sports" in (result.stderr)
    assert "the classes are ham, spam" in result.stderr
    predictions = run(["predict", model, tmp_path / "news", "--json"]).stdout
    truth = tmp_path / "truth.tsv"
    truth.write_text(
        "".join(
            f"{json.loads(line)['id']}\t{json.loads(line)['id'].split('/')[-2]}\n" for line in predictions.splitlines()
        )
    )
    result = run(["eval", "--predictions", "-", "--truth", truth], input=predictions)
    assert result.exit_code == 1 and "no document's label is a class of the model" in result.stderr


def test_metrics_of_a_class_without_documents_are_dashes_not_zeros(mail_model):
    """Only ham: the spam class has no documents, so its recall and F1 and
    the spam recall are undefined (as the AUC is); its precision is 0 (the
    model called some ham spam)."""
    model, test_dir = mail_model
    ham_only = ["--label", f"ham={test_dir / 'ham'}"]
    result = run(["eval", model, *ham_only, "--target-fpr", "0.01"])
    assert result.exit_code == 0, result.stderr
    spam_row = next(line for line in result.stdout.splitlines() if line.startswith("  spam "))
    assert spam_row.split() == ["spam", "0.0000", "-", "-", "0"]
    assert "spam recall -, unsure" in result.stdout and "ham false-positive rate 0.0095, spam recall -" in result.stdout
    report = json.loads(run(["eval", model, *ham_only, "--json", "--target-fpr", "0.01"]).stdout)
    spam = next(row for row in report["classes"] if row["class"] == "spam")
    assert (spam["precision"], spam["recall"], spam["f1"], spam["support"]) == (0.0, None, None, 0)
    assert report["spam_filter"]["spam_recall"] is None and report["spam_filter"]["target_fpr"]["spam_recall"] is None
    assert report["spam_filter"]["ham_fpr"] == 0.0
    result = run(["eval", model, *ham_only, "--fail-under", "spam_recall=0.5"])
    assert result.exit_code == 1 and "this evaluation does not report spam_recall" in result.stderr


def test_fail_under_and_over_exit_codes(mail_model):
    model, test_dir = mail_model
    ok = run(["eval", model, test_dir, "--json", "--fail-under", "accuracy=0.5", "--fail-over", "ham_fpr=0.5"])
    assert ok.exit_code == 0 and json.loads(ok.stdout)["accuracy"] > 0.5
    bad = run(["eval", model, test_dir, "--json", "--fail-under", "accuracy=0.999"])
    assert bad.exit_code == 1 and json.loads(bad.stdout)  # the report is still written
    assert bad.stderr.startswith("nbcli: error: accuracy 0.98") and bad.stderr.endswith(
        " is under 0.999 (--fail-under accuracy=0.999)\n"
    )
    bad = run(["eval", model, test_dir, "-q", "--fail-over", "unsure=0.01"])
    assert bad.exit_code == 1 and bad.stderr.count("\n") == 1
    assert "is over 0.01 (--fail-over unsure=0.01)" in bad.stderr
    usage = run(["eval", model, test_dir, "--fail-under", "accuracy"])
    assert usage.exit_code == 2 and "'accuracy' is not METRIC=VALUE" in usage.stderr and usage.stderr.count("\n") == 1
    usage = run(["eval", model, test_dir, "--fail-under", "nope=1"])
    assert usage.exit_code == 2 and "'nope' is not a metric" in usage.stderr
    missing = run(["eval", model, test_dir, "--fail-under", "target_spam_recall=0.5"])
    assert missing.exit_code == 1 and "does not report target_spam_recall" in missing.stderr
    usage = run(["eval", model, test_dir, "--ham-cutoff", "0.9", "--spam-cutoff", "0.5"])
    assert usage.exit_code == 2 and "--ham-cutoff 0.9 is above --spam-cutoff 0.5" in usage.stderr


def _without_model(text):
    report = json.loads(text)
    report.pop("model")
    return report


@pytest.mark.parametrize("which", ["mail", "topics"])
def test_predictions_give_the_same_report_as_the_model(which, mail_model, topic_model):
    model, test_dir = mail_model if which == "mail" else topic_model[:2]
    direct = run(["eval", model, test_dir, "--json", "--target-fpr", "0.01"])
    lines = run(["predict", model, test_dir, "--json"]).stdout
    piped = run(["eval", "--predictions", "-", "--json", "--target-fpr", "0.01"], input=lines)
    assert piped.exit_code == 0, piped.stderr
    assert _without_model(piped.stdout) == _without_model(direct.stdout)
    assert json.loads(piped.stdout)["model"] is None
    text = run(["eval", "--predictions", "-"], input=lines).stdout
    assert text.startswith("predictions: ")


def test_predictions_with_a_truth_file(tmp_path, topic_model):
    model, test_dir, _, _ = topic_model
    lines = run(["predict", model, test_dir, "--json"]).stdout
    records = [json.loads(line) for line in lines.splitlines()]
    truth = tmp_path / "truth.tsv"
    # ids moved out of their class folders: the truth file names the classes
    truth.write_text("".join(f"doc{i}\t{r['id'].split('/')[-2]}\n" for i, r in enumerate(records)))
    moved = "".join(json.dumps({**r, "id": f"doc{i}"}) + "\n" for i, r in enumerate(records))
    pred_file = tmp_path / "pred.jsonl"
    pred_file.write_text(moved)
    got = run(["eval", "--predictions", pred_file, "--truth", truth, "--json"])
    assert _without_model(got.stdout) == _without_model(run(["eval", model, test_dir, "--json"]).stdout)
    bad = run(["eval", "--predictions", "-"], input=moved)
    assert bad.exit_code == 1 and bad.stderr == (
        "nbcli: error: stdin:1: the true class of 'doc0' is unknown: the id has no folder named after a class; "
        "give --truth FILE with id<TAB>label lines\n"
    )


@pytest.mark.parametrize(
    "args, stdin, code, message",
    [
        (
            ["--predictions", "-"],
            "a\tb\t0.5\n",
            1,
            "nbcli: error: stdin:1: not a prediction line; give the output of 'nbcli predict --json'",
        ),
        (
            ["--predictions", "-"],
            "",
            1,
            "nbcli: error: stdin: no prediction lines; give the output of 'nbcli predict --json'",
        ),
        (
            ["--predictions", "-"],
            '{"id": "a/x", "probabilities": {"a": 1, "b": 0}}\n{"id": "b/y", "probabilities": {"a": 1}}\n',
            1,
            "nbcli: error: stdin:2: its classes differ from the first line's (a, b)",
        ),
        (["--predictions", "nowhere.jsonl"], None, 1, "nbcli: error: nowhere.jsonl: no such file; check the path"),
        (["--predictions", "tests"], None, 1, "nbcli: error: tests: a folder, not a file"),
        (
            ["--predictions", "-", "--truth", "nowhere.tsv"],
            "",
            1,
            "nbcli: error: nowhere.tsv: no such file; check the path",
        ),
        (
            ["--predictions", "-", "--truth", "pyproject.toml"],
            "",
            1,
            "nbcli: error: pyproject.toml:1: not id<TAB>label; the truth file has one id<TAB>label line per document",
        ),
        (
            ["--predictions", "-"],
            '{"id": "a/x", "probabilities": {"a": "x", "b": 0.5}}\n',
            1,
            "nbcli: error: stdin:1: probabilities must be numbers",
        ),
        (
            ["--predictions", "-"],
            '{"id": "a/x", "probabilities": {"a": -1, "b": 0.5}}\n',
            1,
            "nbcli: error: stdin:1: probabilities must lie between 0 and 1, not all 0",
        ),
        (
            ["--predictions", "-"],
            '{"id": "a/x", "probabilities": {"a": 0, "b": 0}}\n',
            1,
            "nbcli: error: stdin:1: probabilities must lie between 0 and 1, not all 0",
        ),
        (
            ["--predictions", "-"],
            '{"id": "a/x", "probabilities": {"a": 0.5, "b": 0.5}, "log_probabilities": {"a": NaN, "b": 0}}\n',
            1,
            "nbcli: error: stdin:1: probabilities must lie between 0 and 1, not all 0",
        ),
        (
            ["x.nb", "--predictions", "-"],
            "",
            2,
            (
                "nbcli: error: --predictions takes no MODEL, CORPUS or --label: the predictions hold the model's "
                "output (see 'nbcli eval --help')"
            ),
        ),
        (
            ["--truth", "t.tsv", "x.nb", "c"],
            None,
            2,
            "nbcli: error: --truth goes with --predictions (see 'nbcli eval --help')",
        ),
        ([], None, 2, "nbcli: error: give MODEL and CORPUS, or --predictions FILE (see 'nbcli eval --help')"),
    ],
)
def test_predictions_errors(args, stdin, code, message):
    result = run(["eval", *args], input=stdin)
    assert result.exit_code == code and result.stderr == message + "\n"

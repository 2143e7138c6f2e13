"""`nbcli eval --clusters`: a model's classes measured as a clustering of
labelled documents, through the command, on the sample topics; the
figures themselves are checked in tests/evaluate/test_clustering.py."""

from __future__ import annotations

import json

import pytest
from sklearn import metrics as skm

from conftest import REPO, one_line_error, run

TOPICS = REPO / "sample_corpora" / "topics"
TEST = TOPICS / "test.jsonl"


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("evalclusters")
    clusters, classifier = folder / "clusters.nb", folder / "topics.nb"
    result = run(["cluster", TOPICS / "train.jsonl", "-k", "4", "--restarts", "2", "-o", clusters, "-q"])
    assert result.exit_code == 0, result.stderr
    assert run(["train", TOPICS / "train.jsonl", "-o", classifier, "-q"]).exit_code == 0
    return {"clusters": clusters, "classifier": classifier}


def _labels() -> dict[str, str]:
    rows = [json.loads(line) for line in TEST.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {r["id"]: r["label"] for r in rows}


def _predicted(model) -> tuple[list[str], list[str]]:
    """(labels, predicted classes) of the test documents by `predict --json`."""
    result = run(["predict", model, TEST, "--json"])
    assert result.exit_code == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    truth = _labels()
    return [truth[p["id"]] for p in lines], [p["label"] for p in lines]


@pytest.mark.parametrize("which", ["clusters", "classifier"])
def test_figures_equal_scikit_learns_of_predict_output(models, which):
    result = run(["eval", models[which], TEST, "--clusters", "--json"])
    assert result.exit_code == 0 and result.stderr == ""
    report = json.loads(result.stdout)
    labels, predicted = _predicted(models[which])
    assert report["documents"] == len(labels) == 220
    assert report["adjusted_rand_index"] == pytest.approx(skm.adjusted_rand_score(labels, predicted), abs=1e-12)
    assert report["normalized_mutual_info"] == pytest.approx(
        skm.normalized_mutual_info_score(labels, predicted), abs=1e-12
    )
    table = skm.cluster.contingency_matrix(labels, predicted)  # rows: sorted labels, columns: sorted clusters
    assert report["purity"] == pytest.approx(table.max(axis=0).sum() / len(labels))
    assert report["contingency"]["labels"] == sorted(set(labels))
    assert report["contingency"]["clusters"] == sorted(set(predicted))
    assert report["contingency"]["matrix"] == table.tolist()
    if which == "classifier":  # a classifier's classes match the labels well
        assert report["adjusted_rand_index"] > 0.7


def test_json_schema(models):
    report = json.loads(run(["eval", models["clusters"], TEST, "--clusters", "--json"]).stdout)
    assert list(report) == [
        "model",
        "documents",
        "labels",
        "clusters",
        "adjusted_rand_index",
        "normalized_mutual_info",
        "purity",
        "contingency",
        "empty_clusters",
    ]
    assert report["model"] == str(models["clusters"])
    assert (report["labels"], report["clusters"]) == (4, len(report["contingency"]["clusters"]))
    assert list(report["contingency"]) == ["labels", "clusters", "matrix"]
    assert report["empty_clusters"] == [
        c for c in ["cluster1", "cluster2", "cluster3", "cluster4"] if c not in report["contingency"]["clusters"]
    ]
    assert sum(map(sum, report["contingency"]["matrix"])) == 220


def test_report_for_people(models):
    result = run(["eval", models["classifier"], TEST, "--clusters"])
    assert result.exit_code == 0
    report = json.loads(run(["eval", models["classifier"], TEST, "--clusters", "--json"]).stdout)
    lines = result.stdout.splitlines()
    assert lines[0] == (
        f"{models['classifier']}: 220 documents, 4 labels, 4 clusters: adjusted Rand index "
        f"{report['adjusted_rand_index']:.4f}, normalised mutual information {report['normalized_mutual_info']:.4f}, "
        f"purity {report['purity']:.4f}"
    )
    assert lines[1] == "contingency table (rows: label, columns: cluster)"
    assert lines[2].split() == ["astronomy", "cooking", "football", "programming"]
    for line, label, row in zip(lines[3:], report["contingency"]["labels"], report["contingency"]["matrix"]):
        assert line.split() == [label, *map(str, row)]
    assert len(lines) == 7


def test_predictions_with_truth(models, tmp_path):
    predictions = run(["predict", models["clusters"], TEST, "--json"]).stdout
    truth = tmp_path / "truth.tsv"
    truth.write_text("".join(f"{i}\t{label}\n" for i, label in _labels().items()))
    result = run(["eval", "--predictions", "-", "--truth", truth, "--clusters", "--json"], input=predictions)
    assert result.exit_code == 0, result.stderr
    direct = json.loads(run(["eval", models["clusters"], TEST, "--clusters", "--json"]).stdout)
    assert json.loads(result.stdout) == {**direct, "model": None}


def test_empty_clusters_are_named(tmp_path, models):
    """A model with classes no document gets: the table shows the others,
    the last line names them."""
    result = run(["eval", models["classifier"], "--label", f"astronomy={tmp_path / 'a'}", "--clusters"])
    assert result.exit_code == 1  # no such path: the corpus error, as eval's
    folder = tmp_path / "a"
    folder.mkdir()
    (folder / "1.txt").write_text("telescope galaxy planet orbit star nebula")
    (folder / "2.txt").write_text("the comet and the moon through a telescope")
    result = run(["eval", models["classifier"], "--label", f"astronomy={folder}", "--clusters", "--json"])
    report = json.loads(result.stdout)
    assert report["contingency"] == {"labels": ["astronomy"], "clusters": ["astronomy"], "matrix": [[2]]}
    assert report["empty_clusters"] == ["cooking", "football", "programming"]
    assert (report["adjusted_rand_index"], report["normalized_mutual_info"], report["purity"]) == (1.0, 1.0, 1.0)
    text = run(["eval", models["classifier"], "--label", f"astronomy={folder}", "--clusters"]).stdout
    assert text.splitlines()[-1] == "clusters no document fell in: cooking, football, programming"


@pytest.mark.parametrize(
    "extra, flag",
    [
        (["--cv", "3"], "--cv"),
        (["--online"], "--online"),
        (["--plot", "x.svg"], "--plot"),
        (["--calibration"], "--calibration"),
        (["--target-fpr", "0.01"], "--target-fpr"),
        (["--target-unsure", "0.1"], "--target-unsure"),
        (["--spam-class", "x"], "--spam-class"),
        (["--spam-cutoff", "0.9"], "--spam-cutoff"),
        (["--fail-under", "accuracy=0.5"], "--fail-under"),
        (["--fail-over", "log_loss=0.5"], "--fail-over"),
    ],
)
def test_mode_conflicts_are_one_line_usage_errors(extra, flag):
    result = run(["eval", "m.nb", "corpus", "--clusters", *extra])
    assert one_line_error(result, 2) == f"nbcli: error: --clusters does not go with {flag} (see 'nbcli eval --help')"


def test_other_usage_errors_stay_eval_s():
    assert one_line_error(run(["eval", "--clusters"]), 2) == (
        "nbcli: error: give MODEL and CORPUS, or --predictions FILE (see 'nbcli eval --help')"
    )
    assert one_line_error(run(["eval", "x.nb", "--predictions", "-", "--clusters"], input=""), 2).startswith(
        "nbcli: error: --predictions takes no MODEL, CORPUS or --label"
    )
    assert one_line_error(run(["eval", "x.nb", "c", "--truth", "t", "--clusters"]), 2) == (
        "nbcli: error: --truth goes with --predictions (see 'nbcli eval --help')"
    )

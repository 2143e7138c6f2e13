"""`nbcli tune`: the grid, the choice, and the train command it prints."""

import json
import shlex

import pytest

from nbcli.cli import options
from nbcli.run import tuning

from conftest import SAMPLES, make_docs, run

TENNIS = ["--features", "all", "--label-field", "PlayTennis", "--id-field", "Day"]


def test_grid_combinations_and_command_line():
    grid = {"alpha": [1.0, 0.1], "model": ["multinomial", "complement"]}
    assert tuning.combinations(grid) == [
        {"alpha": 1.0, "model": "multinomial"},
        {"alpha": 1.0, "model": "complement"},
        {"alpha": 0.1, "model": "multinomial"},
        {"alpha": 0.1, "model": "complement"},
    ]
    assert all(isinstance(v, list) for v in tuning.GRID.values()) and "alpha" in tuning.GRID
    command = options.train_command(
        ["my corpus"],
        [("--alpha", 3.0), ("--no-mail", True), ("--label", "spam=s p")],
        {"alpha": 0.01, "unknown": "smooth"},
    )
    assert (
        command == "nbcli train 'my corpus' --no-mail --label 'spam=s p' --alpha 0.01 --unknown-terms smooth -o MODEL"
    )
    assert (
        options.train_command(["c"], [("--model", "multinomial")], {"kind": "complement"})
        == "nbcli train c --model complement -o MODEL"
    )


def test_tune_prints_the_best_and_a_command_that_trains_it(tmp_path, make_class_folders):
    texts, labels = make_docs(200, seed=6, classes=["ham", "spam"])
    corpus = make_class_folders(texts, labels)
    result = run(["tune", corpus, "--cv", "3", "--json", "--metric", "log_loss", "--ngrams", "2"])
    assert result.exit_code == 0, result.stderr
    got = json.loads(result.stdout)
    means = [r["mean"] for r in got["results"]]
    assert [r["settings"] for r in got["results"]] == tuning.combinations(tuning.GRID)
    assert got["best"] == got["results"][means.index(min(means))]["settings"]  # log loss: smaller is better
    best = got["best"]
    cv = json.loads(
        run(
            [
                "eval",
                "--cv",
                "3",
                corpus,
                "--ngrams",
                "2",
                "--model",
                best["kind"],
                "--alpha",
                str(best["alpha"]),
                "--json",
            ]
        ).stdout
    )
    assert cv["metrics"]["log_loss"]["mean"] == pytest.approx(min(means))
    text = run(["tune", corpus, "--cv", "3", "--ngrams", "2"]).stdout
    command = text.splitlines()[-1]
    assert text.splitlines()[0].startswith("3-fold stratified cross-validation of 200 documents (seed 0), by accuracy")
    words = shlex.split(command.replace("MODEL", str(tmp_path / "best.nb")))
    assert words[:3] == ["nbcli", "train", str(corpus)] and "--ngrams" in words
    assert run(["train", *words[2:], "-q"]).exit_code == 0
    info = json.loads(run(["info", tmp_path / "best.nb", "--json"]).stdout)
    assert info["options"]["ngrams"] == 2 and info["options"]["alpha"] == float(words[words.index("--alpha") + 1])


def test_a_grid_option_given_is_fixed_not_searched(make_class_folders):
    texts, labels = make_docs(120, seed=2, classes=["ham", "spam"])
    corpus = make_class_folders(texts, labels)
    got = json.loads(run(["tune", corpus, "--cv", "3", "--json", "--model", "bernoulli"]).stdout)
    assert [r["settings"] for r in got["results"]] == [{"alpha": a} for a in tuning.GRID["alpha"]]
    assert "--model bernoulli" in got["command"]
    got = json.loads(run(["tune", corpus, "--cv", "3", "--json", "--model", "complement", "--alpha", "0.5"]).stdout)
    assert [r["settings"] for r in got["results"]] == [{}]
    assert "--model complement" in got["command"] and "--alpha 0.5" in got["command"]


def test_tune_errors(make_class_folders):
    texts, labels = make_docs(30, seed=6, classes=["a", "b"])
    corpus = make_class_folders(texts, labels)
    for args, code, message in [
        ([corpus, "--metric", "nope"], 2, "'nope' is not a metric"),
        ([], 2, "give a CORPUS or at least one --label CLASS=PATH"),
        ([corpus, "--metric", "auc"], 1, "--metric auc: cross-validation does not report auc for this corpus"),
    ]:
        result = run(["tune", *args])
        assert result.exit_code == code and message in result.stderr and result.stderr.count("\n") == 1, result.stderr


def test_a_metric_cross_validation_does_not_report_names_the_parameter_and_on_the_command_line_the_flag():
    from nbcli.errors import NbcliError
    from nbcli.nb.table_classifier import TableColumns
    from nbcli.nb.tables import TableSettings
    from nbcli.text.sources import Document

    rows = [Document(f"r{i}", "ab"[i % 2], {"x": str(i % 2 + i / 100), "c": "xy"[i % 2]}) for i in range(12)]
    with pytest.raises(NbcliError) as info:
        tuning.tune_table(rows, TableColumns(), TableSettings(), 3, 0, None, "auc", {"bins": [5]})
    assert str(info.value) == "metric auc: cross-validation does not report auc for this table"
    said = str(options.in_flag_terms(info.value))
    assert said == "--metric auc: cross-validation does not report auc for this table"
    # the command line: the flag (the corpus's case is in test_tune_errors)
    result = run(["tune", SAMPLES / "playtennis.csv", *TENNIS, "--cv", "3", "--metric", "auc"])
    assert result.exit_code == 1 and result.stderr == f"nbcli: error: {said}\n"

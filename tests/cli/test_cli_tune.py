"""`nbcli tune` as a command (cli/tune.py): its usage errors, a grid option
given is fixed, and the last line is the train command of the best (the
grid search itself: tests/run/test_tuning.py)."""

import shlex

from conftest import make_docs, one_line_error, run


def test_usage_errors_are_one_line_with_status_2(tmp_path):
    line = one_line_error(run(["tune", tmp_path, "--metric", "speed"]), code=2)
    assert "'speed' is not a metric; use one of accuracy" in line and "--metric" in line
    line = one_line_error(run(["tune"]), code=2)
    assert "give a CORPUS or at least one --label CLASS=PATH" in line
    line = one_line_error(run(["tune", tmp_path, "--ham-cutoff", "0.9", "--spam-cutoff", "0.5"]), code=2)
    assert "--ham-cutoff 0.9 is above --spam-cutoff 0.5" in line
    line = one_line_error(run(["tune", tmp_path, "--features", "all", "--cluster", "local:2"]), code=2)
    assert "--cluster does not go with a table model's tuning" in line


def test_a_grid_option_given_is_kept_and_the_last_line_trains_the_best(make_class_folders):
    texts, labels = make_docs(60, seed=3, classes=["ham", "spam"])
    corpus = make_class_folders(texts, labels)
    result = run(["tune", corpus, "--cv", "2", "--model", "bernoulli", "-q"])
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[-2] == "train the best with:"
    words = shlex.split(lines[-1])
    assert words[:3] == ["nbcli", "train", str(corpus)] and words[-2:] == ["-o", "MODEL"]
    assert words[words.index("--model") + 1] == "bernoulli" and words.count("--model") == 1
    assert "--alpha" in words  # the one dimension searched
    assert "complement" not in result.stdout and "multinomial" not in result.stdout

"""Reading `nbcli predict --json` lines back (nbcli/evaluate/predictions.py):
the true class from a truth file or the id's class folder, and a one-line
error naming FILE:LINE for anything else."""

import json
import math

import numpy as np
import pytest

from nbcli.errors import NbcliError
from nbcli.evaluate.predictions import label_from_id, read_files, read_predictions, read_truth


def line(doc_id, probabilities, logs=None):
    record = {"id": doc_id, "label": next(iter(probabilities)), "probabilities": probabilities}
    if logs is not None:
        record["log_probabilities"] = logs
    return json.dumps(record)


def test_true_classes_come_from_the_nearest_class_folder_of_each_id():
    lines = [
        line("corpus/spam/0001.eml", {"spam": 0.9, "ham": 0.1}, {"spam": -0.1, "ham": -2.5}),
        "",
        line("corpus/ham/spam/box.mbox:3", {"ham": 0.75, "spam": 0.25}),
    ]
    labels, log_proba, classes = read_predictions(lines, "p.jsonl")
    assert classes == ["ham", "spam"]  # sorted, as a model's are
    assert labels == ["spam", "spam"]  # the nearest folder named after a class
    assert log_proba.tolist() == [[-2.5, -0.1], [math.log(0.75), math.log(0.25)]]  # logs kept, else log(p)
    assert label_from_id("a/b/c.txt", ["x"]) is None and label_from_id("spam\\1.eml", ["spam"]) == "spam"


def test_a_truth_file_gives_the_classes_instead(tmp_path):
    (tmp_path / "p.jsonl").write_text(line("m1", {"a": 0.2, "b": 0.8}) + "\n" + line("m2", {"a": 1.0, "b": 0.0}) + "\n")
    (tmp_path / "truth.tsv").write_text("m1\tb\n\nm2\ta\n")
    labels, log_proba, classes = read_files(str(tmp_path / "p.jsonl"), str(tmp_path / "truth.tsv"))
    assert labels == ["b", "a"] and classes == ["a", "b"]
    assert log_proba[1, 1] == -np.inf
    with pytest.raises(NbcliError, match=r"t.tsv:2: not id<TAB>label"):
        read_truth(["m1\tb", "no tab here"], "t.tsv")
    with pytest.raises(NbcliError, match="a folder, not a file"):
        read_files(str(tmp_path))


def test_predictions_and_truth_are_read_from_a_pipe(tmp_path):
    """<(nbcli predict ...) is a pipe: read, not "no such file"."""
    import os
    import threading

    predictions, truth = tmp_path / "p.fifo", tmp_path / "t.fifo"
    os.mkfifo(predictions)
    os.mkfifo(truth)
    writers = [
        threading.Thread(target=path.write_text, args=(text,), daemon=True)
        for path, text in ((truth, "m1\tb\n"), (predictions, line("m1", {"a": 0.2, "b": 0.8}) + "\n"))
    ]
    for w in writers:
        w.start()
    labels, log_proba, classes = read_files(str(predictions), str(truth))
    for w in writers:
        w.join(5)
    assert labels == ["b"] and classes == ["a", "b"] and log_proba[0, 1] == pytest.approx(np.log(0.8))


@pytest.mark.parametrize(
    "lines, message",
    [
        (["not json"], "p:1: not a prediction line"),
        (['{"id": ' + "[" * 10**5 + "]" * 10**5 + "}"], "p:1: not a prediction line"),  # deeper than json's parser goes
        ([json.dumps({"id": "x", "probabilities": {"a": 1.0}})], 'p:1: no "probabilities" of two or more classes'),
        ([line("a/1", {"a": 0.5, "b": 0.5}), line("a/2", {"a": 0.5, "c": 0.5})], "p:2: its classes differ"),
        ([line("a/1", {"a": 0.5, "b": 0.5}, {"a": -0.69})], 'p:1: its "log_probabilities" name other classes'),
        ([line("a/1", {"a": 0.5, "b": 0.5}, {"a": -0.7, "c": -0.7})], 'p:1: its "log_probabilities" name other'),
        ([line("a/1", {"a": 0.5, "b": 0.5}, [-0.7, -0.7])], 'p:1: its "log_probabilities" name other classes'),
        ([line("a/1", {"a": 1.5, "b": -0.5})], "p:1: probabilities must lie between 0 and 1"),
        ([line("a/1", {"a": "high", "b": 0.5})], "p:1: probabilities must be numbers"),
        ([line("x/1", {"a": 0.5, "b": 0.5})], "p:1: the true class of 'x/1' is unknown"),
        ([], "p: no prediction lines"),
    ],
)
def test_bad_prediction_lines_are_one_line_errors_naming_the_line(lines, message):
    with pytest.raises(NbcliError, match=message):
        read_predictions(lines, "p")

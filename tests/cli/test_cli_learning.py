"""`nbcli learn` and `forget` on the command line (cli/learning.py): the
messages, exit codes, the file left behind, concurrent learners and
learners killed part-way."""

from __future__ import annotations

import glob
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

import pytest

from conftest import SAMPLES, one_line_error, run, run_process
from conftest import model_info as info

MAIL = SAMPLES / "mail"
SPAM = sorted((MAIL / "test" / "spam").iterdir())
HAM = sorted((MAIL / "test" / "ham").iterdir())


@pytest.fixture
def trained_model(sample_mail_model):  # tests/fit/test_learning_safety.py takes these two fixtures by name
    return sample_mail_model


@pytest.fixture
def model(mail_model_copy):
    return mail_model_copy


def state(path) -> tuple:
    """What a model's counts are: (model_id, documents per class, record entries)."""
    described = info(path)
    return (
        described["model_id"],
        tuple(c["documents"] for c in described["classes"]),
        described["record"]["entries"],
    )


# -- learn, again, move, forget --------------------------------------------------------


def test_learn_from_stdin_then_again_then_move_then_forget_in_the_wrong_class(model):
    message = SPAM[0].read_bytes()
    before = state(model)
    result = run(["learn", model, "--spam"], input=message)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "" and "learned 1 document(s) as spam" in result.stderr
    learned = state(model)
    assert learned[1] == (before[1][0], before[1][1] + 1) and learned[2] == before[2] + 1
    assert learned[0] != before[0]
    data = model.read_bytes()

    result = run(["learn", model, "--spam"], input=message)
    assert result.exit_code == 0 and "1 document(s) already learned as spam; not counted again" in result.stderr
    assert model.read_bytes() == data  # not even rewritten

    result = run(["learn", model, "--ham", "--json"], input=message)
    assert result.exit_code == 0 and "moved 1 document(s) from spam to ham" in result.stderr
    report = json.loads(result.stdout)
    assert report["moved"] == {"spam": 1} and report["learned"] == 0
    assert report["classes"] == {"ham": before[1][0] + 1, "spam": before[1][1]}
    moved = model.read_bytes()

    line = one_line_error(run(["forget", model, "--spam"], input=message))
    assert "never learned as spam (it was learned as ham)" in line and "--class ham" in line
    assert model.read_bytes() == moved

    result = run(["forget", model, "--ham"], input=message)
    assert result.exit_code == 0 and "forgot 1 document(s) as ham" in result.stderr
    assert state(model) == before  # the same counts as the model trained


def test_create_missing_model_and_training_options(tmp_path, model):
    new = tmp_path / "new.nb"
    line = one_line_error(run(["learn", new, "--spam"], input=SPAM[0].read_bytes()))
    assert "no such model file" in line and "--create" in line and not new.exists()

    result = run(["learn", "--create", new, "--spam"], input=SPAM[0].read_bytes())
    assert result.exit_code == 0, result.stderr
    described = info(new)
    assert [(c["class"], c["documents"]) for c in described["classes"]] == [("ham", 0), ("spam", 1)]

    line = one_line_error(run(["learn", model, "--spam", "--alpha", "2"], input=SPAM[1].read_bytes()), code=2)
    assert "--alpha is a training option" in line
    data = model.read_bytes()
    assert one_line_error(run(["learn", model, "--class", "eggs", "--ham"], input=b"x"), code=2)
    assert model.read_bytes() == data


def test_a_model_with_an_empty_class_refuses_predict_and_filter_passes_mail_through(tmp_path):
    new = tmp_path / "new.nb"
    assert run(["learn", "--create", new, "--spam", SPAM[0], SPAM[1]]).exit_code == 0
    line = one_line_error(run(["predict", new, SPAM[2]]))
    assert "no documents of class ham yet" in line

    message = SPAM[2].read_bytes()
    result = run(["filter", new], input=message)
    assert result.exit_code == 1 and result.stdout_bytes == message
    assert "passing messages through unchanged" in result.stderr
    result = run(["filter", "--exit-codes", new], input=message)
    assert result.exit_code == 3 and result.stdout_bytes == message

    # once ham is learned too, it classifies
    assert run(["learn", new, "--ham", HAM[0]]).exit_code == 0
    assert run(["predict", new, SPAM[2]]).exit_code == 0


def test_the_filter_header_names_the_model_id_and_it_changes_with_learning(model):
    message = SPAM[3].read_bytes()

    def header_id():
        result = run(["filter", model], input=message)
        assert result.exit_code == 0, result.stderr
        first = result.stdout_bytes.split(b"\n", 1)[0].decode()
        assert first.startswith("X-NB-Class: ")
        return first.rsplit("; model=", 1)[1].strip()

    before = header_id()
    assert before == info(model)["model_id"]
    assert run(["learn", model, "--spam"], input=message).exit_code == 0
    after = header_id()
    assert after == info(model)["model_id"] and after != before


# -- concurrent learners, killed learners -------------------------------------------------


def nbcli_process(args):
    return subprocess.Popen(
        [sys.executable, "-m", "nbcli", *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


@pytest.mark.parametrize("create", [False, True], ids=["existing", "create"])
def test_twenty_concurrent_learners_are_all_counted(model, create):
    if create:  # a mail hook starting from nothing: the first creates, the others learn into it
        model.unlink()
    before = state(model) if not create else ("", (0, 0), 0)
    options = ["--create"] if create else []
    procs = [nbcli_process(["learn", *options, model, "--spam", "-q", message]) for message in SPAM[:20]]
    results = [(p.wait(timeout=120), p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    assert all(code == 0 for code, _ in results), results
    after = state(model)
    assert after[1] == (before[1][0], before[1][1] + 20)
    assert after[2] == before[2] + 20
    assert not glob.glob(str(model.parent / ".mail.nb.*.tmp"))


@pytest.mark.parametrize(
    "command, iterations",
    [
        (["learn", None, "--spam", "-q", MAIL / "test"], 15),  # 175 messages: long enough to be killed part-way
        (["train", MAIL / "test", "-o", None, "-q"], 6),  # train over an existing model
    ],
    ids=["learn", "train"],
)
def test_a_writer_killed_at_any_moment_leaves_the_old_model_or_the_new(tmp_path, model, command, iterations):
    copy = tmp_path / "copy.nb"
    shutil.copyfile(model, copy)
    original = model.read_bytes()
    before = state(model)
    started = time.monotonic()
    done = run_process([a if a is not None else copy for a in command])
    took = time.monotonic() - started  # kills fall anywhere in a run, whatever the machine's speed
    assert done.returncode == 0, done.stderr
    after = state(copy)
    assert after != before
    if command[0] == "learn":
        assert after[1][1] == before[1][1] + 175

    rng = random.Random(20261123)
    seen = set()
    for _ in range(iterations):
        proc = nbcli_process([a if a is not None else model for a in command])
        time.sleep(rng.uniform(0, min(took, 0.6)))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stdout.close()
        proc.stderr.close()
        now = state(model)  # loads: info exits 0
        assert now in (before, after)
        seen.add(now == after)
        if now == after:  # start again from the old model (an atomic replace, as a writer would)
            (tmp_path / "restore.nb").write_bytes(original)
            os.replace(tmp_path / "restore.nb", model)
    # the next learner, holding the lock, removes what killed writers left
    (model.parent / ".mail.nb.k1ll3d.tmp").write_bytes(original[:1000])
    done = run_process([a if a is not None else model for a in command])
    assert done.returncode == 0, done.stderr
    assert state(model) == after
    assert not glob.glob(str(model.parent / ".mail.nb.*.tmp"))
    assert seen  # (which states the kills hit depends on the machine's speed)


def test_learning_mail_is_training_on_it(tmp_path):
    """Train on the sample mail without some spam, learn those: the same
    counts (model_id) and predictions as training on all of it."""
    corpus = tmp_path / "train"
    shutil.copytree(MAIL / "train", corpus)
    held_out = sorted((corpus / "spam").iterdir())[:30]
    moved = tmp_path / "later"
    moved.mkdir()
    for path in held_out:
        path.rename(moved / path.name)
    # uncalibrated: learning keeps the part's calibration map, which training on all would fit afresh
    raw = ["-q", "--calibrate", "none"]
    assert run(["train", corpus, "-o", tmp_path / "part.nb", *raw]).exit_code == 0
    assert run(["learn", tmp_path / "part.nb", "--spam", moved, "-q"]).exit_code == 0
    for path in held_out:
        (moved / path.name).rename(path)
    assert run(["train", corpus, "-o", tmp_path / "all.nb", *raw]).exit_code == 0
    assert state(tmp_path / "part.nb") == state(tmp_path / "all.nb")
    predict = [run(["predict", "--json", tmp_path / name, MAIL / "test"]).stdout for name in ("part.nb", "all.nb")]
    assert predict[0] == predict[1] and predict[0]


def test_the_library_refusals_name_the_flags_on_the_command_line(tmp_path):
    """The library's errors name parameters (min_df, classes, features; tests/fit/test_learning.py);
    the command line says them in flag terms, as it always has."""
    pruned = tmp_path / "pruned.nb"
    assert run(["train", MAIL / "train", "--min-df", "2", "-o", pruned, "-q"]).exit_code == 0
    copy = shutil.copy(pruned, tmp_path / "copy.nb")  # merge refuses one file given twice
    for args in (["learn", pruned, "--spam", SPAM[0]], ["merge", pruned, copy, "-o", tmp_path / "m.nb"]):
        assert one_line_error(run(args)) == (
            f"nbcli: error: {pruned} was trained with --min-df, which kept no counts for the terms it dropped, "
            "so it cannot learn exactly; train it again without --min-df (and keep it small with 'nbcli prune')"
        )
    line = one_line_error(run(["learn", "--create", tmp_path / "new.nb", "--class", "ham", HAM[0]]))
    assert line == (
        "nbcli: error: a new model needs at least two classes, and only ham is known; "
        "name them with --classes, e.g. --classes ham,spam (--spam and --ham imply them)"
    )
    tennis = tmp_path / "tennis.nb"
    features = ["--features", "all", "--label-field", "PlayTennis", "--id-field", "Day"]
    assert run(["train", SAMPLES / "playtennis.csv", *features, "-o", tennis, "-q"]).exit_code == 0
    assert one_line_error(run(["prune", tennis, "--min-count", "2"])) == (
        "nbcli: error: a table model has no terms to prune; train it again with --features naming fewer columns"
    )


@pytest.mark.parametrize("command", ["learn", "forget"])
def test_an_empty_class_name_is_a_usage_error_that_says_so(model, command):
    """Not taken as no --class, whose error ("has no labels; give a folder
    with one sub-folder per class") sent the user looking at the inputs."""
    before = state(model)
    result = run([command, model, "--class", "", SPAM[0]])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[0].startswith("nbcli: error: --class needs a class name")
    assert state(model) == before


@pytest.mark.parametrize("journaled", [False, True], ids=["rewritten", "journaled"])
@pytest.mark.parametrize("label", ["a\tb", "sp\nam", "x\u0007y"])
def test_a_new_class_that_cannot_be_a_class_name_is_refused_and_the_model_kept(model, monkeypatch, label, journaled):
    """learn --new-class with a control character in the class (from --class
    or a JSON-lines label) is refused as train refuses it; it wrote a model
    (or a journal record) that every command then called corrupt."""
    from nbcli.store import modelfile

    if journaled:
        monkeypatch.setattr(modelfile, "JOURNAL_MIN_BYTES", 0)
        assert run(["learn", model, "--spam", SPAM[0], "-q"]).exit_code == 0  # the journal exists
    before = state(model)
    for args, stdin in (
        (["--class", label, "-"], "some words\n"),
        (["-", "--input-format", "jsonl"], json.dumps({"text": "some words", "label": label}) + "\n"),
    ):
        line = one_line_error(run(["learn", model, "--new-class", *args], input=stdin))
        assert f"class label {label!r} contains the control character" in line and "rename that class" in line
        assert state(model) == before


def test_learning_into_a_clustering_counts_its_clustered_documents_too(tmp_path):
    """A clustering's documents are all EM's: learning 10 into one of 660
    said "trained: 10 documents"; it is 670, and 660 again once forgotten."""
    topics = SAMPLES / "topics"
    model = tmp_path / "c.nb"
    args = ["cluster", topics / "train.jsonl", "-k", "4", "--min-df", "1", "--max-df", "1.0", "--restarts", "1"]
    assert run([*args, "-o", model, "-q"]).exit_code == 0
    clustered = info(model)["documents"]
    ten = "".join((topics / "test.jsonl").read_text().splitlines(keepends=True)[:10])
    for command, documents in (("learn", clustered + 10), ("forget", clustered)):
        result = run([command, model, "--class", "cluster2", "-", "--input-format", "jsonl", "-q"], input=ten)
        assert result.exit_code == 0, result.stderr
        assert info(model)["documents"] == documents


def test_a_document_train_counted_in_two_classes_moves_when_learned_in_one(tmp_path):
    """learn --ham of a document train counted in ham and in spam said
    "already learned as ham" and left it in both; it moves (learning.md):
    the model is then the one trained with the document in ham alone."""
    doc = SPAM[4]
    both, ham_only = tmp_path / "both", tmp_path / "ham-only"
    for corpus, classes in ((both, ("ham", "spam")), (ham_only, ("ham",))):
        for cls in ("ham", "spam"):
            shutil.copytree(MAIL / "train" / cls, corpus / cls)
        for cls in classes:
            shutil.copyfile(doc, corpus / cls / "extra.eml")
    models = {}
    for corpus in (both, ham_only):
        models[corpus] = tmp_path / f"{corpus.name}.nb"
        assert run(["train", corpus, "-o", models[corpus], "-q", "--calibrate", "none"]).exit_code == 0
    result = run(["learn", models[both], "--ham", doc])
    assert result.exit_code == 0 and "moved 1 document(s) from spam to ham" in result.stderr, result.stderr
    assert state(models[both]) == state(models[ham_only])
    result = run(["learn", models[both], "--ham", doc])
    assert "1 document(s) already learned as ham" in result.stderr and state(models[both]) == state(models[ham_only])


def test_moves_make_the_calibration_and_the_threshold_stale_as_a_change_in_number_does(tmp_path):
    """80 moves of 525 documents left their number as it was, and neither
    the map nor a --decide threshold was called stale (calibration.md: the
    model's documents differ by 10% or more); the documents per class when
    they were fitted are noted, and moves count, and `calibrate` notes them
    again. Moving them back makes them fresh again."""
    model = tmp_path / "m.nb"
    assert run(["train", MAIL / "train", "-o", model, "-q", "--decide", "f1"]).exit_code == 0
    spam = sorted((MAIL / "train" / "spam").iterdir())
    result = run(["learn", model, "--ham", *spam[:40]])
    assert result.exit_code == 0 and "stale" not in result.stderr  # 40 of 525: under 10%
    result = run(["learn", model, "--ham", *spam[40:60]])
    assert "calibration is stale: it was fitted when the model had 525 documents, and it has 525" in result.stderr
    assert "decision threshold is stale" in result.stderr
    described = info(model)
    assert described["calibration"]["stale"] is True and described["decision"]["stale"] is True
    assert run(["learn", model, "--spam", *spam[:60], "-q"]).exit_code == 0  # moved back: the documents fitted on
    assert info(model)["calibration"]["stale"] is False
    assert run(["learn", model, "--ham", *spam[:60], "-q"]).exit_code == 0
    assert run(["calibrate", model, MAIL / "test", "-q"]).exit_code == 0
    assert info(model)["calibration"]["stale"] is False and info(model)["decision"]["stale"] is False

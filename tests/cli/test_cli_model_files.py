"""`nbcli merge`, `dump`, `load` and `prune` (cli/model_files.py): the
commands that rewrite a model file without documents."""

from __future__ import annotations

import json

import pytest

from conftest import SAMPLES, make_docs, one_line_error, run
from conftest import model_info as info

SPAM = sorted((SAMPLES / "mail" / "test" / "spam").iterdir())


@pytest.fixture
def model(mail_model_copy):
    return mail_model_copy


def test_dump_load_round_trip_through_a_pipe(tmp_path, model):
    assert run(["learn", model, "--spam", SPAM[0]]).exit_code == 0
    assert run(["prune", model, "--min-count", "2", "-q"]).exit_code == 0
    dumped = run(["dump", model])
    assert dumped.exit_code == 0 and dumped.stderr == ""
    copy = tmp_path / "m2.nb"
    result = run(["load", "-", "-o", copy], input=dumped.stdout)
    assert result.exit_code == 0, result.stderr
    again = run(["dump", copy])
    assert again.stdout == dumped.stdout
    assert info(copy)["model_id"] == info(model)["model_id"]
    # to a file and back from it
    assert run(["dump", model, "-o", tmp_path / "m.dump"]).exit_code == 0
    assert (tmp_path / "m.dump").read_text(encoding="utf-8") == dumped.stdout
    assert run(["load", tmp_path / "m.dump", "-o", tmp_path / "m3.nb", "-q"]).exit_code == 0
    # damaged text: one line, naming the line
    lines = dumped.stdout.splitlines(keepends=True)
    line = one_line_error(run(["load", "-", "-o", tmp_path / "bad.nb"], input="".join(lines[:5])))
    assert "line 6: the text ends early" in line and not (tmp_path / "bad.nb").exists()


def test_merge_of_two_halves_and_of_different_models(tmp_path, make_class_folders):
    texts, labels = make_docs(80, seed=21, classes=["ham", "spam"])
    left = make_class_folders(texts[:40], labels[:40], "left")
    right = make_class_folders(texts[40:], labels[40:], "right")
    whole = make_class_folders(texts, labels, "whole")
    for corpus in (left, right):  # calibrated, as by default
        assert run(["train", corpus, "-o", tmp_path / f"{corpus.name}.nb", "-q"]).exit_code == 0
    assert run(["train", whole, "-o", tmp_path / "whole.nb", "-q", "--calibrate", "none"]).exit_code == 0
    out = tmp_path / "merged.nb"
    result = run(["merge", tmp_path / "left.nb", tmp_path / "right.nb", "-o", out])
    assert result.exit_code == 0 and "2 models merged" in result.stderr
    # the halves' maps were fitted to their own tables: the sum has none, and merge says so
    assert f"{out} is not calibrated" in result.stderr and info(out)["calibration"]["method"] is None
    assert info(out)["model_id"] == info(tmp_path / "whole.nb")["model_id"]
    assert info(out)["record"]["entries"] == 80
    assert "more than one of the models" not in result.stderr  # the halves share no document

    # the same model twice (by name or through a link) is a slip: refused; models sharing documents: a warning
    (tmp_path / "link.nb").symlink_to(tmp_path / "left.nb")
    for again, said in ((tmp_path / "left.nb", "is given twice"), (tmp_path / "link.nb", "are the same file")):
        line = one_line_error(run(["merge", tmp_path / "left.nb", again, "-o", tmp_path / "twice.nb"]))
        assert said in line and "counts every document twice; give each model once" in line
        assert not (tmp_path / "twice.nb").exists()
    result = run(["merge", tmp_path / "left.nb", tmp_path / "whole.nb", "-o", tmp_path / "overlap.nb"])
    assert result.exit_code == 0 and sum(info(tmp_path / "overlap.nb")["record"]["per_class"].values()) == 120
    assert "40 document(s) are in the records of more than one of the models" in result.stderr

    other_texts, other_labels = make_docs(40, seed=22, classes=["code", "food"])
    assert (
        run(["train", make_class_folders(other_texts, other_labels, "other"), "-o", tmp_path / "o.nb"]).exit_code == 0
    )
    line = one_line_error(run(["merge", tmp_path / "left.nb", tmp_path / "o.nb", "-o", tmp_path / "x.nb"]))
    assert "differ in classes (ham, spam against code, food)" in line and not (tmp_path / "x.nb").exists()
    assert run(["train", left, "--ngrams", "2", "-o", tmp_path / "bi.nb", "-q"]).exit_code == 0
    line = one_line_error(run(["merge", tmp_path / "left.nb", tmp_path / "bi.nb", "-o", tmp_path / "x.nb"]))
    assert "analyzer option ngrams (1 against 2)" in line


def test_prune_and_its_dry_run(model):
    terms = info(model)["vocabulary_size"]
    data = model.read_bytes()
    result = run(["prune", model, "--min-count", "2", "--dry-run", "--json"])
    assert result.exit_code == 0 and "would drop" in result.stderr
    report = json.loads(result.stdout)
    assert report["dry_run"] and report["terms"] == terms and 0 < report["kept"] < terms
    assert model.read_bytes() == data

    result = run(["prune", model, "--min-count", "2"])
    assert result.exit_code == 0 and f"dropped {report['dropped']} of {terms} terms" in result.stderr
    described = run(["info", model]).stdout
    assert "pruned:      min_count=2" in described
    assert info(model)["vocabulary_size"] == report["kept"]
    assert run(["predict", model, SPAM[0]]).exit_code == 0  # still classifies

    line = one_line_error(run(["prune", model]), code=2)
    assert "--min-count" in line
    line = one_line_error(run(["prune", model, "--unseen-since", "last week"]), code=2)  # a bad value: usage
    assert "is not a date" in line

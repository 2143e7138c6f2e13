"""The learning loop against mistakes and odd files (issue 25): a typo in
--class, forgetting without a class, a model that is a symbolic link, and a
lock file that is a link or not a file at all."""

from __future__ import annotations

import os
import shutil

import test_cli_learning
from test_cli_learning import HAM, SPAM, info, one_line_error, state

from conftest import run

# a fresh copy of the model trained on the sample mail (test_cli_learning's fixtures)
trained_model = test_cli_learning.trained_model
model = test_cli_learning.model


def classes(path) -> list[str]:
    return [c["class"] for c in info(path)["classes"]]


# -- a class the model does not have ---------------------------------------------------------


def test_a_typo_in_class_is_refused_and_names_the_models_classes(model):
    before = model.read_bytes()
    line = one_line_error(run(["learn", model, "--class", "hma", "-q"], input=HAM[0].read_bytes()))
    assert "no class hma" in line and "ham, spam" in line and "--new-class" in line, line
    assert model.read_bytes() == before


def test_a_labelled_corpus_with_a_class_the_model_lacks_is_refused(model, tmp_path):
    corpus = tmp_path / "corpus"
    (corpus / "hma").mkdir(parents=True)
    shutil.copy(HAM[0], corpus / "hma" / "1.eml")
    before = model.read_bytes()
    line = one_line_error(run(["learn", model, corpus, "-q"]))
    assert "no class hma" in line and "ham, spam" in line, line
    assert model.read_bytes() == before


def test_a_new_class_on_purpose_then_forgotten_leaves_no_empty_class(model):
    before = state(model)
    message = HAM[0].read_bytes()
    result = run(["learn", model, "--class", "hma", "--new-class", "-q"], input=message)
    assert result.exit_code == 0, result.stderr
    assert classes(model) == ["ham", "hma", "spam"]
    result = run(["forget", model, "--class", "hma", "-q"], input=message)
    assert result.exit_code == 0, result.stderr
    assert classes(model) == ["ham", "spam"]
    after = state(model)
    assert after[1:] == before[1:]  # the same documents per class and record


def test_forgetting_a_class_the_model_lacks_is_refused(model):
    before = model.read_bytes()
    line = one_line_error(run(["forget", model, "--class", "hma", "-q"], input=HAM[0].read_bytes()))
    assert "no class hma" in line and "ham, spam" in line, line
    assert model.read_bytes() == before


def test_forget_without_a_class_uses_the_record(model):
    before = state(model)
    message = HAM[0].read_bytes()
    assert run(["learn", model, "--spam", "-q"], input=message).exit_code == 0
    assert state(model) != before
    result = run(["forget", model, "-q"], input=message)
    assert result.exit_code == 0, result.stderr
    assert state(model) == before
    line = one_line_error(run(["forget", model, "-q"], input=message))  # no longer in the record
    assert "never learned" in line, line


# -- a model that is a symbolic link -------------------------------------------------------------


def test_learn_and_forget_through_a_link_change_its_target(tmp_path, trained_model):
    shared = tmp_path / "srv" / "shared.nb"
    shared.parent.mkdir()
    shutil.copyfile(trained_model, shared)
    home = tmp_path / "home"
    home.mkdir()
    link = home / "mail.nb"
    link.symlink_to(shared)
    original = state(shared)
    assert run(["learn", link, "--spam", "-q"], input=HAM[0].read_bytes()).exit_code == 0
    assert link.is_symlink() and os.readlink(link) == str(shared)
    assert state(shared) != original  # every user of the shared file sees it
    assert (shared.parent / ".shared.nb.lock").exists() and not (home / ".mail.nb.lock").exists()
    assert run(["forget", link, "--spam", "-q"], input=HAM[0].read_bytes()).exit_code == 0
    assert link.is_symlink() and state(shared) == original


# -- the lock file -----------------------------------------------------------------------------------


def test_a_dangling_lock_link_is_refused_and_not_followed(model, tmp_path):
    victim = tmp_path / "elsewhere" / "victim"
    victim.parent.mkdir()
    (model.parent / ".mail.nb.lock").symlink_to(victim)
    before = model.read_bytes()
    line = one_line_error(run(["learn", model, "--spam", "-q"], input=SPAM[0].read_bytes()))
    assert "symbolic link" in line and ".mail.nb.lock" in line, line
    assert not victim.exists()
    assert model.read_bytes() == before


def test_a_lock_that_is_not_a_regular_file_is_refused(model):
    os.mkfifo(model.parent / ".mail.nb.lock")
    before = model.read_bytes()
    line = one_line_error(run(["learn", model, "--spam", "-q"], input=SPAM[0].read_bytes()))
    assert "not a regular file" in line, line
    assert model.read_bytes() == before

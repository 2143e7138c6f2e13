"""Output paths that would destroy an input (cli/paths.py), called as the
commands call them, and the stamp that tells a replaced model file. (The
commands refusing them: tests/cli/test_cli_hardening.py.)"""

import os

import pytest

from nbcli.cli.paths import check_output, check_split_folder
from nbcli.errors import NbcliError
from nbcli.store.modelfile import file_stamp


def test_an_output_that_is_an_input_by_name_or_link_is_refused(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("{}\n")
    os.symlink(corpus, tmp_path / "link.jsonl")
    os.link(corpus, tmp_path / "hard.jsonl")
    for output in (corpus, tmp_path / "link.jsonl", tmp_path / "hard.jsonl"):
        with pytest.raises(NbcliError, match="writing it would destroy the input"):
            check_output(str(output), [str(corpus)])
    check_output(str(tmp_path / "model.nb"), [str(corpus), "-"])  # another file, and stdin, are fine


def test_an_output_inside_an_input_folder_is_refused_and_names_the_option(tmp_path):
    (tmp_path / "corpus" / "ham").mkdir(parents=True)
    with pytest.raises(NbcliError, match=r"^--plot .* lies inside the input folder"):
        check_output(str(tmp_path / "corpus" / "ham" / "roc.svg"), [str(tmp_path / "corpus")], "--plot")
    check_output(str(tmp_path / "corpus-model.nb"), [str(tmp_path / "corpus")])  # a shared prefix is not inside


def test_a_split_folder_may_not_hold_an_input_mbox_or_lie_in_an_input(tmp_path):
    sorted_dir = tmp_path / "sorted"
    sorted_dir.mkdir()
    inbox = sorted_dir / "spam.mbox"
    inbox.write_bytes(b"From a\n\nx\n")
    with pytest.raises(NbcliError, match="could append to the input"):
        check_split_folder(str(sorted_dir), [str(inbox)])
    with pytest.raises(NbcliError, match="lies inside the input folder"):
        check_split_folder(str(tmp_path / "sorted" / "out"), [str(sorted_dir)])
    check_split_folder(str(tmp_path / "elsewhere"), [str(inbox)])


def test_the_stamp_changes_when_a_file_is_replaced_not_when_it_is_read(tmp_path):
    model = tmp_path / "m.nb"
    model.write_bytes(b"one")
    stamp = file_stamp(str(model))
    model.read_bytes()
    assert file_stamp(str(model)) == stamp
    (tmp_path / "new").write_bytes(b"one")
    os.replace(tmp_path / "new", model)  # as writers replace a model: same size, another inode
    assert file_stamp(str(model)) != stamp


def test_a_models_journal_is_never_an_output(tmp_path, mail_model_copy, monkeypatch):
    """train, merge and load -o MODEL.journal wrote a model over the updates
    learned into MODEL: the journal is refused as an output by what it holds
    (any name), and the model beside it keeps its updates."""
    import shutil

    from nbcli.store import modelfile

    from conftest import SAMPLES, model_info, one_line_error, run

    monkeypatch.setattr(modelfile, "JOURNAL_MIN_BYTES", 0)
    ham = sorted((SAMPLES / "mail" / "test" / "ham").iterdir())[0]
    assert run(["learn", mail_model_copy, "--ham", ham, "-q"]).exit_code == 0
    journal = tmp_path / "mail.nb.journal"
    assert journal.exists()
    before = model_info(mail_model_copy)
    other = tmp_path / "other.nb"
    shutil.copyfile(mail_model_copy, other)
    renamed = tmp_path / "renamed"
    shutil.copyfile(journal, renamed)
    rolled = tmp_path / "rolled"  # a journal started anew at a checkpoint (`journal.roll`) has a header of its own
    base = journal.read_bytes().split(b"\n")[0].split(b" ")[2]
    rolled.write_bytes(b"nbcli-journal 2 " + base + b" 100000 12\n" + journal.read_bytes().split(b"\n", 1)[1])
    for target in (journal, renamed, rolled):
        for args in (
            ["train", SAMPLES / "mail" / "train", "-o", target, "-q"],
            ["merge", other, mail_model_copy, "-o", target],
            ["cluster", SAMPLES / "topics" / "train.jsonl", "-k", "2", "-o", target, "-q"],
        ):
            line = one_line_error(run(args))
            assert line == f"nbcli: error: -o {target} is a model's journal (the updates learned into the model " + (
                "beside it); give another output path"
            )
    assert model_info(mail_model_copy) == before
    check_output(str(tmp_path / "new.nb"), [])  # (a path that does not exist yet is fine)

"""Mail sources: message files, mbox files, Maildirs, folders and stdin."""

import mailbox

import pytest

from nbcli.errors import NbcliError
from nbcli.store import modelfile
from nbcli.text.mbox import mbox_entries
from nbcli.text.sources import ReadOptions, documents_in, labeled_corpus

from conftest import run
from mailfixtures import MESSAGES, mbox_of

ALL = [MESSAGES[k] for k in sorted(MESSAGES)]


def docs(path, **kw):
    make, total = documents_in(str(path), ReadOptions(**kw))
    return list(make()), total


def test_mbox_entries_give_back_the_bytes_exactly():
    data = mbox_of(ALL)
    for chunk in (1, 7, 100, 1 << 20):
        it = iter([data[i : i + chunk] for i in range(0, len(data), chunk)])
        parts = list(mbox_entries(lambda it=it: next(it, b"")))
        assert b"".join(parts) == data and len(parts) == len(ALL)


def test_mbox_file_one_document_per_message(tmp_path):
    path = tmp_path / "inbox"
    path.write_bytes(mbox_of(ALL))
    got, total = docs(path)
    assert total == 1 and len(got) == len(ALL)
    assert [d.id for d in got] == [f"{path}:{i}" for i in range(1, len(ALL) + 1)]
    assert all(d.kind == "mail" for d in got) and [d.first for d in got] == [True] + [False] * (len(ALL) - 1)
    # the same messages Python's mailbox module finds
    assert len(mailbox.mbox(str(path))) == len(ALL)


def test_single_message_files_and_folders_of_them(tmp_path):
    (tmp_path / "msgs" / "sub").mkdir(parents=True)
    for name, raw in MESSAGES.items():
        (tmp_path / "msgs" / "sub" / f"{name}.eml").write_bytes(raw)
    got, total = docs(tmp_path / "msgs")
    assert total == len(MESSAGES) and len(got) == len(MESSAGES)
    assert all(d.kind == "auto" for d in got)  # the analyzer sniffs: these all look like mail


def test_maildir(tmp_path):
    box = mailbox.Maildir(str(tmp_path / "Maildir"), create=True)
    for raw in ALL[:3]:
        box.add(raw)
    box.close()
    (tmp_path / "Maildir" / "cur" / ".hidden").write_text("x")
    got, total = docs(tmp_path / "Maildir")
    assert total == 3 and len(got) == 3 and all(d.kind == "mail" for d in got)
    assert sorted(d.data for d in got) == sorted(ALL[:3])
    with pytest.raises(NbcliError, match="is not a Maildir"):
        docs(tmp_path / "Maildir" / "cur", input_format="maildir")


def test_input_format_forces_a_reading(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_bytes(b"From here on, this is just text.\nFrom there too.\n")
    auto, _ = docs(path)
    assert len(auto) == 1  # "From here on" is not a From_ line: not an mbox
    forced, _ = docs(path, input_format="mbox")
    assert [d.data for d in forced] == [path.read_bytes()]  # and never cut there
    text, _ = docs(path, input_format="text")
    assert len(text) == 1 and text[0].kind == "text"
    eml, _ = docs(tmp_path / "notes.txt", input_format="eml")
    assert eml[0].kind == "mail"


def test_label_pairs_with_mbox_and_maildir(tmp_path):
    (tmp_path / "spam.mbox").write_bytes(mbox_of([MESSAGES["html-only"], MESSAGES["base64"]]))
    box = mailbox.Maildir(str(tmp_path / ".Archive"), create=True)
    for raw in (MESSAGES["nested"], MESSAGES["crlf"], MESSAGES["no-body"]):
        box.add(raw)
    corpus = labeled_corpus(
        [], [("spam", str(tmp_path / "spam.mbox")), ("ham", str(tmp_path / ".Archive"))], ReadOptions()
    )
    got = [(d.label, d.kind) for d in corpus]
    assert got == [("spam", "mail")] * 2 + [("ham", "mail")] * 3
    assert corpus.total == 4  # one mbox file and three Maildir files


def test_class_folders_holding_mboxes_and_maildirs_train(tmp_path):
    (tmp_path / "c" / "spam").mkdir(parents=True)
    (tmp_path / "c" / "spam" / "box.mbox").write_bytes(mbox_of([MESSAGES["html-only"], MESSAGES["base64"]]))
    box = mailbox.Maildir(str(tmp_path / "c" / "ham"), create=True)
    for raw in (MESSAGES["nested"], MESSAGES["crlf"]):
        box.add(raw)
    model = tmp_path / "m.nb"
    result = run(["train", tmp_path / "c", "-o", model])
    assert result.exit_code == 0, result.stderr
    clf = modelfile.load(str(model))
    assert clf.model.class_count.tolist() == [2, 2]
    assert clf.meta["mail_documents"] == 4
    # the mail model: complement, tf-log, length-norm, alpha 0.3 / N, unknown terms skipped
    assert clf.model.kind == "complement" and clf.model.alpha_per_document == 0.3 and clf.model.unknown == "skip"
    assert clf.model.alpha == 0.3 / clf.model.class_count.sum()
    assert clf.vocabulary.index_of("subject:limited") >= 0


def test_text_corpora_keep_the_text_defaults(tmp_path):
    (tmp_path / "c" / "a").mkdir(parents=True)
    (tmp_path / "c" / "b").mkdir(parents=True)
    (tmp_path / "c" / "a" / "1").write_text("apples and pears")
    (tmp_path / "c" / "b" / "1").write_text("cars and trucks")
    assert run(["train", tmp_path / "c", "-o", tmp_path / "m.nb", "-q"]).exit_code == 0
    clf = modelfile.load(str(tmp_path / "m.nb"))
    assert clf.model.alpha == 1.0 and clf.model.unknown == "skip"


def test_predict_on_an_mbox_prints_one_line_per_message(tmp_path, small_model):
    (tmp_path / "in.mbox").write_bytes(mbox_of(ALL))
    result = run(["predict", small_model, tmp_path / "in.mbox"])
    assert result.exit_code == 0
    assert [line.split("\t")[0] for line in result.stdout.splitlines()] == [
        f"{tmp_path / 'in.mbox'}:{i}" for i in range(1, 9)
    ]
    piped = run(["predict", small_model, "-"], input=mbox_of(ALL))
    assert len(piped.stdout.splitlines()) == 8

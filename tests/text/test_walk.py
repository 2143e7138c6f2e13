"""Walking corpus folders (issue 12, defects 7, 8 and part of 2): only
regular files are read, nothing blocks, nothing is skipped without a
warning, inputs that cannot be read make the exit status 1 (grep's rule),
and --strict makes any skipped input an error."""

from __future__ import annotations

import errno
import os
import shutil

import pytest

from nbcli.errors import NbcliError
from nbcli.text.sources import ReadOptions, documents_in, labeled_corpus
from nbcli.text.walk import list_files

from conftest import make_docs, run, run_process


@pytest.fixture
def corpus(tmp_path, make_class_folders):
    texts, labels = make_docs(40, seed=3, classes=["code", "food"])
    return make_class_folders(texts, labels, name="walked")


@pytest.fixture
def no_hang():
    """Fail, not hang, if an in-process read blocks (on a FIFO): a hang
    guard of 20 s for what takes milliseconds."""
    import signal

    def expire(signum, frame):
        raise TimeoutError("blocked for 20 s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def n_documents(stderr: str) -> int:
    return int(stderr.split("wrote ")[1].split(": ")[1].split(" documents")[0])


# -- FIFOs and devices (defect 7) ------------------------------------------------


def test_a_fifo_in_a_class_folder_is_skipped_with_a_warning_and_training_finishes(tmp_path, corpus):
    os.mkfifo(corpus / "code" / "pipe")
    model = tmp_path / "m.nb"
    result = run_process(["train", corpus, "-o", model], timeout=60)
    assert result.returncode == 0, result.stderr
    assert f"nbcli: warning: skipping {corpus / 'code' / 'pipe'}: a FIFO, not a regular file" in result.stderr.decode()
    assert n_documents(result.stderr.decode()) == 40 and model.exists()


def test_predict_and_cross_validation_skip_a_fifo_in_a_folder(tmp_path, corpus, small_model):
    os.mkfifo(corpus / "food" / "pipe")
    predicted = run_process(["predict", small_model, corpus], timeout=60)
    assert predicted.returncode == 0 and len(predicted.stdout.splitlines()) == 40
    assert b"a FIFO, not a regular file" in predicted.stderr
    cv = run_process(["eval", "--cv", "2", corpus], timeout=120)
    assert cv.returncode == 0 and b"a FIFO, not a regular file" in cv.stderr


def test_a_fifo_named_on_the_command_line_is_read(tmp_path, small_model):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    pid = os.fork()
    if pid == 0:  # the writer
        with open(fifo, "wb") as fh:
            fh.write(b"oven recipe flour butter garlic")
        os._exit(0)
    try:
        result = run_process(["predict", small_model, fifo], timeout=60)
    finally:
        os.waitpid(pid, 0)
    assert result.returncode == 0 and result.stdout.decode().split("\t")[1] == "food"


def test_strict_makes_a_fifo_an_error_before_a_model_is_written(tmp_path, corpus):
    os.mkfifo(corpus / "code" / "pipe")
    model = tmp_path / "m.nb"
    result = run(["train", corpus, "-o", model, "--strict"])
    assert result.exit_code == 1
    assert result.stderr == (
        f"nbcli: error: {corpus / 'code' / 'pipe'}: a FIFO, not a regular file; --strict makes every skipped "
        "input an error\n"
    )
    assert not model.exists()


def test_a_fifo_in_a_maildir_is_skipped(tmp_path, no_hang):
    box = tmp_path / "box"
    for sub in ("cur", "new", "tmp"):
        (box / sub).mkdir(parents=True)
    (box / "new" / "1").write_bytes(b"Subject: hi\n\nhello\n")
    os.mkfifo(box / "new" / "2")
    warnings = []
    docs = list(documents_in(str(box), ReadOptions(warn=warnings.append))[0]())
    assert [d.id for d in docs] == [str(box / "new" / "1")]
    assert warnings == [f"skipping {box / 'new' / '2'}: a FIFO, not a regular file"]


def test_a_file_replaced_by_a_fifo_after_the_listing_does_not_block(tmp_path, no_hang):
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "a.txt").write_text("words")
    warnings = []
    make, _ = documents_in(str(folder), ReadOptions(warn=warnings.append))
    (folder / "a.txt").unlink()
    os.mkfifo(folder / "a.txt")
    assert list(make()) == []  # would block in open() without O_NONBLOCK
    assert warnings == [f"skipping {folder / 'a.txt'}: a FIFO, not a regular file"]


# -- links, loops and unreadable folders (defect 8) -----------------------------


def test_a_linked_sub_folder_is_followed(tmp_path, corpus):
    elsewhere = tmp_path / "elsewhere"
    shutil.move(corpus / "food", elsewhere)
    (corpus / "food").mkdir()
    (corpus / "food" / "more").symlink_to(elsewhere)
    result = run(["train", corpus, "-o", tmp_path / "m.nb"])
    assert result.exit_code == 0, result.stderr
    assert n_documents(result.stderr) == 40 and "warning" not in result.stderr


def test_a_link_loop_ends_with_a_warning(tmp_path, corpus):
    (corpus / "code" / "loop").symlink_to(corpus / "code")
    (corpus / "food" / "sub").mkdir()
    (corpus / "food" / "sub" / "up").symlink_to(corpus / "food")
    result = run_process(["train", corpus, "-o", tmp_path / "m.nb"], timeout=60)
    err = result.stderr.decode()
    assert result.returncode == 0, err
    assert (
        f"skipping {corpus / 'code' / 'loop'}: the same folder as {corpus / 'code'} (a link), which is read once" in err
    )
    assert f"skipping {corpus / 'food' / 'sub' / 'up'}: the same folder as {corpus / 'food'}" in err
    assert n_documents(err) == 40


def test_a_deep_tree_is_walked_without_recursion(tmp_path):
    path = tmp_path / "deep"
    path.mkdir()
    deep = str(path)
    folders = []
    for _ in range(1200):  # deeper than Python's recursion limit
        deep = os.path.join(deep, "d")
        os.mkdir(deep)
        folders.append(deep)
    try:
        with open(os.path.join(deep, "f"), "w") as fh:
            fh.write("x")
        assert list_files(str(path)) == [os.path.join(deep, "f")]
    finally:  # pytest's clean-up (shutil.rmtree) would recurse too deep
        os.unlink(os.path.join(deep, "f"))
        for folder in reversed(folders):
            os.rmdir(folder)


def _deny(monkeypatch, function: str, denied, err=errno.EACCES):
    """Make os.FUNCTION fail for a path (or a set of paths), as for a folder
    or file the user may not read (the tests run as root, where chmod 000
    does not stop reads)."""
    real = getattr(os, function)
    denied = {denied} if isinstance(denied, str) else set(denied)

    def fake(path, *args, **kw):
        if isinstance(path, (str, bytes, os.PathLike)) and os.fspath(path) in denied:
            raise OSError(err, os.strerror(err), os.fspath(path))
        return real(path, *args, **kw)

    monkeypatch.setattr(os, function, fake)


def test_an_unreadable_sub_folder_warns_and_makes_the_exit_status_1_but_the_model_is_written(
    tmp_path, corpus, monkeypatch
):
    (corpus / "food" / "locked").mkdir()
    (corpus / "food" / "locked" / "x.txt").write_text("lost words")
    _deny(monkeypatch, "scandir", str(corpus / "food" / "locked"))
    model = tmp_path / "m.nb"
    result = run(["train", corpus, "-o", model])
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert lines[0] == f"nbcli: warning: skipping the folder {corpus / 'food' / 'locked'}: Permission denied"
    assert lines[1].startswith("nbcli: wrote ") and n_documents(lines[1]) == 40
    assert lines[2].startswith(
        f"nbcli: error: 1 input(s) could not be read: the folder {corpus / 'food' / 'locked'}: Permission denied"
    )
    assert model.exists()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_unreadable_file_makes_the_exit_status_1_also_when_workers_read_the_files(
    tmp_path, corpus, monkeypatch, jobs
):
    # With -j 2 the files are opened in forked workers (which inherit the
    # patched os.open) and their warnings are said by the parent.
    denied = str(corpus / "code" / sorted(os.listdir(corpus / "code"))[0])
    _deny(monkeypatch, "open", denied)
    model = tmp_path / "m.nb"
    result = run(["train", corpus, "-o", model, "-j", jobs])
    assert result.exit_code == 1, result.stderr
    assert f"nbcli: warning: skipping {denied}: Permission denied" in result.stderr
    assert n_documents(result.stderr) == 39 and model.exists()
    assert result.stderr.splitlines()[-1].startswith("nbcli: error: 1 input(s) could not be read")


def test_workers_report_unreadable_files_in_file_order_as_one_process_does(tmp_path, corpus, monkeypatch):
    denied = [
        str(corpus / cls / sorted(os.listdir(corpus / cls))[i]) for cls, i in (("food", 5), ("code", 17), ("code", 2))
    ]
    _deny(monkeypatch, "open", denied)
    stderr = {}
    for jobs in ("1", "2"):
        result = run(["train", corpus, "-o", tmp_path / "m.nb", "-j", jobs])
        assert result.exit_code == 1
        stderr[jobs] = result.stderr
    assert stderr["1"] == stderr["2"]
    assert [line.split("skipping ")[1].rsplit(": ", 1)[0] for line in stderr["2"].splitlines()[:3]] == sorted(denied)
    assert "3 input(s) could not be read" in stderr["2"]


def test_predict_goes_on_after_an_unreadable_file_and_exits_1(tmp_path, corpus, small_model, monkeypatch):
    denied = str(corpus / "food" / sorted(os.listdir(corpus / "food"))[0])
    _deny(monkeypatch, "open", denied, errno.EIO)
    result = run(["predict", small_model, corpus])
    assert result.exit_code == 1
    assert len(result.stdout.splitlines()) == 39
    assert f"skipping {denied}: Input/output error" in result.stderr


def test_strict_stops_at_an_unreadable_file(tmp_path, corpus, monkeypatch):
    denied = str(corpus / "code" / sorted(os.listdir(corpus / "code"))[0])
    _deny(monkeypatch, "open", denied)
    model = tmp_path / "m.nb"
    result = run(["train", corpus, "-o", model, "--strict"])
    assert result.exit_code == 1 and not model.exists()
    assert result.stderr == f"nbcli: error: {denied}: Permission denied; --strict makes every skipped input an error\n"


def test_a_dangling_link_is_an_input_that_could_not_be_read(tmp_path, corpus):
    (corpus / "code" / "gone.txt").symlink_to(tmp_path / "nowhere")
    result = run(["train", corpus, "-o", tmp_path / "m.nb"])
    assert result.exit_code == 1
    assert f"skipping {corpus / 'code' / 'gone.txt'}: No such file or directory" in result.stderr


def test_an_unreadable_corpus_folder_is_a_one_line_error(tmp_path, corpus, monkeypatch):
    _deny(monkeypatch, "scandir", str(corpus))
    result = run(["train", corpus, "-o", tmp_path / "m.nb"])
    assert result.exit_code == 1
    assert result.stderr == f"nbcli: error: cannot read the folder {corpus}: Permission denied\n"


def test_the_report_counts_unreadable_inputs_only():
    from nbcli.text.documents import Skipped, Unreadable
    from nbcli.text.walk import InputReport

    said = []
    report = InputReport(said.append)
    report(Skipped("skipping a: a FIFO, not a regular file"))
    report("a.txt: larger than --max-doc-bytes")
    report.check()  # skipped by rule: warnings only
    report(Unreadable("skipping b: Permission denied"))
    with pytest.raises(Exception, match=r"1 input\(s\) could not be read: b: Permission denied"):
        report.check()
    assert len(said) == 3


# -- nbcli's own files in a corpus folder (part of defect 2) ---------------------


def test_a_model_written_into_the_corpus_folder_is_not_read_back(tmp_path, corpus):
    model = tmp_path / "m.nb"
    assert run(["train", corpus, "-o", model, "-q"]).exit_code == 0
    shutil.copy(model, corpus / "code" / "old.nb")
    (corpus / "code" / ".old.nb.lock").write_bytes(b"")
    again = run(["train", corpus, "-o", tmp_path / "m2.nb"])
    assert again.exit_code == 0, again.stderr
    assert f"nbcli: warning: skipping {corpus / 'code' / 'old.nb'}: an nbcli model file" in again.stderr
    assert n_documents(again.stderr) == 40 and "lock" not in again.stderr


def test_a_models_journal_in_the_corpus_folder_is_not_read_back(tmp_path, corpus):
    """A model kept in the corpus folder keeps its journal beside it
    (MODEL.journal, once it learns): both are skipped, not read as a
    document of binary junk."""
    model = corpus / "code" / "kept.nb"
    assert run(["train", corpus, "-o", tmp_path / "m.nb", "-q"]).exit_code == 0
    shutil.copy(tmp_path / "m.nb", model)
    journal = corpus / "code" / "kept.nb.journal"
    journal.write_bytes(b"nbcli-journal 1 " + b"0" * 64 + b"\nNBJR" + bytes(40))
    warnings = []
    docs = labeled_corpus([str(corpus)], [], ReadOptions(warn=warnings.append))
    assert sum(1 for _ in docs) == 40
    assert f"skipping {journal}: an nbcli model's journal" in warnings
    with pytest.raises(NbcliError, match="is an nbcli model's journal, not a document"):
        list(documents_in(str(journal), ReadOptions())[0]())


def test_a_big_model_file_in_a_folder_is_recognised_too(tmp_path, corpus):
    # A model bigger than --max-doc-bytes is streamed, not read whole: its
    # first bytes are looked at all the same.
    model = tmp_path / "m.nb"
    assert run(["train", corpus, "-o", model, "-q"]).exit_code == 0
    shutil.copy(model, corpus / "food" / "old.nb")
    warnings = []
    docs = labeled_corpus([str(corpus)], [], ReadOptions(warn=warnings.append, max_doc_bytes=100))
    assert sum(1 for _ in docs) == 40
    assert f"skipping {corpus / 'food' / 'old.nb'}: an nbcli model file" in warnings


def test_a_model_named_as_a_document_is_an_error(tmp_path, corpus):
    """Read as a document, a model file taught a model thousands of terms of
    pickle (`learn m.nb --spam other.nb` learned it as spam): named on the
    command line it is a one-line error, and nothing is learned. A model
    over --max-doc-bytes (streamed, not read whole) is known too."""
    model, other = tmp_path / "m.nb", tmp_path / "other.nb"
    assert run(["train", corpus, "-o", model, "-q"]).exit_code == 0
    shutil.copy(model, other)
    before = model.read_bytes()
    result = run(["learn", model, "--class", "code", other])
    assert result.exit_code == 1 and result.stderr == (
        f"nbcli: error: {other} is an nbcli model file, not a document; name a model as the command's MODEL (or "
        "--model), and documents as the inputs\n"
    )
    assert model.read_bytes() == before and not (tmp_path / "m.nb.journal").exists()
    assert run(["predict", model, other]).exit_code == 1
    for limit in (100, 1 << 20):
        with pytest.raises(NbcliError, match="is an nbcli model file, not a document"):
            list(documents_in(str(other), ReadOptions(max_doc_bytes=limit))[0]())


@pytest.mark.parametrize(
    "command",
    [
        ["eval", "MODEL", "CORPUS"],
        ["eval", "--cv", "2", "CORPUS"],
        ["tune", "--cv", "2", "CORPUS"],
        ["tokens", "CORPUS"],
    ],
    ids=["eval", "eval --cv", "tune", "tokens"],
)
def test_every_reading_command_exits_1_after_an_input_that_could_not_be_read(tmp_path, corpus, small_model, command):
    (corpus / "code" / "gone.txt").symlink_to(tmp_path / "nowhere")
    args = [small_model if a == "MODEL" else corpus if a == "CORPUS" else a for a in command]
    result = run(args)
    assert result.exit_code == 1 and result.stdout  # the results are written all the same
    assert result.stderr.splitlines()[-1] == (
        f"nbcli: error: 1 input(s) could not be read: {corpus / 'code' / 'gone.txt'}: No such file or directory; "
        "the results are for the other inputs"
    )
    strict = run([*args, "--strict"])
    assert strict.exit_code == 1 and strict.stderr == (
        f"nbcli: error: {corpus / 'code' / 'gone.txt'}: No such file or directory; --strict makes every skipped "
        "input an error\n"
    )

"""Reading corpora: layouts, paths, files and stdin, and bytes that must not crash (tables: test_table_sources.py)."""

import os

import pytest

from nbcli.errors import NbcliError
from nbcli.text.decode import decode_bytes
from nbcli.text.sources import ReadOptions, documents_in, labeled_corpus


def docs_of(corpus):
    return [(d.id, d.label, d.data) for d in corpus]


def test_class_folders_recursive_hidden_skipped(tmp_path):
    root = tmp_path / "c"
    (root / "spam" / "deep" / "er").mkdir(parents=True)
    (root / "ham").mkdir()
    (root / ".git").mkdir()
    (root / ".git" / "x").write_text("not a class")
    (root / "spam" / "1.txt").write_text("buy now")
    (root / "spam" / "deep" / "er" / "2.eml").write_text("cheap pills")
    (root / "spam" / ".hidden").write_text("secret")
    (root / "ham" / "a").write_text("hello mum")
    (root / "ham" / ".cache").mkdir()
    (root / "ham" / ".cache" / "b").write_text("cached")
    warnings = []
    corpus = labeled_corpus([str(root)], [], ReadOptions(warn=warnings.append))
    assert corpus.total == 3
    got = docs_of(corpus)
    assert got == [
        (str(root / "ham" / "a"), "ham", b"hello mum"),
        (str(root / "spam" / "1.txt"), "spam", b"buy now"),
        (str(root / "spam" / "deep" / "er" / "2.eml"), "spam", b"cheap pills"),
    ]
    assert warnings == []


def test_label_pairs_take_files_and_folders(tmp_path):
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "1").write_text("one")
    (tmp_path / "s" / "2").write_text("two")
    (tmp_path / "h.txt").write_text("three")
    corpus = labeled_corpus([], [("spam", str(tmp_path / "s")), ("ham", str(tmp_path / "h.txt"))], ReadOptions())
    assert [(d.label, d.data) for d in corpus] == [("spam", b"one"), ("spam", b"two"), ("ham", b"three")]


def test_folder_without_classes_and_missing_paths(tmp_path):
    (tmp_path / "flat").mkdir()
    (tmp_path / "flat" / "doc.txt").write_text("x")
    with pytest.raises(NbcliError, match="has no class sub-folders.*use pairs='CLASS=PATH'$"):
        labeled_corpus([str(tmp_path / "flat")], [], ReadOptions())
    with pytest.raises(NbcliError, match="no such file or folder"):
        labeled_corpus([str(tmp_path / "nope")], [], ReadOptions())
    with pytest.raises(NbcliError, match="doc.txt has no labels; give a folder with one sub-folder per class"):
        labeled_corpus([str(tmp_path / "flat" / "doc.txt")], [], ReadOptions())


def test_any_bytes_never_crash(tmp_path):
    root = tmp_path / "c" / "x"
    root.mkdir(parents=True)
    (root / "binary").write_bytes(bytes(range(256)) * 100)
    (root / "empty").write_bytes(b"")
    (root / "latin1").write_bytes("naïve façade".encode("latin-1"))
    (root / "huge").write_bytes(b"word " * 300_000)  # 1.5 MB
    warnings = []
    opts = ReadOptions(max_doc_bytes=1_000_000, warn=warnings.append)
    got = {os.path.basename(i): d for i, _, d in docs_of(labeled_corpus([str(tmp_path / "c")], [], opts))}
    assert len(got["huge"]) == 1_000_000 and got["empty"] == b""
    assert decode_bytes(got["latin1"]) == "naïve façade"
    assert any("larger than --max-doc-bytes" in w for w in warnings)


def test_predict_inputs(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "1").write_text("a")
    (tmp_path / "d" / "t.jsonl").write_text('{"text": "b"}\n{"text": "c"}\n')
    make, total = documents_in(str(tmp_path / "d"), ReadOptions())
    assert [(d.id, d.label, d.data) for d in make()] == [
        (str(tmp_path / "d" / "1"), None, b"a"),
        (f"{tmp_path / 'd' / 't.jsonl'}:1", None, "b"),
        (f"{tmp_path / 'd' / 't.jsonl'}:2", None, "c"),
    ]
    make, total = documents_in(str(tmp_path / "d" / "t.jsonl"), ReadOptions(input_format="text"))
    assert total == 1 and len(list(make())) == 1


MBOX = (
    b"From a@example.org Thu Jan  1 00:00:00 2026\nSubject: one\n\nfirst\n>From here on, text\n\n"
    b"From b@example.org Thu Jan  1 00:00:00 2026\nSubject: two\n\nsecond\n\n"
    b"From c@example.org Thu Jan  1 00:00:00 2026\nSubject: three\n\nno newline at the end"
)


def test_small_files_are_read_whole_and_big_ones_streamed_alike(tmp_path):
    """A file within --max-doc-bytes is read in one piece; a bigger mbox is
    read as a stream. Both cut an mbox into the same entries, which joined
    give back the file byte for byte."""
    path = tmp_path / "box"
    path.write_bytes(MBOX)
    whole = [d.data for d in documents_in(str(path), ReadOptions())[0]()]
    streamed = [d.data for d in documents_in(str(path), ReadOptions(max_doc_bytes=100))[0]()]
    assert len(MBOX) > 100 and all(len(d) < 100 for d in whole)
    assert len(whole) == 3 and whole == streamed and b"".join(whole) == MBOX
    assert whole[0].endswith(b">From here on, text\n\n")


def test_a_fifo_is_read_as_a_stream(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    pid = os.fork()
    if pid == 0:  # the writer
        try:
            with open(fifo, "wb") as fh:
                fh.write(MBOX)
        finally:
            os._exit(0)
    try:
        got = [d.data for d in documents_in(str(fifo), ReadOptions())[0]()]
    finally:
        os.waitpid(pid, 0)
    assert b"".join(got) == MBOX and len(got) == 3


def test_an_unreadable_file_is_skipped_with_a_warning(tmp_path):
    root = tmp_path / "c" / "x"
    root.mkdir(parents=True)
    (root / "ok").write_text("fine words")
    (root / "gone").symlink_to(tmp_path / "nowhere")  # listed, but cannot be opened
    warnings = []
    got = docs_of(labeled_corpus([str(tmp_path / "c")], [], ReadOptions(warn=warnings.append)))
    assert [d for _, _, d in got] == [b"fine words"]
    assert warnings == [f"skipping {root / 'gone'}: No such file or directory"]

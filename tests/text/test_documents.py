"""What reading inputs gives (nbcli/text/documents.py): documents in batches
that start small, table rows as mappings, and the warnings about skipped
inputs, which travel between processes."""

import pytest

from nbcli.text.documents import Document, Row, Skipped, Unreadable, batches


def test_batches_start_small_and_double():
    docs = [Document(str(i), None, "x") for i in range(40)]
    sizes = [len(b) for b in batches(docs, max_docs=8)]
    assert sizes == [1, 2, 4, 8, 8, 8, 8, 1]
    assert sum(sizes) == 40


def test_a_quiet_input_hands_back_the_batch_so_far_and_starts_small_again():
    """None in the stream (a pipe went quiet, see mbox.mbox_entries): what
    was read comes out at once, then an empty batch passes the news on."""
    docs = [Document(str(i), None, "x") for i in range(7)]
    stream = docs[:5] + [None] + docs[5:]
    got = [[d.id for d in b] for b in batches(stream, max_docs=8, first=2)]
    assert got == [["0", "1"], ["2", "3", "4"], [], ["5", "6"]]


def test_batches_are_also_cut_by_size():
    docs = [Document(str(i), None, "x" * 100) for i in range(6)]
    assert [len(b) for b in batches(docs, max_docs=100, max_chars=250, first=100)] == [3, 3]


def test_a_row_is_a_read_only_mapping_of_its_cells():
    names = ("from", "size")
    index = {n: i for i, n in enumerate(names)}
    row = Row(names, ("alice", "12"), index)
    assert dict(row) == {"from": "alice", "size": "12"}
    assert len(row) == 2 and row["size"] == "12" and "from" in row
    with pytest.raises(KeyError):
        row["subject"]
    with pytest.raises(TypeError):
        row["size"] = "13"


def test_skipped_and_unreadable_warnings_survive_pickling():
    import pickle

    for message in (Skipped("skipping a: why"), Unreadable("skipping b: Permission denied")):
        back = pickle.loads(pickle.dumps(message))
        assert type(back) is type(message) and back == message


def test_a_skipped_warning_reads_as_an_error_line_under_strict():
    assert Skipped("skipping a.fifo: a FIFO, not a regular file").as_error() == "a.fifo: a FIFO, not a regular file"
    assert Unreadable("t.tsv:3: row has no label; skipping it").as_error() == "t.tsv:3: row has no label"
    assert isinstance(Unreadable("x"), Skipped)  # --strict stops at both

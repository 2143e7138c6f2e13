"""Reading tables (issue 12, defect 19 and the stdin friction): malformed
rows are warnings naming FILE:LINE (errors under --strict), never silently
mangled rows; a CSV quote that is never closed is reported; JSON labels
must be strings (or integers); every table path is linear in its input;
`predict -` reads a table on stdin when it unambiguously is one."""

from __future__ import annotations

import io
import time

import pytest

from nbcli.errors import NbcliError
from nbcli.text.documents import Unreadable
from nbcli.text.sources import ReadOptions, labeled_corpus
from nbcli.text.table_sources import table_docs

from conftest import run

SPACE = "star planet orbit comet galaxy"
FOOD = "oven recipe flour butter garlic"


def docs_of(corpus):
    return [(d.id, d.label, d.data) for d in corpus]


def read(tmp_path, name: str, data: bytes, **kw):
    path = tmp_path / name
    path.write_bytes(data)
    warnings: list[str] = []
    docs = docs_of(labeled_corpus([str(path)], [], ReadOptions(warn=warnings.append, **kw)))
    return docs, warnings


# -- the formats and their fields ------------------------------------------------


def test_tsv_csv_jsonl_with_default_and_custom_fields(tmp_path):
    (tmp_path / "a.tsv").write_text('label\ttext\tid\nspam\tcheap "pills"\tx1\nham\thello\t\n')
    (tmp_path / "b.csv").write_text('category,body\nham,"line one\nline two, with comma"\nspam,win\n')
    (tmp_path / "c.jsonl").write_text('{"text": "caf\\u00e9", "label": 1}\n\n{"text": "x", "label": 0, "id": 7}\n')
    opts = ReadOptions()
    assert docs_of(labeled_corpus([str(tmp_path / "a.tsv")], [], opts)) == [
        ("x1", "spam", 'cheap "pills"'),
        (f"{tmp_path / 'a.tsv'}:3", "ham", "hello"),
    ]
    csv_opts = ReadOptions(text_field="body", label_field="category")
    assert docs_of(labeled_corpus([str(tmp_path / "b.csv")], [], csv_opts)) == [
        (f"{tmp_path / 'b.csv'}:2", "ham", "line one\nline two, with comma"),
        (f"{tmp_path / 'b.csv'}:4", "spam", "win"),
    ]
    assert docs_of(labeled_corpus([str(tmp_path / "c.jsonl")], [], opts)) == [
        (f"{tmp_path / 'c.jsonl'}:1", "1", "café"),
        ("7", "0", "x"),
    ]


def test_headerless_tables_use_column_numbers(tmp_path):
    (tmp_path / "sms.tsv").write_text("ham\tsee you soon\nspam\tWIN a prize\n")
    got = docs_of(labeled_corpus([str(tmp_path / "sms.tsv")], [], ReadOptions(header=False)))
    assert [(l, t) for _, l, t in got] == [("ham", "see you soon"), ("spam", "WIN a prize")]
    with pytest.raises(NbcliError, match="is a name, but .* has no header row"):
        docs_of(labeled_corpus([str(tmp_path / "sms.tsv")], [], ReadOptions(header=False, text_field="text")))


def test_missing_columns_are_errors_with_the_fix(tmp_path):
    (tmp_path / "a.tsv").write_text("kind\tbody\nspam\tx\n")
    with pytest.raises(
        NbcliError, match=r"has no column 'text' \(its columns: kind, body\); name the text column with text_field$"
    ):
        docs_of(labeled_corpus([str(tmp_path / "a.tsv")], [], ReadOptions()))
    (tmp_path / "b.jsonl").write_text('{"body": "x", "label": "a"}\n')
    with pytest.raises(NbcliError, match=r"record has no field 'text' \(its fields: body, label\)"):
        docs_of(labeled_corpus([str(tmp_path / "b.jsonl")], [], ReadOptions()))


def test_a_column_name_the_header_holds_twice_is_an_error_where_it_is_used(tmp_path):
    """Two columns of one name: reading 'the' column (the first, as it
    was) or training a table model on both (one was silently dropped: a
    model keeps columns by name) is an error naming both columns."""
    (tmp_path / "a.csv").write_text("text,text,label\nfirst,second,x\n")
    with pytest.raises(NbcliError, match=r"has 2 columns named 'text' \(columns 1, 2\); rename one in the header, or"):
        docs_of(labeled_corpus([str(tmp_path / "a.csv")], [], ReadOptions()))
    # by number it is no question which
    assert [t for _, _, t in docs_of(labeled_corpus([str(tmp_path / "a.csv")], [], ReadOptions(text_field="2")))] == [
        "second"
    ]
    (tmp_path / "b.csv").write_text("a,a,label\n1,2,x\n3,4,y\n")
    result = run(["train", tmp_path / "b.csv", "--features", "all", "-o", tmp_path / "b.nb"])
    assert result.exit_code == 1 and result.stderr.count("\n") == 1 and not (tmp_path / "b.nb").exists()
    assert "b.csv has 2 columns named 'a' (columns 1, 2); rename one in the header" in result.stderr
    # a name given twice that nothing reads is no one's business
    (tmp_path / "c.csv").write_text("note,note,text,label\n,,hello,x\n")
    assert [t for _, _, t in docs_of(labeled_corpus([str(tmp_path / "c.csv")], [], ReadOptions()))] == ["hello"]


def test_bad_rows_are_skipped_with_warnings(tmp_path):
    (tmp_path / "a.jsonl").write_bytes(
        b'{"text": "ok", "label": "a"}\n{broken\n[1,2]\n{"text": "no label"}\n{"text": "\xff\xfe bad bytes", '
        b'"label": "b"}\n'
    )
    warnings = []
    got = docs_of(labeled_corpus([str(tmp_path / "a.jsonl")], [], ReadOptions(warn=warnings.append)))
    assert [(l, t) for _, l, t in got] == [("a", "ok"), ("b", "ÿþ bad bytes")]
    assert len(warnings) == 3 and "a.jsonl:2: not valid JSON" in warnings[0]


def test_a_record_nested_deeper_than_the_json_parser_goes_is_skipped_with_a_warning(tmp_path):
    deep = b'{"text": ' + b"[" * 10**5 + b"]" * 10**5 + b', "label": "b"}\n'
    (tmp_path / "a.jsonl").write_bytes(b'{"text": "ok", "label": "a"}\n' + deep + b'{"text": "fine", "label": "b"}\n')
    warnings = []
    got = docs_of(labeled_corpus([str(tmp_path / "a.jsonl")], [], ReadOptions(warn=warnings.append)))
    assert [(l, t) for _, l, t in got] == [("a", "ok"), ("b", "fine")]
    assert len(warnings) == 1 and "a.jsonl:2: not valid JSON" in warnings[0]
    (tmp_path / "b.jsonl").write_bytes(deep)  # its first line, where the format is sniffed
    result = run(["train", tmp_path / "b.jsonl", "-o", tmp_path / "m.nb"])
    assert result.exit_code == 1 and "b.jsonl:1: not valid JSON" in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("nbcli: error: the corpus has no documents")


# -- TSV and CSV rows ----------------------------------------------------------


def test_a_tsv_row_with_an_extra_field_is_skipped_with_its_line(tmp_path):
    docs, warnings = read(tmp_path, "a.tsv", f"label\ttext\nspace\t{SPACE}\tstray\nfood\t{FOOD}\n".encode())
    assert [label for _, label, _ in docs] == ["food"]
    assert warnings == [f"{tmp_path / 'a.tsv'}:2: 3 fields but the header has 2 (stray tabs in the text?); skipping it"]


def test_strict_makes_a_malformed_row_an_error_and_writes_no_model(tmp_path):
    (tmp_path / "a.tsv").write_text(f"label\ttext\nspace\t{SPACE}\tstray\nfood\t{FOOD}\nspace\t{SPACE}\n")
    model = tmp_path / "m.nb"
    result = run(["train", tmp_path / "a.tsv", "-o", model, "--strict"])
    assert result.exit_code == 1 and not model.exists()
    assert result.stderr == (
        f"nbcli: error: {tmp_path / 'a.tsv'}:2: 3 fields but the header has 2 (stray tabs in the text?); "
        "--strict makes every skipped input an error\n"
    )
    relaxed = run(["train", tmp_path / "a.tsv", "-o", model])
    assert relaxed.exit_code == 0 and "a.tsv:2: 3 fields" in relaxed.stderr and model.exists()


def test_a_csv_quote_that_is_never_closed_is_reported_with_its_line_and_exit_status_1(tmp_path):
    csv = f'label,text\nspace,"{SPACE}\nfood,{FOOD}\nspace,{SPACE}\n'
    (tmp_path / "a.csv").write_text(csv)
    result = run(["train", tmp_path / "a.csv", "-o", tmp_path / "m.nb"])
    assert result.exit_code == 1
    assert result.stderr.startswith(
        f"nbcli: warning: {tmp_path / 'a.csv'}:2: a quoted field starts in this row and is never closed; "
        "skipping the rest of the file (lines 2-4)\n"
    )


def test_a_csv_syntax_error_skips_that_row_only(tmp_path):
    docs, warnings = read(
        tmp_path, "a.csv", f'label,text\nspace,"{SPACE}"x\nfood,{FOOD}\nspace,"{SPACE}\nstill"\n'.encode()
    )
    assert [(label, text) for _, label, text in docs] == [("food", FOOD), ("space", f"{SPACE}\nstill")]
    assert len(warnings) == 1 and warnings[0].startswith(f"{tmp_path / 'a.csv'}:2: not valid CSV (")


def test_a_carriage_return_in_an_unquoted_csv_field_is_a_warning_not_an_internal_error(tmp_path):
    (tmp_path / "a.csv").write_bytes(f"label,text\nspace,star\rplanet\nfood,{FOOD}\nspace,{SPACE}\n".encode())
    result = run(["train", tmp_path / "a.csv", "-o", tmp_path / "m.nb"])
    assert result.exit_code == 0, result.stderr
    assert result.stderr.startswith(
        f"nbcli: warning: {tmp_path / 'a.csv'}:2: not valid CSV (a carriage return in an unquoted field); "
        "skipping line 2\n"
    )


def test_a_csv_row_with_an_extra_field_is_skipped(tmp_path):
    docs, warnings = read(tmp_path, "a.csv", f"label,text\nspace,{SPACE}, and more\nfood,{FOOD}\n".encode())
    assert [label for _, label, _ in docs] == ["food"]
    assert warnings == [
        f"{tmp_path / 'a.csv'}:2: 3 fields but the header has 2 (stray commas in the text?); skipping it"
    ]


def test_a_csv_with_a_10_mb_quoted_field_is_read_in_linear_time(tmp_path):
    big = b"word more\n" * 1_000_000
    data = b'label,text\nspace,"' + big + b'"\nfood,' + FOOD.encode() + b"\n"
    start = time.perf_counter()
    docs, warnings = read(tmp_path, "a.csv", data)
    assert time.perf_counter() - start < 10  # a hang guard; it takes about 0.5 s
    assert [len(text) for _, _, text in docs] == [len(big), len(FOOD)] and warnings == []


def test_a_quote_never_closed_in_a_big_csv_costs_linear_time_and_the_cap_bounds_it(tmp_path):
    data = b'label,text\nspace,"oops\n' + b"food,row text here\n" * 200_000
    start = time.perf_counter()
    docs, warnings = read(tmp_path, "a.csv", data, max_doc_bytes=100_000)
    assert time.perf_counter() - start < 10
    # the field reaches the cap, that part is skipped, and reading resumes
    assert warnings[0].startswith(f"{tmp_path / 'a.csv'}:2: a field longer than 165536 bytes; skipping lines 2-")
    assert len(docs) > 190_000


def test_a_read_error_in_a_table_is_an_input_that_could_not_be_read():
    class Failing(io.BytesIO):
        def readline(self, limit=-1):
            if self.tell() > 20:
                raise OSError(5, "Input/output error")
            return super().readline(limit)

    warnings = []
    stream = Failing(f"label\ttext\nspace\t{SPACE}\nfood\t{FOOD}\n".encode())
    docs = list(table_docs(stream, "tsv", "t.tsv", None, True, ReadOptions(warn=warnings.append)))
    assert len(docs) == 1
    assert warnings == ["skipping the rest of t.tsv (from line 3): Input/output error"]
    assert isinstance(warnings[0], Unreadable)


# -- JSON lines ------------------------------------------------------------------


def test_a_json_label_that_is_not_a_string_is_refused_with_its_line(tmp_path):
    lines = [
        '{"text": "a", "label": ["x"]}',
        '{"text": "b", "label": {"k": 1}}',
        '{"text": "c", "label": true}',
        '{"text": "d", "label": 1.5}',
        '{"text": "e", "label": 1}',
        '{"text": "f", "label": "y"}',
    ]
    docs, warnings = read(tmp_path, "a.jsonl", ("\n".join(lines) + "\n").encode())
    assert [(text, label) for _, label, text in docs] == [("e", "1"), ("f", "y")]
    name = tmp_path / "a.jsonl"
    assert warnings == [
        f"{name}:1: label 'label' is a list, not a string or an integer; skipping it",
        f"{name}:2: label 'label' is an object, not a string or an integer; skipping it",
        f"{name}:3: label 'label' is true, not a string or an integer; skipping it",
        f"{name}:4: label 'label' is a number, not a string or an integer; skipping it",
    ]


def test_training_on_a_list_label_no_longer_makes_a_class_named_after_the_list(tmp_path):
    (tmp_path / "a.jsonl").write_text(
        f'{{"text": "{SPACE}", "label": ["x"]}}\n{{"text": "{SPACE}", "label": "space"}}\n{{"text": "{FOOD}", '
        f'"label": "food"}}\n'
    )
    result = run(["train", tmp_path / "a.jsonl", "-o", tmp_path / "m.nb"])
    assert result.exit_code == 0, result.stderr
    assert "(food 1, space 1)" in result.stderr and "['x']" not in result.stderr


def test_a_json_text_that_is_not_a_string_is_refused(tmp_path):
    lines = [
        '{"text": null, "label": "a"}',
        '{"text": 42, "label": "a"}',
        '{"text": ["w"], "label": "a"}',
        '{"text": "ok", "label": "a"}',
    ]
    docs, warnings = read(tmp_path, "a.jsonl", ("\n".join(lines) + "\n").encode())
    assert [text for _, _, text in docs] == ["ok"]
    assert [w.split(": ", 1)[1] for w in warnings] == [
        "'text' is null, not a string; skipping it",
        "'text' is a number, not a string; skipping it",
        "'text' is a list, not a string; skipping it",
    ]


# -- tables on stdin for predict ------------------------------------------------


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "m.nb"
    (tmp_path / "t.tsv").write_text(f"label\ttext\nspace\t{SPACE}\nfood\t{FOOD}\n")
    assert run(["train", tmp_path / "t.tsv", "-o", path, "-q"]).exit_code == 0
    return path


@pytest.mark.parametrize(
    "table",
    [
        f'{{"id": "r1", "text": "{SPACE}"}}\n{{"id": "r2", "text": "{FOOD}"}}\n',
        f"id\ttext\nr1\t{SPACE}\nr2\t{FOOD}\n",
        f'id,text\nr1,{SPACE}\nr2,"{FOOD}"\n',
        f"\n\nid,text,label\nr1,{SPACE},\nr2,{FOOD},\n",
    ],
    ids=["jsonl", "tsv", "csv", "csv after blank lines"],
)
def test_predict_reads_a_table_on_stdin_as_train_does(model, table):
    result = run(["predict", model, "-"], input=table)
    assert result.exit_code == 0, result.stderr
    assert [line.split("\t")[:2] for line in result.stdout.splitlines()] == [["r1", "space"], ["r2", "food"]]


@pytest.mark.parametrize(
    "document",
    [
        f"From: someone@example.org\nSubject: {SPACE}\n\n{SPACE}\n",
        f"{SPACE}\n{FOOD}\n",
        f"Hello, text\n{SPACE}\n",
        f"{{not json}}\n{SPACE}\n",
        f'{{"body": "{FOOD}"}}\n{SPACE}\n',
    ],
    ids=["mail", "plain text", "a sentence with commas", "braces", "json without the text field"],
)
def test_predict_reads_anything_else_on_stdin_as_one_document(model, document):
    result = run(["predict", model, "-"], input=document)
    assert result.exit_code == 0, result.stderr
    assert len(result.stdout.splitlines()) == 1 and result.stdout.startswith("-\t")


def test_predict_reads_a_tsv_file_without_a_label_column(model, tmp_path):
    (tmp_path / "in.tsv").write_text(f"id\ttext\nr1\t{SPACE}\n")
    result = run(["predict", model, tmp_path / "in.tsv"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.split("\t")[:2] == ["r1", "space"]

"""The text package's errors name the library's parameters (errors.ParameterError),
and the command line says the same errors with its flags (issue 26: the library
never speaks in flags). Each case: the library's text, then the CLI's line."""

from __future__ import annotations

import pytest

from nbcli.errors import ParameterError
from nbcli.text.analyzer import AnalyzerOptions
from nbcli.text.documents import Skipped
from nbcli.text.sources import ReadOptions, documents_in, labeled_corpus, parse_label_pair
from nbcli.text.walk import InputReport

from conftest import one_line_error, run


def _library_text(call) -> str:
    with pytest.raises(ParameterError) as caught:
        call()
    return str(caught.value)


def test_analyzer_options_name_fields_and_train_says_flags(tmp_path, make_class_folders):
    long_word = tmp_path / "stop.txt"
    long_word.write_text("x" * 5000)
    assert _library_text(lambda: AnalyzerOptions(ngrams=9).check()) == "ngrams must be between 1 and 8, not 9"
    assert _library_text(lambda: AnalyzerOptions(max_message_bytes=0).check()) == (
        "max_message_bytes must be between 1 byte and 64M, not 0; the analysis of one message is bounded by it"
    )
    assert _library_text(lambda: AnalyzerOptions(stop_words=("x" * 5000,)).check()) == (
        "stop_words: at most 1,000,000 words of at most 1000 characters each"
    )
    assert _library_text(lambda: AnalyzerOptions(token_pattern="(a)(b)").check()) == (
        "token_pattern '(a)(b)' has 2 capturing groups; use at most one capturing group; write the others as (?:...)"
    )
    corpus = make_class_folders(["one two", "three four"], ["a", "b"])
    out = tmp_path / "m.nb"
    assert one_line_error(run(["train", corpus, "-o", out, "--stop-words", long_word])) == (
        "nbcli: error: --stop-words: at most 1,000,000 words of at most 1000 characters each"
    )
    assert one_line_error(run(["train", corpus, "-o", out, "--token-pattern", "(a)(b)"])) == (
        "nbcli: error: --token-pattern '(a)(b)' has 2 capturing groups; use at most one capturing group; "
        "write the others as (?:...)"
    )


def test_corpus_layout_errors_name_pairs_and_input_format(tmp_path):
    flat = tmp_path / "flat"
    flat.mkdir()
    (flat / "doc.txt").write_text("x")
    assert _library_text(lambda: labeled_corpus([str(flat)], [], ReadOptions())) == (
        f"{flat} has no class sub-folders; put each class's documents in a sub-folder named after the class, "
        "or use pairs='CLASS=PATH'"
    )
    assert _library_text(lambda: labeled_corpus([str(flat / "doc.txt")], [], ReadOptions())).endswith(
        f"a .tsv/.csv/.jsonl file, or pairs='CLASS={flat / 'doc.txt'}'"
    )
    assert _library_text(lambda: documents_in(str(flat), ReadOptions(input_format="maildir"))) == (
        f"{flat} is not a Maildir (it has no cur/ and new/ folders); drop input_format='maildir'"
    )
    assert _library_text(lambda: parse_label_pair("spam")) == (
        "pairs 'spam' is not CLASS=PATH; write it as pairs='spam=path/to/spam'"
    )
    out = tmp_path / "m.nb"
    assert one_line_error(run(["train", flat, "-o", out])) == (
        f"nbcli: error: {flat} has no class sub-folders; put each class's documents in a sub-folder named after "
        "the class, or use --label CLASS=PATH"
    )
    assert one_line_error(run(["train", flat / "doc.txt", "-o", out])).endswith(
        f"a .tsv/.csv/.jsonl file, or --label CLASS={flat / 'doc.txt'}"
    )
    assert one_line_error(run(["train", "--label", f"spam={flat}", "--input-format", "maildir", "-o", out])) == (
        f"nbcli: error: {flat} is not a Maildir (it has no cur/ and new/ folders); drop --input-format maildir"
    )
    assert one_line_error(
        run(["train", "--label", f"spam={flat / 'doc.txt'}", "--input-format", "maildir", "-o", out])
    ) == (f"nbcli: error: {flat / 'doc.txt'} is not a Maildir (it is a file); drop --input-format maildir")


def test_table_field_errors_name_the_field_parameters(tmp_path):
    headed = tmp_path / "a.tsv"
    headed.write_text("label\ttext\nspam\twin money\nham\tlunch\n")
    records = tmp_path / "b.jsonl"
    records.write_text('{"body": "x", "label": "a"}\n')
    assert _library_text(lambda: list(labeled_corpus([str(headed)], [], ReadOptions(label_field="nope")))) == (
        f"{headed} has no column 'nope' (its columns: label, text); name the label column with label_field"
    )
    assert _library_text(
        lambda: list(labeled_corpus([str(headed)], [], ReadOptions(header=False, text_field="text")))
    ).endswith("has no header row (--no-header); give text_field as a column number, counting from 1")
    assert _library_text(lambda: list(labeled_corpus([str(records)], [], ReadOptions()))) == (
        f"{records}:1: record has no field 'text' (its fields: body, label); name the text field with text_field"
    )
    out = tmp_path / "m.nb"
    assert one_line_error(run(["train", headed, "-o", out, "--label-field", "nope"])) == (
        f"nbcli: error: {headed} has no column 'nope' (its columns: label, text); name the label column with "
        "--label-field"
    )
    assert one_line_error(run(["train", headed, "-o", out, "--no-header", "--text-field", "text"])) == (
        f"nbcli: error: text field 'text' is a name, but {headed} has no header row (--no-header); "
        "give --text-field as a column number, counting from 1"
    )
    assert one_line_error(run(["train", records, "-o", out])) == (
        f"nbcli: error: {records}:1: record has no field 'text' (its fields: body, label); "
        "name the text field with --text-field"
    )


def test_odd_field_values_are_one_line_errors(tmp_path):
    headed = tmp_path / "a.tsv"
    headed.write_text("label\ttext\nspam\twin money\nham\tlunch\n")
    records = tmp_path / "b.jsonl"
    records.write_text('{"text": "x", "label": "a"}\n')
    # an empty field was taken as no field at all (the default column); a digit that is not ASCII (²)
    # passed str.isdigit and failed int() ('internal error'); a column number past a header's columns
    # skipped every row with a warning each
    for field, what in (("", "''"), ("²", "'²'")):
        assert one_line_error(run(["tokens", headed, "--text-field", field])) == (
            f"nbcli: error: {headed} has no column {what} (its columns: label, text); name the text column with "
            "--text-field"
        )
    assert one_line_error(run(["tokens", headed, "--label-field", ""])).startswith(
        f"nbcli: error: {headed} has no column '' (its columns: label, text)"
    )
    assert one_line_error(run(["tokens", headed, "--no-header", "--text-field", "²"])) == (
        f"nbcli: error: text field '²' is a name, but {headed} has no header row (--no-header); "
        "give --text-field as a column number, counting from 1"
    )
    assert one_line_error(run(["tokens", headed, "--text-field", "99999999999999999999"])) == (
        f"nbcli: error: {headed} has 2 columns (label, text), not 99999999999999999999; name the text column "
        "with --text-field"
    )
    assert one_line_error(run(["tokens", headed, "--text-field", "9" * 5000])).startswith(
        f"nbcli: error: {headed} has no column '99999"  # past int()'s 4,300 digits: a name, not a number
    )
    assert one_line_error(run(["tokens", records, "--text-field", ""])) == (
        f"nbcli: error: {records}:1: record has no field '' (its fields: text, label); name the text field with "
        "--text-field"
    )


def test_strict_names_its_parameter():
    report = InputReport(lambda message: None, strict=True)
    with pytest.raises(ParameterError) as caught:
        report(Skipped("skipping x/pipe: a FIFO, not a regular file"))
    assert caught.value.parameter == "strict"
    assert str(caught.value) == "x/pipe: a FIFO, not a regular file; strict makes every skipped input an error"
    # the command line's text: tests/text/test_walk.py ("--strict makes every skipped input an error")

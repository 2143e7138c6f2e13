"""What the commands write (cli/output.py): TSV fields, ids that are not
UTF-8, the counts line of the learning commands and eval --online's report
for people."""

from types import SimpleNamespace

import numpy as np

from nbcli.cli.output import display_text, model_counts, online_text, prediction_tsv, tsv_field


def test_tsv_fields_escape_tabs_newlines_and_backslashes():
    assert tsv_field("a\tb\nc\\d\r") == "a\\tb\\nc\\\\d\\r"
    assert prediction_tsv("dir/a\tb.eml", "spam", 0.25) == "dir/a\\tb.eml\tspam\t0.25"


def test_an_id_that_is_not_utf8_is_written_with_its_bytes_escaped():
    name = b"caf\xe9.eml".decode("utf-8", "surrogateescape")
    assert display_text(name) == "caf\\xe9.eml"
    assert display_text("café.eml") == "café.eml"


def _classifier(counts, expected=None):
    model = SimpleNamespace(class_count=np.array(counts, dtype=float))
    return SimpleNamespace(model=model, classes=["ham", "spam"], vocabulary=range(340), expected=expected)


def test_model_counts_are_the_documents_learned():
    assert model_counts(_classifier([12, 8])) == "now ham 12, spam 8; 340 terms"
    # an EM model: its unlabelled documents' expected share is not counted as learned
    em = _classifier([12.4, 8.6], expected=(None, np.array([2.4, 3.6])))
    assert model_counts(em) == "now ham 10, spam 5; 340 terms"


def test_the_online_report_for_people():
    report = {
        "messages": 100,
        "order": "date",
        "train": "errors",
        "warmup": 10,
        "learned": 17,
        "errors": 7,
        "accuracy_pct": 93.0,
        "hm_pct": 2.0,
        "ham": 50,
        "sm_pct": None,
        "spam": 50,
        "lam_pct": 3.1234,
        "one_minus_roca_pct": 0.12345,
    }
    lines = online_text(report).splitlines()
    assert lines[0] == (
        "online evaluation (TREC spam-track protocol): 100 messages in date order, train errors, "
        "10 warm-up messages learned first"
    )
    assert "  errors             7 (accuracy 93.00%)" in lines
    assert "  spam misclassified n/a%  (sm%, of 50 spam)" in lines
    assert lines[-2:] == ["  lam%               3.12", "  (1-ROCA)%          0.123"]

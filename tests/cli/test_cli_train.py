"""`nbcli train`: corpora in, a model file out, one-line errors."""

import json
import re

from nbcli.store import modelfile

from conftest import make_docs, run


def test_train_from_class_folders(tmp_path, make_class_folders):
    texts, labels = make_docs(120, seed=2, classes=["ham", "spam"])
    corpus = make_class_folders(texts, labels)
    model = tmp_path / "m.nb"
    result = run(["train", corpus, "-o", model])
    assert result.exit_code == 0
    assert result.stdout == ""  # results only on stdout; train's result is the file
    assert result.stderr.startswith(f"nbcli: wrote {model}: 120 documents (ham 60, spam 60), ")
    clf = modelfile.load(str(model))
    assert clf.classes == ["ham", "spam"] and clf.meta["n_documents"] == 120


def test_train_with_label_pairs_and_quiet(tmp_path):
    (tmp_path / "spam").mkdir()
    for i in range(3):
        (tmp_path / "spam" / f"{i}.txt").write_text(f"cheap pills offer {i}")
    (tmp_path / "ham.txt").write_text("meeting notes for tomorrow")
    model = tmp_path / "m.nb"
    result = run(
        ["train", "--label", f"spam={tmp_path / 'spam'}", "--label", f"ham={tmp_path / 'ham.txt'}", "-o", model, "-q"]
    )
    assert result.exit_code == 0 and result.stderr == "" and result.stdout == ""
    clf = modelfile.load(str(model))
    assert clf.model.class_count.tolist() == [1, 3]


def test_train_from_tables_and_stdin(tmp_path):
    texts, labels = make_docs(60, seed=4, classes=["a", "b"])
    lines = "".join(json.dumps({"text": t, "label": l}) + "\n" for t, l in zip(texts, labels))
    model = tmp_path / "m.nb"
    result = run(["train", "-", "-o", model, "-q"], input=lines)
    assert result.exit_code == 0, result.stderr
    tsv = "text\tlabel\n" + "".join(f"{t}\t{l}\n" for t, l in zip(texts, labels))
    (tmp_path / "d.tsv").write_text(tsv)
    result = run(["train", tmp_path / "d.tsv", "-o", tmp_path / "m2.nb", "-q"])
    assert result.exit_code == 0
    import numpy as np

    a, b = modelfile.load(str(model)), modelfile.load(str(tmp_path / "m2.nb"))
    assert np.array_equal(a.model.weights, b.model.weights)


def test_train_options_are_recorded(tmp_path, make_class_folders):
    texts, labels = make_docs(100, seed=2, classes=["ham", "spam"])
    corpus = make_class_folders(texts, labels)
    model = tmp_path / "m.nb"
    args = [
        "train",
        corpus,
        "-o",
        model,
        "-q",
        "--alpha",
        "0.5",
        "--prior",
        "spam=0.3,ham=0.7",
        "--ngrams",
        "2",
        "--stop-words",
        "english",
        "--min-df",
        "2",
        "--max-df",
        "0.9",
        "--max-features",
        "500",
    ]
    assert run(args).exit_code == 0
    clf = modelfile.load(str(model))
    assert len(clf.vocabulary) == 500
    assert clf.model.alpha == 0.5 and clf.model.prior == {"spam": 0.3, "ham": 0.7}
    assert clf.analyzer_options.ngrams == 2 and "the" in clf.analyzer_options.stop_words
    assert clf.meta["options"]["min_df"] == 2 and clf.meta["options"]["max_df"] == 0.9


def _one_line_error(result, code, text):
    assert result.exit_code == code, (result.exit_code, result.stderr)
    assert result.stdout == ""
    assert result.stderr == text + "\n"


def test_usage_errors_exit_2_with_one_line(tmp_path):
    _one_line_error(
        run(["train", "-o", tmp_path / "m.nb"]),
        2,
        "nbcli: error: give a CORPUS or at least one --label CLASS=PATH (see 'nbcli train --help')",
    )
    _one_line_error(
        run(["train", tmp_path, "-o", "m", "--min-df", "1.5"]),
        2,
        (
            "nbcli: error: Invalid value for '--min-df': '1.5': a proportion must lie between 0.0 and 1.0 (see "
            "'nbcli train --help')"
        ),
    )
    # click words these itself; the wording may change between click versions
    for args, mentions in [
        ([tmp_path], "--output"),
        ([tmp_path, "-o", "m", "--ngrams", "0"], "--ngrams"),
        ([tmp_path, "-o", "m", "--input-format", "xml"], "'xml'"),
        ([tmp_path, "-o", "m", "--bogus"], "--bogus"),
        ([tmp_path, "-o", "m", "--alpha", "much"], "'much'"),
    ]:
        result = run(["train", *args])
        assert result.exit_code == 2 and result.stdout == ""
        assert re.fullmatch(
            r"nbcli: error: [^\n]*" + re.escape(mentions) + r"[^\n]* \(see 'nbcli train --help'\)\n", result.stderr
        )


def test_input_errors_exit_1_with_one_line(tmp_path, make_class_folders):
    model = tmp_path / "m.nb"
    _one_line_error(
        run(["train", tmp_path / "nope", "-o", model]),
        1,
        f"nbcli: error: {tmp_path / 'nope'}: no such file or folder; check the path",
    )
    (tmp_path / "empty" / "a").mkdir(parents=True)
    (tmp_path / "empty" / "b").mkdir(parents=True)
    _one_line_error(
        run(["train", tmp_path / "empty", "-o", model]),
        1,
        (
            "nbcli: error: the corpus has no documents; check the paths, and that class folders contain files "
            "(hidden files are skipped)"
        ),
    )
    one = make_class_folders(["apple banana cherry", "dog emu fox"], ["spam", "spam"], name="one")
    _one_line_error(
        run(["train", one, "-o", model]),
        1,
        "nbcli: error: the corpus has only one class (spam); a classifier needs documents of at least two classes",
    )
    two = make_class_folders(["apple banana cherry", "dog emu fox"], ["spam", "ham"], name="two")
    _one_line_error(
        run(["train", two, "-o", model, "--alpha", "0"]),
        1,
        (
            "nbcli: error: --alpha must be a positive number, not 0.0; alpha = 0 would give unseen terms probability "
            "zero; use a small value such as 0.01"
        ),
    )
    _one_line_error(
        run(["train", two, "-o", model, "--prior", "spam=0.4,eggs=0.6"]),
        1,
        "nbcli: error: --prior has no weight for ham; give a weight for each of the classes: ham, spam",
    )
    _one_line_error(
        run(["train", two, "-o", model, "--prior", "nonsense"]),
        1,
        (
            "nbcli: error: --prior 'nonsense' is not valid; use 'fit', 'uniform' or CLASS=WEIGHT pairs such as "
            "'spam=0.4,ham=0.6'"
        ),
    )
    _one_line_error(
        run(["train", two, "-o", tmp_path / "no" / "m.nb"]),
        1,
        (
            f"nbcli: error: cannot write {tmp_path / 'no' / 'm.nb'}: folder {tmp_path / 'no'} does not exist; create "
            "it first"
        ),
    )
    _one_line_error(
        run(["train", two, "-o", model, "--token-pattern", "("]),
        1,
        (
            "nbcli: error: --token-pattern '(' is not a valid regular expression (missing ), unterminated subpattern "
            "at position 0); check the pattern's syntax (Python 're')"
        ),
    )
    _one_line_error(
        run(["train", two, "-o", model, "--min-df", "5"]),
        1,
        (
            "nbcli: error: after pruning, no terms remain; try a lower --min-df, a higher --max-df or a larger "
            "--max-features"
        ),
    )
    _one_line_error(
        run(["train", "--label", "spam", "-o", model]),
        2,  # a bad option value: a usage error
        "nbcli: error: --label 'spam' is not CLASS=PATH; write it as --label spam=path/to/spam",
    )
    assert not model.exists()  # no failed run left a model behind


def test_bytes_that_are_not_text_do_not_crash_training(tmp_path):
    root = tmp_path / "c"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir(parents=True)
    (root / "a" / "bin").write_bytes(bytes(range(256)) * 50)
    (root / "a" / "empty").write_bytes(b"")
    (root / "a" / "utf16").write_bytes("hello there".encode("utf-16"))
    (root / "b" / "latin").write_bytes("déjà vu encore".encode("latin-1"))
    (root / "b" / "huge").write_bytes(b"big " * 2_000_000)
    result = run(["train", root, "-o", tmp_path / "m.nb", "--max-doc-bytes", "1M"])
    assert result.exit_code == 0, result.stderr
    assert (
        f"nbcli: warning: {root / 'b' / 'huge'}: larger than --max-doc-bytes (1048576); using its first 1048576 bytes"
        in result.stderr
    )
    clf = modelfile.load(str(tmp_path / "m.nb"))
    assert clf.vocabulary.index_of("déjà") >= 0 and clf.vocabulary.index_of("hello") >= 0

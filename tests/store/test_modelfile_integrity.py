"""Damaged and crafted model files (issue 12, defects 11, 12, 17 and 20).

A model file is refused with one line, `nbcli: error: MODEL is corrupt
(...)`, exit 1, whatever was done to it: bytes flipped on disk (the
checksum), or a payload rewritten by hand with the checksum recomputed
(the invariant checks). Never a traceback, a numpy warning, an internal
error, negative counts in `info`, or a hang.
"""

import json
import math
import os
import time
import warnings

import joblib
import numpy as np
import pytest

from nbcli.errors import ModelFileError, NbcliError
from nbcli.store import integrity, modelfile
from nbcli.text import analyzer as tokenize
from nbcli.text.analyzer import AnalyzerOptions

from conftest import SAMPLES, make_docs, run, run_process

UNSAFE_PATTERNS = ["(a+)+$", "(a|a)*b", r"(\w+\s?)+$", r"(?:\w+-?)+x", r"(\w)\1"]
COMMON_PATTERNS = [
    r"(?u)\b\w\w+\b",
    r"[a-z]+",
    r"\S+",
    r"[\w$'!-]*\w[\w$'!-]*",
    r"\b[a-z]{3,}\b",
    r"(\w+)@",
    r"(?:(?!x)\w)+",
]


def _one_line_error(result, *needles):
    stderr = result.stderr if isinstance(result.stderr, str) else result.stderr.decode()
    assert (result.exit_code if hasattr(result, "exit_code") else result.returncode) == 1
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("nbcli: error: "), stderr
    assert "internal error" not in stderr and "Traceback" not in stderr and "Warning" not in stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def _craft(tmp_path, source, change, checksum=True, name="crafted.nb"):
    """A copy of model `source` with its payload changed by change(payload),
    written with a recomputed checksum (or none)."""
    payload = dict(modelfile.read_payload(str(source)))
    change(payload)
    path = tmp_path / name
    modelfile.write_payload(payload, str(path), checksum=checksum)
    return path


# -- defect 11: damage ------------------------------------------------------------


def _array_spans(data: bytes, payload: dict) -> np.ndarray:
    """A mask of the file's bytes that hold array data."""
    mask = np.zeros(len(data), dtype=bool)
    for value in payload.values():
        if isinstance(value, np.ndarray) and value.nbytes >= 16:
            pos = data.find(value.tobytes())
            assert pos >= 0
            mask[pos : pos + value.nbytes] = True
    return mask


@pytest.mark.parametrize("region", ["arrays", "pickle"])
def test_flipped_bytes_are_one_line_errors_never_a_worse_model(tmp_path, small_model, region):
    data = small_model.read_bytes()
    in_arrays = _array_spans(data, modelfile.read_payload(str(small_model)))
    positions = np.flatnonzero(in_arrays if region == "arrays" else ~in_arrays)
    texts, _ = make_docs(5, seed=3, classes=["code", "food"])
    doc = tmp_path / "doc.txt"
    doc.write_text(texts[0])
    damaged = tmp_path / "damaged.nb"
    for seed in range(3):
        rng = np.random.default_rng(seed)
        flipped = bytearray(data)
        for pos in rng.choice(positions, size=200, replace=False):
            flipped[pos] ^= int(rng.integers(1, 256))
        damaged.write_bytes(bytes(flipped))
        for args in (["predict", damaged, doc], ["info", damaged]):
            result = run_process(args)
            assert result.returncode == 1
            assert result.stdout == b""
            line = _one_line_error(result, str(damaged))
            assert ("checksum mismatch" in line) if region == "arrays" else ("corrupt" in line or "truncated" in line)


def test_a_model_path_that_is_not_a_file_is_a_one_line_error(tmp_path, small_model):
    # a named pipe hung for ever (opening one waits for a writer): a cron job stuck on a typo
    fifo = tmp_path / "model.nb"
    os.mkfifo(fifo)
    doc = tmp_path / "doc.txt"
    doc.write_text("buy cheap pills")
    for args in (["predict", fifo, doc], ["info", fifo], ["learn", fifo, "--class", "spam", doc]):
        _one_line_error(run_process(args, timeout=30), f"{fifo} is a named pipe, not a")  # learn: "not a file"
    _one_line_error(run_process(["info", "/dev/null"]), "/dev/null is a device, not a model file")
    _one_line_error(run_process(["info", tmp_path]), f"{tmp_path} is a folder, not a model file")


def test_a_writer_never_renames_a_file_over_a_device_pipe_or_socket(tmp_path, small_model):
    # `train -o FIFO` replaced the pipe with the model; the same rename over /dev/null, run as root,
    # would have replaced the device for every program on the machine
    import socket

    from nbcli.imap.state import State

    fifo = tmp_path / "out.nb"
    os.mkfifo(fifo)
    corpus = tmp_path / "c"
    for label in ("spam", "ham"):
        (corpus / label).mkdir(parents=True)
        for i in range(3):
            (corpus / label / f"{i}.txt").write_text(f"{label} words here {i}")
    for args in (
        ["train", corpus, "-o", fifo],
        ["cluster", corpus, "-k", "2", "-o", fifo],
        ["dump", small_model, "-o", fifo],
    ):
        _one_line_error(run_process(args, timeout=60), f"-o {fifo} is a named pipe, not a file")
    assert fifo.is_fifo()
    sock_path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        _one_line_error(run_process(["train", corpus, "-o", sock_path]), "is a socket, not a file")
    with pytest.raises(NbcliError, match="/dev/null is a device, not a model file"):
        integrity.check_writable("/dev/null")  # refused before anything is written
    with pytest.raises(OSError, match="it is a named pipe, not a file to replace"):
        integrity.replace_atomically(str(fifo), lambda fh: fh.write(b"x"), 0o644)
    assert fifo.is_fifo() and not list(tmp_path.glob(".out.nb.*"))
    with pytest.raises(NbcliError, match="is a named pipe, not a state file"):
        State.load(str(fifo))  # opening it would wait for a writer


def test_a_few_flipped_bits_anywhere_are_caught_by_the_checksum(tmp_path, small_model):
    data = small_model.read_bytes()
    rng = np.random.default_rng(7)
    damaged = tmp_path / "damaged.nb"
    for _ in range(40):
        flipped = bytearray(data)
        pos = int(rng.integers(len(data) // 4, len(data)))
        flipped[pos] ^= 1 << int(rng.integers(0, 8))
        damaged.write_bytes(bytes(flipped))
        with pytest.raises(ModelFileError) as info:
            modelfile.load(str(damaged))
        assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "change",
    [
        lambda p: p["meta"].update(created="1999-01-01T00:00:00+00:00"),
        lambda p: p.update(classes=list(reversed(p["classes"]))),
        lambda p: p["analyzer"].update(ngrams=2),
        lambda p: p["model"].update(alpha=0.5),
        lambda p: p.update(weights=np.ascontiguousarray(p["weights"][::-1])),
    ],
    ids=["meta", "classes", "analyzer", "model", "weights"],
)
def test_the_checksum_covers_plain_values_and_arrays(tmp_path, small_model, change):
    payload = dict(modelfile.read_payload(str(small_model)))
    assert payload[integrity.CHECKSUM_KEY].startswith("sum64:")
    change(payload)  # the old checksum is kept: the file no longer matches it
    path = tmp_path / "changed.nb"
    joblib.dump(payload, path)
    with pytest.raises(
        ModelFileError,
        match=r"is corrupt \(checksum mismatch\); the file changed after nbcli wrote it; train the model again",
    ):
        modelfile.load(str(path))


def test_files_without_a_checksum_still_load_and_are_still_checked(tmp_path, small_model):
    old = _craft(tmp_path, small_model, lambda p: None, checksum=False, name="old.nb")
    assert integrity.CHECKSUM_KEY not in modelfile.read_payload(str(old))
    texts, _ = make_docs(50, seed=5, classes=["code", "food"])
    assert np.array_equal(modelfile.load(str(old)).log_proba(texts), modelfile.load(str(small_model)).log_proba(texts))

    def negative(p):
        counts = np.array(p["feature_count"])
        counts[0, :5] = -7
        p["feature_count"] = counts

    bad = _craft(tmp_path, small_model, negative, checksum=False, name="negative.nb")
    result = run(["info", bad])
    _one_line_error(result, "is corrupt ('feature_count' has values outside [0,")
    assert result.stdout == ""


def test_checksummed_files_are_still_readable_as_before(tmp_path, plain_model):
    # The checksum is one more key, which older nbcli ignores (they read keys
    # with .get), so plain multinomial models stay at format version 1.
    payload = joblib.load(plain_model)
    assert payload["format_version"] == 1
    assert payload[integrity.CHECKSUM_KEY] == integrity.payload_checksum(modelfile.read_payload(str(plain_model)))


def test_a_damaged_length_field_is_not_allocated(tmp_path):
    # a pickle frame claiming 2^60 bytes: EOF at once, not a MemoryError
    path = tmp_path / "frame.nb"
    path.write_bytes(b"\x80\x04\x95" + (1 << 60).to_bytes(8, "little") + b"}.")
    with pytest.raises(ModelFileError, match="truncated or corrupt"):
        modelfile.load(str(path))


# -- defect 12: analyzer settings -------------------------------------------------


@pytest.mark.parametrize("pattern", UNSAFE_PATTERNS)
def test_catastrophic_token_patterns_are_refused_at_train(tmp_path, make_class_folders, pattern):
    texts, labels = make_docs(20, seed=2, classes=["code", "food"])
    corpus = make_class_folders(texts, labels)
    result = run_process(
        ["train", corpus, "-o", tmp_path / "m.nb", "--token-pattern", pattern], timeout=60
    )  # (\w+\s?)+$ hung here
    _one_line_error(result, f"--token-pattern {pattern!r} is refused: it ")
    assert not (tmp_path / "m.nb").exists()


@pytest.mark.parametrize("pattern", UNSAFE_PATTERNS)
def test_catastrophic_token_patterns_are_refused_at_load(tmp_path, small_model, pattern):
    crafted = _craft(tmp_path, small_model, lambda p: p["analyzer"].update(token_pattern=pattern))
    message = tmp_path / "msg.txt"
    message.write_text("a" * 40 + "!")  # (a+)+$ would take 2^40 steps on this
    # a real process with a timeout as the hang guard: the refusal is immediate
    result = run_process(["predict", crafted, message], timeout=60)
    _one_line_error(result, f"is corrupt (analyzer: token_pattern {pattern!r} is refused: it ")


@pytest.mark.parametrize("pattern", COMMON_PATTERNS)
def test_common_token_patterns_are_accepted(pattern):
    assert tokenize.token_pattern_problem(pattern) is None
    AnalyzerOptions(token_pattern=pattern).check()


@pytest.mark.parametrize(
    "setting, value, needle",
    [
        ("ngrams", 10**6, "analyzer: ngrams must be between 1 and 8, not 1000000)"),
        ("ngrams", 0, "analyzer: ngrams must be between 1 and 8, not 0)"),
        ("ngrams", "2", "ngrams is not an integer"),
        ("max_message_bytes", 0, "analyzer: max_message_bytes must be between"),
        ("max_message_bytes", 1 << 40, "analyzer: max_message_bytes must be between"),
        ("stop_words", [1, 2, 3], "stop_words is not a list of strings"),
        ("stop_words", "the", "stop_words is not a list of strings"),
        ("stop_words", ["x" * 5000], "analyzer: stop_words: at most"),
        ("mail", "yes", "mail is not true or false"),
        ("token_pattern", 5, "token_pattern is not a string"),
        ("token_pattern", "(unclosed", "is not a valid regular expression"),
        ("token_pattern", r"\w{4294967295}", "is not a valid regular expression (the repetition number is too large)"),
        ("token_pattern", "(" * 2000 + "a" + ")" * 2000, "is not a valid regular expression (nested too deeply)"),
        ("token_pattern", "x" * 5000, "analyzer: token_pattern is longer than"),
    ],
)
def test_bad_analyzer_settings_in_a_model_are_refused(tmp_path, small_model, setting, value, needle):
    crafted = _craft(tmp_path, small_model, lambda p: p["analyzer"].update({setting: value}))
    for args in (["predict", crafted, small_model], ["info", crafted]):
        _one_line_error(run(args), "is corrupt (analyzer: ", needle)


def test_train_has_the_same_bounds_as_loading(tmp_path, make_class_folders):
    texts, labels = make_docs(20, seed=2, classes=["code", "food"])
    corpus = make_class_folders(texts, labels)
    too_big = run(["train", corpus, "-o", tmp_path / "m.nb", "--max-message-bytes", "1G"])
    assert too_big.exit_code == 2 and "largest allowed, 64M" in too_big.stderr  # a usage error, as the option is read
    assert (
        run(["train", corpus, "-o", tmp_path / "m.nb", "--max-message-bytes", "64M", "--ngrams", "8", "-q"]).exit_code
        == 0
    )
    # pseudo-counts beyond 1e12 overflowed to inf (RuntimeWarnings) at training, and are refused in a model too
    _one_line_error(
        run_process(["train", corpus, "-o", tmp_path / "x.nb", "--alpha", "1e308"]), "--alpha must be at most 1e+12"
    )
    _one_line_error(
        run_process(["train", corpus, "-o", tmp_path / "x.nb", "--prior-alpha", "1e308"]),
        "--prior-alpha must be a number from 0 to 1e+12",
    )
    modelfile.load(str(tmp_path / "m.nb"))


# -- defect 17: class names that would break a header -----------------------------


@pytest.mark.parametrize("label", ["spam\nX-Evil: 1", "spam\r", "sp\x00am", "ham\x1b[2J", "spam\u2028"])
def test_labels_with_control_characters_are_refused_at_train(tmp_path, make_jsonl, label):
    texts, labels = make_docs(20, seed=4, classes=["code", "food"])
    corpus = make_jsonl(texts, [label if lab == "food" else lab for lab in labels])
    result = run(["train", corpus, "-o", tmp_path / "m.nb"])
    _one_line_error(result, f"class label {label!r} contains the control character")
    assert not (tmp_path / "m.nb").exists()


def test_a_class_label_too_long_for_a_header_line_is_refused(tmp_path, make_jsonl):
    # it went into X-NB-Class whole: a 1,200-character name made a 1,236-character header line (RFC 5322: 998)
    texts, labels = make_docs(20, seed=4, classes=["code", "food"])
    for name, ok in (("f" * 200, True), ("f" * 201, False)):
        corpus = make_jsonl(texts, [name if lab == "food" else lab for lab in labels])
        result = run(["train", corpus, "-o", tmp_path / "m.nb", "-q"])
        if ok:
            assert result.exit_code == 0, result.stderr
        else:
            _one_line_error(result, "class label 'ffffffffffffffffffff'... is 201 characters long, more than 200")
    assert modelfile.load(str(tmp_path / "m.nb")).classes == ["code", "f" * 200]
    crafted = _craft(tmp_path, str(tmp_path / "m.nb"), lambda p: p.update(classes=["code", "f" * 201]))
    _one_line_error(run(["info", crafted]), "201 characters long")


def test_a_class_folder_with_a_newline_is_refused(tmp_path, make_class_folders):
    texts, labels = make_docs(20, seed=4, classes=["code", "food"])
    corpus = make_class_folders(texts, ["sp\nam" if lab == "food" else lab for lab in labels])
    _one_line_error(
        run(["train", corpus, "-o", tmp_path / "m.nb"]), "class label 'sp\\nam' contains the control character '\\n'"
    )


@pytest.mark.parametrize("classes", [["code", "fo\nod"], ["code", ""], ["code", "code"], ["code"], ["code", 5]])
def test_bad_class_names_in_a_model_are_refused(tmp_path, small_model, classes):
    crafted = _craft(tmp_path, small_model, lambda p: p.update(classes=classes))
    _one_line_error(run(["predict", crafted, small_model]), "is corrupt (")


# -- defect 20: crafted payloads never cause an internal error ---------------------


def test_a_self_referencing_meta_is_refused(tmp_path, small_model):
    def cycle(p):
        loop = []
        loop.append(loop)
        p["meta"]["options"]["stop_words"] = loop

    crafted = _craft(tmp_path, small_model, cycle, checksum=False)
    for args in (["train", "--from-model", crafted, "-o", tmp_path / "out.nb"], ["info", crafted]):
        _one_line_error(run(args), "is corrupt ('meta' contains itself")


def test_deep_nesting_and_shared_subtrees_are_refused(tmp_path, small_model):
    def deep(p):
        value = []
        for _ in range(100):  # as deep as joblib writes; a crafted pickle can go much deeper
            value = [value]
        p["meta"]["x"] = value

    _one_line_error(
        run(["info", _craft(tmp_path, small_model, deep, checksum=False)]), "is corrupt ('meta' is nested too deeply)"
    )

    def shared(p):  # 2^25 paths through 25 lists: a naive walk takes minutes
        value = []
        for _ in range(25):
            value = [value, value]
        p["meta"]["x"] = value

    _one_line_error(run(["info", _craft(tmp_path, small_model, shared, checksum=False)]), "the same list or dict twice")


WRONG_VALUES = [
    "x",
    "",
    10**30,
    -1,
    0,
    1e308,
    math.nan,
    math.inf,
    -math.inf,
    None,
    True,
    [],
    {},
    [1, "a"],
    {"a": 1},
    [None, None],
]


def _paths(payload):
    """(container, key) of every plain value in the payload, nested too."""
    out = []
    for key, value in payload.items():
        if not isinstance(value, np.ndarray):
            out.append((payload, key))
        if isinstance(value, dict):
            for sub, inner in value.items():
                out.append((value, sub))
                if isinstance(inner, dict):
                    out.extend((inner, k) for k in inner)
    return out


def _array_mutations(p, rng):
    key = rng.choice(sorted(k for k, v in p.items() if isinstance(v, np.ndarray)))
    a = np.array(p[key])
    how = rng.integers(0, 6)
    if how == 0 and a.size:
        a.reshape(-1)[rng.integers(0, a.size)] = -1 if a.dtype.kind != "u" else a.max()
    elif how == 1 and a.size and a.dtype.kind == "f":
        a.reshape(-1)[rng.integers(0, a.size)] = rng.choice([np.nan, np.inf, -np.inf, 1e300])
    elif how == 2:
        a = a[:-1] if a.size else a
    elif how == 3:
        a = a.astype(rng.choice(["<i4", "<f4", "<u8", "<f8", "<i8"]))
    elif how == 4 and a.ndim == 2:
        a = np.ascontiguousarray(a.T)
    elif a.size > 1:
        a = np.ascontiguousarray(a[::-1])
    p[key] = a


def test_fuzzed_payloads_load_or_give_a_one_line_error(tmp_path, small_model):
    """Seeded mutations of a real payload's plain values and arrays, with a
    recomputed checksum: loading either works or raises ModelFileError, and
    predict, info and train --from-model never report an internal error or
    a numpy warning."""
    original = modelfile.read_payload(str(small_model))
    rng = np.random.default_rng(12)
    outcomes = {"loaded": 0, "refused": 0}
    for i in range(160):
        payload = json.loads(json.dumps({k: v for k, v in original.items() if not isinstance(v, np.ndarray)}))
        payload.update({k: v for k, v in original.items() if isinstance(v, np.ndarray)})
        payload.pop(integrity.CHECKSUM_KEY)
        for _ in range(int(rng.integers(1, 3))):
            if rng.random() < 0.3:
                _array_mutations(payload, rng)
            else:
                paths = _paths(payload)
                container, key = paths[int(rng.integers(0, len(paths)))]
                value = WRONG_VALUES[int(rng.integers(0, len(WRONG_VALUES)))]
                if rng.random() < 0.2:
                    container.pop(key, None)
                else:
                    container[key] = value
        path = tmp_path / f"fuzz{i}.nb"
        modelfile.write_payload(payload, str(path))  # with a fresh checksum
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                modelfile.load(str(path))
                outcomes["loaded"] += 1
            except ModelFileError as exc:
                outcomes["refused"] += 1
                assert "\n" not in str(exc)
                continue
            for args in (
                ["predict", path, small_model],
                ["info", path],
                ["train", "--from-model", path, "-o", tmp_path / "re.nb", "-q"],
            ):
                result = run(args)
                assert "internal error" not in result.stderr, (args, result.stderr)
                assert result.exit_code in (0, 1)
                if result.exit_code:
                    _one_line_error(result)
    assert outcomes["loaded"] > 10 and outcomes["refused"] > 50  # the mutations reach both sides


def test_invariant_checks_are_cheap(tmp_path):
    """Loading checks every array in one pass each: a hang guard only (the
    cost on big models is measured in the README's "The model file")."""
    from nbcli.fit.settings import TrainOptions
    from nbcli.fit.training import train
    from nbcli.text.sources import Document

    texts, labels = make_docs(400, seed=9, vocab_size=20000)
    docs = [Document(str(i), lab, t) for i, (t, lab) in enumerate(zip(texts, labels))]
    path = tmp_path / "m.nb"
    modelfile.save(train(docs, AnalyzerOptions(ngrams=3), TrainOptions()), str(path))
    start = time.perf_counter()
    for _ in range(20):
        modelfile.load(str(path))
    assert (time.perf_counter() - start) / 20 < 0.5


def test_mail_model_loads_and_the_sample_is_classified_as_before(tmp_path):
    model = tmp_path / "mail.nb"
    assert run(["train", SAMPLES / "mail" / "train", "-o", model, "-q"]).exit_code == 0
    result = run(["predict", model, SAMPLES / "mail" / "test" / "spam", "--json"])
    assert result.exit_code == 0 and result.stderr == ""
    assert json.loads(result.stdout.splitlines()[0])["label"] in ("spam", "ham")


def test_nbcli_error_from_check_names_the_option():
    # the library names the field; `nbcli train` says --token-pattern (..._are_refused_at_train)
    with pytest.raises(NbcliError, match=r"^token_pattern '\(a\+\)\+\$' is refused: it has a repeat inside a repeat"):
        AnalyzerOptions(token_pattern="(a+)+$").check()


def test_terms_that_are_not_utf8_are_shown_not_fatal(tmp_path, small_model):
    """Terms are not decoded on load (it would cost as much as the checksum
    on a big model); a crafted vocabulary of bad bytes shows U+FFFD."""
    payload = dict(modelfile.read_payload(str(small_model)))
    blob = np.array(payload["vocab_blob"])
    blob[:] = 0xFF
    payload["vocab_blob"] = blob
    crafted = tmp_path / "bad-terms.nb"
    modelfile.write_payload(payload, str(crafted))  # a valid checksum: only the texts are bad
    result = run(["info", crafted, "--json"])
    assert result.exit_code == 0, result.stderr
    terms = [t["term"] for ts in json.loads(result.stdout)["top_terms"].values() for t in ts]
    assert terms and all(set(t) == {"\ufffd"} for t in terms)


def test_the_checksum_is_cheap_on_a_big_model(tmp_path):
    """Loading reads every byte once for the checksum: it must stay a small
    part of a one-message run (a hang guard, not a benchmark)."""
    from nbcli.nb.classifier import Classifier
    from nbcli.nb.event_models import MODELS
    from nbcli.text.vectorize import Vocabulary

    n = 400_000
    counts = np.random.default_rng(0).integers(0, 5, size=(2, n)).astype(np.float64)
    model = MODELS["multinomial"](["ham", "spam"], np.array([10.0, 8.0]), counts, alpha=1.0)
    path = tmp_path / "big.nb"
    modelfile.save(
        Classifier(AnalyzerOptions(), Vocabulary.from_terms([f"t{i}" for i in range(n)]), model, {"n_documents": 18}),
        str(path),
    )
    start = time.perf_counter()
    modelfile.load(str(path))
    assert time.perf_counter() - start < 2.0

"""The public Python API (nbcli.load, nbcli.train, Model, Prediction): the
same models, checks and predictions as the command line."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys

import numpy as np
import pytest

import nbcli
from nbcli.errors import NbcliError
from nbcli.store import modelfile

from conftest import SAMPLES, run

TOPICS = SAMPLES / "topics"
MAIL = SAMPLES / "mail"


def _table(path):
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r["text"] for r in rows], [r["label"] for r in rows], [r["id"] for r in rows]


def _mail_folder(root):
    paths = sorted(p for p in root.rglob("*") if p.is_file())
    return [p.read_bytes() for p in paths], [p.parent.name for p in paths]


def _info(path) -> dict:
    result = run(["info", path, "--json"])
    assert result.exit_code == 0, result.stderr
    info = json.loads(result.stdout)
    info.pop("created")
    info.pop("model")  # the file name
    return info


def _same_model(api_file, cli_file):
    assert _info(api_file) == _info(cli_file)
    a, b = modelfile.load(str(api_file)), modelfile.load(str(cli_file))
    assert a.vocabulary.terms(range(len(a.vocabulary))) == b.vocabulary.terms(range(len(b.vocabulary)))
    for name in ("log_prior", "weights", "bias", "unknown_weight"):
        assert np.array_equal(getattr(a.model, name), getattr(b.model, name)), name
    assert a.calibration == b.calibration  # the same map, fitted by the same cross-validation


@pytest.mark.parametrize(
    "flags, options",
    [
        ([], {}),
        (["--ngrams", "2", "--min-df", "2", "--alpha", "0.5"], {"ngrams": 2, "min_df": 2, "alpha": 0.5}),
        (
            ["--model", "complement", "--tf-log", "--idf", "--length-norm", "--stop-words", "english"],
            {"kind": "complement", "tf_log": True, "idf": True, "length_norm": True, "stop_words": "english"},
        ),
        (["--model", "bernoulli", "--m-estimate", "8,0.625"], {"kind": "bernoulli", "m_estimate": "8,0.625"}),
    ],
)
def test_train_gives_the_model_nbcli_train_gives(tmp_path, flags, options):
    texts, labels, _ = _table(TOPICS / "train.jsonl")
    model = nbcli.train(texts, labels, **options)
    model.save(tmp_path / "api.nb")
    result = run(["train", TOPICS / "train.jsonl", "-o", tmp_path / "cli.nb", "-q", *flags])
    assert result.exit_code == 0, result.stderr
    _same_model(tmp_path / "api.nb", tmp_path / "cli.nb")


def test_train_on_mail_takes_the_mail_defaults_as_nbcli_train_does(tmp_path):
    messages, labels = _mail_folder(MAIL / "train")
    model = nbcli.train(messages, labels)
    model.save(tmp_path / "api.nb")
    assert run(["train", MAIL / "train", "-o", tmp_path / "cli.nb", "-q"]).exit_code == 0
    _same_model(tmp_path / "api.nb", tmp_path / "cli.nb")
    options = _info(tmp_path / "api.nb")["options"]
    # the mail model: complement with tf-log and length normalisation, alpha = 0.3 / N
    assert options["alpha"] == "0.3/N" and options["unknown_terms"] == "skip" and options["model"] == "complement"


def test_classify_gives_what_predict_json_writes(tmp_path):
    model_path = tmp_path / "m.nb"
    assert run(["train", TOPICS / "train.jsonl", "-o", model_path, "-q"]).exit_code == 0
    texts, _, ids = _table(TOPICS / "test.jsonl")
    result = run(["predict", model_path, TOPICS / "test.jsonl", "--json"])
    assert result.exit_code == 0, result.stderr
    want = [json.loads(line) for line in result.stdout.splitlines()]
    model = nbcli.load(model_path)
    assert model.classes == sorted({w["label"] for w in want} | set(model.classes))
    got = model.classify(texts)
    assert [w["id"] for w in want] == ids and len(got) == len(want)
    for g, w in zip(got, want):
        assert g.label == w["label"]
        assert g.probabilities == w["probabilities"] and g.log_probabilities == w["log_probabilities"]
        assert math.isclose(sum(g.probabilities.values()), 1.0)


def test_load_classify_save_round_trip_with_str_and_bytes(tmp_path):
    texts, labels, _ = _table(TOPICS / "train.jsonl")
    model = nbcli.train(texts, labels)
    assert model.classes == sorted(set(labels))
    model.save(tmp_path / "m.nb")
    again = nbcli.load(tmp_path / "m.nb")
    doc = "Astronomers reported a supernova in a distant galaxy."
    as_str, as_bytes = again.classify([doc, doc.encode("utf-8")])
    assert as_str == as_bytes == model.classify([doc])[0]
    assert as_str.label == "astronomy" and as_str.probabilities["astronomy"] > 0.5


def test_a_mail_message_is_read_as_mail(tmp_path):
    messages, labels = _mail_folder(MAIL / "train")
    model = nbcli.train(messages, labels)
    message = (MAIL / "test" / "spam").iterdir().__next__().read_bytes()
    auto, mail, text = (model.classify([message], kind=kind)[0] for kind in ("auto", "mail", "text"))
    assert auto == mail and auto.label == "spam"
    assert text.log_probabilities != mail.log_probabilities  # headers and MIME parts read as plain text
    assert model.classify([message.decode("utf-8", "replace")])[0].label == "spam"


@pytest.mark.parametrize(
    "flags, options",
    [
        (["--tf-log"], {"tf_log": True}),
        (["--unknown-terms", "smooth", "--model", "bernoulli"], {"unknown": "smooth", "kind": "bernoulli"}),
        (["--prior", "uniform", "--prior-alpha", "1"], {"prior": "uniform", "prior_alpha": 1.0}),
        (["--m-estimate", "2", "--alpha", "1"], {"m_estimate": "2", "alpha": 1.0}),
        (["--estimate", "map"], {"estimate": "map"}),
        (["--alpha", "0"], {"alpha": 0.0}),
    ],
)
def test_a_bad_option_raises_the_error_the_command_prints(tmp_path, flags, options):
    """The same error, naming the Python parameter in the library and its
    flag on the command line (issue 26)."""
    from nbcli.cli.options import TRAINING_FLAGS, in_flag_terms

    result = run(["train", TOPICS / "train.jsonl", "-o", tmp_path / "m.nb", *flags])
    assert result.exit_code == 1
    with pytest.raises(nbcli.NbcliError) as caught:
        nbcli.train(["a b c", "d e f"], ["x", "y"], **options)
    assert result.stderr == f"nbcli: error: {in_flag_terms(caught.value)}\n"
    named = caught.value.parameter
    assert str(caught.value).startswith(named) or f" {named}" in str(caught.value)
    assert TRAINING_FLAGS[named] in result.stderr and "--" not in str(caught.value)


def test_misuse_is_refused():
    with pytest.raises(TypeError, match="single document"):
        nbcli.train("one text", ["x"])
    with pytest.raises(TypeError, match="unknown training option"):
        nbcli.train(["a b", "c d"], ["x", "y"], model="bernoulli")
    with pytest.raises(nbcli.NbcliError, match="2 documents but 1 labels"):
        nbcli.train(["a b", "c d"], ["x"])
    with pytest.raises(nbcli.NbcliError, match="^kind 'gaussian' is not one of"):
        nbcli.train(["a b", "c d"], ["x", "y"], kind="gaussian")
    with pytest.raises(nbcli.NbcliError, match="only one class"):
        nbcli.train(["a b", "c d"], ["x", "x"])
    with pytest.raises(nbcli.NbcliError, match="is not an nbcli model file"):
        nbcli.load(TOPICS / "train.jsonl")


def test_importing_nbcli_stays_free_of_numpy():
    """`nbcli --help` must not pay for numpy: the API names load lazily."""
    code = (
        "import sys, nbcli, nbcli.cli.main, nbcli.api; assert 'numpy' not in sys.modules; "
        "assert nbcli.load is nbcli.api.load and nbcli.Prediction is nbcli.api.Prediction"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_train_decides_by_a_threshold_for_the_rare_class():
    """decide='f1' (train --decide f1): the label follows the stored
    threshold on P(positive), the probabilities are the argmax model's."""
    import math

    from conftest import make_skewed_docs

    texts, labels = make_skewed_docs()
    decided = nbcli.train(texts, labels, decide="f1")
    plain = nbcli.train(texts, labels)
    decision = decided._classifier.meta["decision"]
    assert decision["positive"] == "space" and "decision" not in plain._classifier.meta
    p_t = 1 / (1 + math.exp(-decision["threshold"]))
    tests, _ = make_skewed_docs(seed=4)
    for got, argmax in zip(decided.classify(tests), plain.classify(tests)):
        assert got.probabilities == argmax.probabilities
        assert got.label == ("space" if got.probabilities["space"] >= p_t else "code")
    with pytest.raises(nbcli.NbcliError, match="needs a two-class model"):
        nbcli.train(["a b", "c d", "e f"], ["x", "y", "z"], decide="f1")


@pytest.mark.parametrize(
    "options, says",
    [
        ({"ngrams": "2"}, "ngrams must be a whole number (an int), not '2'"),
        ({"ngrams": 2.5}, "ngrams must be a whole number (an int), not 2.5"),
        ({"max_message_bytes": "16M"}, "max_message_bytes must be a whole number (an int), not '16M'"),
        ({"stop_words": ["the"]}, "stop_words is 'english' or the name of a file of words (one per line), not"),
    ],
)
def test_values_of_the_wrong_type_are_the_librarys_errors_naming_the_option(options, says):
    """They were TypeErrors from deep inside the analyser ('<=' not supported between 'int' and 'str')."""
    with pytest.raises(NbcliError, match=re.escape(says)):
        nbcli.train(["alpha beta", "gamma delta"], ["x", "y"], **options)
    with pytest.raises(TypeError, match=re.escape("labels[1] is NoneType, not a class name (str)")):
        nbcli.train(["alpha beta", "gamma delta"], ["x", None])

"""The model file: a saved model loads and predicts identically, and a dump
of it loads back to the same model (its bytes: test_codec.py; damaged
files: test_integrity.py; crafted payloads: test_modelfile_integrity.py)."""

import numpy as np
import pytest

from nbcli.errors import NbcliError
from nbcli.store import dumped, modelfile

from conftest import make_docs


def test_round_trip_predicts_identically(tmp_path, classifier):
    path = tmp_path / "m.nb"
    modelfile.save(classifier, str(path))
    loaded = modelfile.load(str(path))
    texts, _ = make_docs(200, seed=12)
    assert np.array_equal(loaded.log_proba(texts), classifier.log_proba(texts))
    assert loaded.classes == classifier.classes
    assert loaded.analyzer_options == classifier.analyzer_options
    assert loaded.model.alpha == 0.3 and loaded.model.prior == "uniform"
    assert np.array_equal(loaded.model.feature_count, classifier.model.feature_count)
    assert np.array_equal(loaded.model.doc_freq, classifier.model.doc_freq)
    assert loaded.vocabulary.terms(range(len(loaded.vocabulary))) == classifier.vocabulary.terms(
        range(len(classifier.vocabulary))
    )
    # arrays are mapped read-only from the file, not copied
    assert not loaded.model.weights.flags.writeable


def test_a_dump_loads_back_to_the_model_it_came_from(tmp_path, classifier):
    lines = list(dumped.dump_lines(classifier))
    loaded = dumped.load_lines(lines, "m.dump")
    assert list(dumped.dump_lines(loaded)) == lines
    assert modelfile.model_id(loaded) == modelfile.model_id(classifier)
    texts, _ = make_docs(50, seed=13)
    assert np.allclose(loaded.log_proba(texts), classifier.log_proba(texts), rtol=0, atol=1e-12)
    path = tmp_path / "m.nb"
    modelfile.save(loaded, str(path))
    assert modelfile.load(str(path)).stored_model_id == modelfile.model_id(classifier)


def test_a_dump_with_bad_settings_is_one_error_naming_the_dump(classifier):
    import json

    lines = list(dumped.dump_lines(classifier))
    header = json.loads(lines[0])
    header["model"]["alpha"] = -1
    with pytest.raises(NbcliError, match=r"^m\.dump: bad model settings \('model' has a bad alpha \(-1\)\)"):
        dumped.load_lines([json.dumps(header), *lines[1:]], "m.dump")
    header["model"]["alpha"] = None  # was the smoothing check's "--alpha must be ...": a flag the dump has not
    with pytest.raises(NbcliError, match=r"^m\.dump: bad model settings \('model' has a bad alpha \(None\)\)"):
        dumped.load_lines([json.dumps(header), *lines[1:]], "m.dump")
    header["model"] = "multinomial"
    with pytest.raises(NbcliError, match=r"m\.dump, line 1: bad model, analyzer or meta"):
        dumped.load_lines([json.dumps(header), *lines[1:]], "m.dump")


def test_settings_of_checks_as_the_loader_does():
    settings = modelfile.settings_of({"kind": "complement", "alpha": 0.5, "tf_log": True}, ["a", "b"])
    assert settings["kind"] == "complement" and settings["alpha"] == 0.5 and settings["tf_log"] is True
    with pytest.raises(NbcliError, match="has tf_log for a multinomial model"):
        modelfile.settings_of({"kind": "multinomial", "tf_log": True}, ["a", "b"])
    with pytest.raises(NbcliError, match="has no event model kind nbcli knows"):
        modelfile.settings_of({"kind": "poisson"}, ["a", "b"])

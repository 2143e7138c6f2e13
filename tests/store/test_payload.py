"""A Classifier as a model file's payload (store/payload.py): what it holds,
the format version a model needs, its identity, a calibration's plain form."""

import json
import random
from types import SimpleNamespace

import numpy as np

from nbcli.fit.settings import TrainOptions
from nbcli.fit.training import train
from nbcli.store import modelfile, payload
from nbcli.store.codec import FORMAT, FORMAT_VERSION
from nbcli.text.analyzer import AnalyzerOptions
from nbcli.text.sources import Document

from conftest import make_docs


def _model(**settings):
    plain = dict(kind="multinomial", estimate="mean", m_estimate=None, prior_alpha=None, alpha_per_document=None)
    return SimpleNamespace(**{**plain, **settings})


def test_the_format_version_is_the_oldest_that_reads_the_model():
    assert payload.format_version(_model()) == 1
    assert payload.format_version(_model(kind="bernoulli")) == 2
    assert payload.format_version(_model(estimate="map")) == 2
    assert payload.format_version(_model(alpha_per_document=5.0)) == 2
    assert payload.format_version(_model(), calibrated=True) == FORMAT_VERSION == 3


def test_the_payload_holds_plain_values_and_arrays(classifier):
    p = payload.to_payload(classifier)
    assert next(iter(p)) == "format" and p["format"] == FORMAT  # first: how nbcli recognises its files
    assert p["format_version"] == 1 and p["classes"] == classifier.classes
    assert p["model_id"] == payload.model_id(classifier)
    assert p["vocab_hashes"].dtype == np.uint64 and p["weights"].flags.c_contiguous
    assert np.array_equal(p["feature_count"], classifier.model.feature_count)
    json.dumps({k: v for k, v in p.items() if not isinstance(v, np.ndarray)})  # the rest is plain


def test_payload_bytes_is_close_to_what_is_written(tmp_path, classifier):
    p = payload.to_payload(classifier)
    path = tmp_path / "m.nb"
    modelfile.write_payload(p, str(path))
    size = path.stat().st_size
    assert size <= payload.payload_bytes(p) <= size + 8192


def test_the_model_id_is_the_counts_not_the_order_they_came_in():
    texts, labels = make_docs(120, seed=4)
    docs = [Document(str(i), lab, t) for i, (t, lab) in enumerate(zip(texts, labels))]
    first = train(docs, AnalyzerOptions(), TrainOptions())
    shuffled = docs[:]
    random.Random(1).shuffle(shuffled)
    assert payload.compute_model_id(train(shuffled, AnalyzerOptions(), TrainOptions())) == payload.model_id(first)
    other = payload.compute_model_id(train(docs[:-1], AnalyzerOptions(), TrainOptions()))
    assert other != payload.model_id(first)
    assert payload.compute_model_id(train(docs, AnalyzerOptions(ngrams=2), TrainOptions())) != payload.model_id(first)


def test_a_stored_model_id_is_used_as_it_is(tmp_path, classifier):
    path = tmp_path / "m.nb"
    modelfile.save(classifier, str(path))
    loaded = modelfile.load(str(path))
    assert loaded.stored_model_id == payload.compute_model_id(classifier)
    loaded.stored_model_id = "abcdef"
    assert payload.model_id(loaded) == "abcdef"


def test_a_calibration_is_stored_as_plain_lists_and_changes_the_identity(small_model, plain_model):
    calibrated = modelfile.load(str(small_model))
    state = payload.calibration_state(calibrated.calibration)
    assert json.loads(json.dumps(state)) == state
    assert all(isinstance(v, list) for v in state["params"].values())
    assert payload.to_payload(calibrated)["calibration"] == state
    assert payload.to_payload(calibrated)["format_version"] == FORMAT_VERSION
    plain = modelfile.load(str(plain_model))  # the same documents, without the map
    assert payload.compute_model_id(calibrated) != payload.compute_model_id(plain)
    calibrated.calibration = None
    assert payload.compute_model_id(calibrated) == payload.compute_model_id(plain)


def test_the_terms_digest_sum_sees_counts_moved_about_but_not_the_terms_order():
    rng = np.random.default_rng(3)
    hashes = np.sort(rng.integers(1, 2**63, 50, dtype=np.uint64))
    tf = rng.integers(0, 9, (2, 50)).astype(np.float64)
    df = np.minimum(tf, 3)
    whole = payload.term_sum(hashes, tf, df)
    order = rng.permutation(50)
    assert payload.term_sum(hashes[order], tf[:, order], df[:, order]) == whole
    assert payload.term_sum(hashes, tf.astype(np.int64), df.astype(np.int32)) == whole  # values, not types
    moved = tf.copy()
    moved[:, [4, 9]] = moved[:, [9, 4]] + [[1, 0], [0, 0]]  # two terms' counts swapped (one differs)
    assert payload.term_sum(hashes, moved, df) != whole
    swapped = tf[::-1].copy()  # the classes' counts swapped
    assert payload.term_sum(hashes, swapped, df) != whole
    assert payload.term_sum(hashes, tf) != whole and payload.term_sum(hashes, tf)[1] == 50
    part = payload.term_sum(hashes[:20], tf[:, :20], df[:, :20])
    rest = payload.term_sum(hashes[20:], tf[:, 20:], df[:, 20:])
    assert ((part[0] + rest[0]) % (1 << 64), part[1] + rest[1]) == whole  # a sum: taken apart and put together


def test_a_model_file_keeps_its_terms_digest_sum_for_the_id_of_its_journal(tmp_path, classifier):
    path = tmp_path / "m.nb"
    modelfile.save(classifier, str(path))
    loaded = modelfile.load(str(path))
    model = classifier.model
    assert loaded.term_sum == payload.term_sum(classifier.vocabulary.hashes, model.feature_count, model.doc_freq)
    p = modelfile.read_payload(str(path))
    for stored in ("0123456789abcdef/3", "not a sum", 7):  # another vocabulary's size, or none: not kept
        again = modelfile.from_payload({**p, "term_sum": stored}, str(path))
        assert getattr(again, "term_sum", None) is None

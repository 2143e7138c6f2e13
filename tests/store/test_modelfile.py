"""The model file: round trips, joblib compatibility, and refusing bad files."""

import os
import pickle
import subprocess
import sys

import joblib
import numpy as np
import pytest

from nbcli.errors import ModelFileError
from nbcli.fit.settings import TrainOptions
from nbcli.fit.training import train
from nbcli.store import modelfile
from nbcli.text.analyzer import AnalyzerOptions
from nbcli.text.sources import Document

from conftest import make_docs


@pytest.fixture
def classifier():
    texts, labels = make_docs(300, seed=11)
    docs = [Document(str(i), lab, t) for i, (t, lab) in enumerate(zip(texts, labels))]
    return train(
        docs, AnalyzerOptions(ngrams=2, stop_words=("the", "and")), TrainOptions(alpha=0.3, prior="uniform", min_df=2)
    )


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


def test_the_file_is_a_plain_joblib_file(tmp_path, classifier):
    path = tmp_path / "m.nb"
    modelfile.save(classifier, str(path))
    payload = joblib.load(path)
    assert (
        payload["format"] == "nbcli-model"
        and payload["format_version"] == modelfile.format_version(classifier.model) == 1
    )
    ours = modelfile.read_payload(str(path))
    assert sorted(payload) == sorted(ours)
    for key, value in payload.items():
        if isinstance(value, np.ndarray):
            assert np.array_equal(value, ours[key]) and value.dtype == ours[key].dtype
        else:
            assert value == ours[key]


def test_the_writer_writes_the_bytes_joblib_dump_writes(tmp_path, classifier):
    """nbcli writes model files without importing joblib; the bytes are
    joblib.dump's, for a real model's payload and for awkward arrays."""
    import io

    payloads = [
        modelfile.with_checksum(modelfile.to_payload(classifier)),
        {
            "format": "x",
            "a": np.arange(5, dtype=">i4"),
            "b": np.zeros((0, 3)),
            "c": np.asfortranarray(np.arange(6.0).reshape(2, 3)),
            "d": [1, 2.5, None, True, {"k": "v"}],
            "e": np.arange(12, dtype=np.uint64).reshape(3, 4)[:, ::2],  # neither C nor F contiguous
        },
    ]
    for payload in payloads:
        ours, theirs = io.BytesIO(), io.BytesIO()
        modelfile.dump_payload(payload, ours)
        joblib.dump(payload, theirs)
        assert ours.getvalue() == theirs.getvalue()


def test_reader_reads_what_joblib_writes_including_big_endian_and_empty_arrays(tmp_path):
    payload = {
        "format": "x",
        "a": np.arange(5, dtype=">i4"),
        "b": np.zeros((0, 3)),
        "c": np.asfortranarray(np.arange(6.0).reshape(2, 3)),
        "d": [1, 2.5, None, True, {"k": "v"}],
    }
    path = tmp_path / "j.pkl"
    joblib.dump(payload, path)
    ours = modelfile._SafeUnpickler  # read through the public reader's machinery
    with open(path, "rb") as fh:
        import mmap

        buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        got = ours(fh, buf, os.path.getsize(path)).load()
    assert got["a"].tolist() == [0, 1, 2, 3, 4] and got["a"].dtype.isnative
    assert got["b"].shape == (0, 3)
    assert np.array_equal(got["c"], payload["c"])
    assert got["d"] == payload["d"]


class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_a_pickle_that_would_run_code_is_refused_without_running(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.nb"
    joblib.dump({"format": "nbcli-model", "format_version": 1, "x": _Evil(marker)}, path)
    # The payload is live: an ordinary unpickler would run it ...
    subprocess.run([sys.executable, "-c", f"import joblib; joblib.load({str(path)!r})"], capture_output=True)
    assert marker.exists()
    marker.unlink()
    # ... nbcli's loader refuses it and nothing runs.
    with pytest.raises(ModelFileError, match=r"is not an nbcli model file \(refusing to load (posix|os)\.system\)"):
        modelfile.load(str(path))
    assert not marker.exists()


def test_allowed_globals_cannot_be_abused(tmp_path):
    # An object-dtype array would unpickle Python objects: refused.
    path = tmp_path / "obj.nb"
    joblib.dump({"format": "nbcli-model", "format_version": 1, "x": np.array([_Evil("x")], dtype=object)}, path)
    with pytest.raises(ModelFileError):
        modelfile.load(str(path))
    # A crafted stream calling numpy.dtype with an object type: refused.
    crafted = b"\x80\x04cnumpy\ndtype\n(X\x01\x00\x00\x00O\x89\x88tR."
    path.write_bytes(crafted)
    with pytest.raises(ModelFileError, match="not allowed"):
        modelfile.load(str(path))


def _model_bytes(tmp_path, classifier):
    path = tmp_path / "good.nb"
    modelfile.save(classifier, str(path))
    return path.read_bytes()


def test_truncated_files_give_one_line_errors(tmp_path, classifier):
    data = _model_bytes(tmp_path, classifier)
    path = tmp_path / "cut.nb"
    for cut in [1, 2, 50, 300, len(data) // 3, len(data) // 2, len(data) - 100, len(data) - 1]:
        path.write_bytes(data[:cut])
        with pytest.raises(ModelFileError) as info:
            modelfile.load(str(path))
        assert "\n" not in str(info.value)
        assert "truncated" in str(info.value) or "corrupt" in str(info.value)
    path.write_bytes(b"")
    with pytest.raises(ModelFileError, match="is empty"):
        modelfile.load(str(path))


def test_corrupt_files_give_one_line_errors(tmp_path, classifier):
    data = bytearray(_model_bytes(tmp_path, classifier))
    rng = np.random.default_rng(0)
    path = tmp_path / "bad.nb"
    for _ in range(60):
        damaged = bytearray(data)
        for pos in rng.integers(2, 2000, size=3):
            damaged[pos] = int(rng.integers(0, 256))
        path.write_bytes(bytes(damaged))
        try:
            modelfile.load(str(path))
        except ModelFileError as exc:
            assert "\n" not in str(exc)


@pytest.mark.parametrize(
    "content, message",
    [
        (b"hello, I am a text file\n", "is not an nbcli model file"),
        (b"\x89PNG\r\n\x1a\n" + b"\0" * 100, "is not an nbcli model file"),
        (pickle.dumps({"some": "dict"}), "is not an nbcli model file"),
        (pickle.dumps([1, 2, 3]), "is not an nbcli model file"),
    ],
)
def test_foreign_files_are_refused(tmp_path, content, message):
    path = tmp_path / "foreign.nb"
    path.write_bytes(content)
    with pytest.raises(ModelFileError, match=message):
        modelfile.load(str(path))


def test_compressed_joblib_and_future_versions_are_refused(tmp_path, classifier):
    payload = modelfile.to_payload(classifier)
    path = tmp_path / "z.nb"
    joblib.dump(payload, path, compress=3)
    with pytest.raises(ModelFileError, match="is not an nbcli model file"):
        modelfile.load(str(path))
    payload["format_version"] = 99
    modelfile.write_payload(payload, str(path))
    with pytest.raises(ModelFileError, match=r"written by a newer nbcli \(model format 99.*upgrade nbcli"):
        modelfile.load(str(path))


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(ModelFileError, match="no such model file"):
        modelfile.load(str(tmp_path / "nope.nb"))
    with pytest.raises(ModelFileError, match="is a folder"):
        modelfile.load(str(tmp_path))


def test_writes_are_atomic(tmp_path, classifier, monkeypatch):
    path = tmp_path / "m.nb"
    modelfile.save(classifier, str(path))
    before = path.read_bytes()
    assert sorted(os.listdir(tmp_path)) == [".m.nb.lock", "m.nb"]

    def failing_dump(obj, fh, *a, **k):
        fh.write(b"\x80\x04half a model")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(modelfile, "dump_payload", failing_dump)
    with pytest.raises(Exception, match="No space left on device"):
        modelfile.save(classifier, str(path))
    assert path.read_bytes() == before  # the old model is untouched
    assert sorted(os.listdir(tmp_path)) == [".m.nb.lock", "m.nb"]  # no temp file left


def test_new_files_get_normal_permissions_and_replacements_keep_them(tmp_path, classifier):
    path = tmp_path / "m.nb"
    old = os.umask(0o022)
    try:
        modelfile.save(classifier, str(path))
    finally:
        os.umask(old)
    assert (path.stat().st_mode & 0o777) == 0o644
    path.chmod(0o600)
    modelfile.save(classifier, str(path))
    assert (path.stat().st_mode & 0o777) == 0o600

"""The model file's bytes (store/codec.py): joblib's layout written without
joblib, read by a restricted unpickler that runs nothing from the file."""

import io
import os
import subprocess
import sys

import joblib
import numpy as np
import pytest

from nbcli.errors import ModelFileError
from nbcli.store import codec, modelfile
from nbcli.store.integrity import with_checksum
from nbcli.store.payload import format_version, to_payload


def test_the_file_is_a_plain_joblib_file(tmp_path, classifier):
    path = tmp_path / "m.nb"
    modelfile.save(classifier, str(path))
    payload = joblib.load(path)
    assert payload["format"] == "nbcli-model" and payload["format_version"] == format_version(classifier.model) == 1
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
        with_checksum(to_payload(classifier)),
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
        codec.dump_payload(payload, ours)
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
    ours = codec._SafeUnpickler  # read through the public reader's machinery
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


def test_what_the_writer_writes_the_reader_maps_back(tmp_path):
    payload = {"format": "x", "counts": np.arange(6, dtype=np.int64).reshape(2, 3), "names": ["a", "b"], "n": 7}
    path = tmp_path / "p.bin"
    with open(path, "wb") as fh:
        codec.dump_payload(payload, fh)
    data = path.read_bytes()
    got = codec.load_payload(io.BytesIO(data), data, len(data))
    assert got["names"] == ["a", "b"] and got["n"] == 7
    assert np.array_equal(got["counts"], payload["counts"]) and got["counts"].dtype == np.int64
    assert not got["counts"].flags.writeable  # a view of the bytes read, not a copy
    with pytest.raises(EOFError):
        codec.load_payload(io.BytesIO(data[:-5]), data[:-5], len(data) - 5)


def test_structure_problem_names_what_nbcli_never_writes():
    assert codec.structure_problem({"a": [1, 2.5, None, True, {"k": "v"}], "b": np.zeros(3)}) is None
    assert codec.structure_problem({1: "x"}) == "a key that is not a string"
    assert codec.structure_problem({"m": {"k": 2**64}}) == "an integer out of range in 'm'"
    assert codec.structure_problem({"m": (1, 2)}) == "a value of type tuple in 'm'"
    shared = [1]
    assert codec.structure_problem({"m": [shared, shared]}) == "'m' contains itself, or the same list or dict twice"
    deep: list = []
    for _ in range(40):
        deep = [deep]
    assert codec.structure_problem({"m": deep}) == "'m' is nested too deeply"
    assert codec.structure_problem({"m": {1: 2}}) == "a key that is not a string in 'm'"

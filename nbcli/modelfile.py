"""Saving and loading model files.

A model file is one uncompressed joblib file holding a dict of plain values
(str, int, float, bool, None, lists and dicts of them) and numpy arrays of
numeric types; see `FORMAT` below and the README's "The model file".

Writing uses `joblib.dump`, to a temporary file in the target's folder that
is flushed, fsynced and renamed over the target, under a lock file
(`.NAME.lock`) so concurrent writers take turns: a reader sees the old model
or the new one, never half of one.

Reading does not use joblib. `_SafeUnpickler` reads joblib's layout (a
pickle stream in which each array is a `NumpyArrayWrapper` record followed by
the raw array bytes) with a restricted unpickler that resolves only the three
globals such a file needs, to inert stand-ins, and maps every array straight
from the file (mmap) instead of copying it. So loading never runs code from
the file, costs no joblib import (~95 ms), and a model of a million terms
opens in about a millisecond. A test checks that `joblib.load` and this
reader agree.
"""

from __future__ import annotations

import mmap
import os
import pickle
import re
import struct
import tempfile
from contextlib import contextmanager

import numpy as np

from nbcli import __version__
from nbcli.errors import ModelFileError, NbcliError

FORMAT = "nbcli-model"
FORMAT_VERSION = 2
# Version 2 added the bernoulli and complement event models and the
# smoothing settings (estimate, m_estimate, prior_alpha, complement's
# transforms, the arrays `idf` and `fit_count`). A plain multinomial model
# with the posterior-mean estimate is still written as version 1, which
# older nbcli reads; every version up to FORMAT_VERSION loads.

_DTYPE_NAME = re.compile(r"[<>|=]?[biuf][1248]")


class _ArrayRecord:
    """Inert stand-in for joblib.numpy_pickle.NumpyArrayWrapper."""


class _NdarrayClass:
    """Inert stand-in for numpy.ndarray (joblib records the array's class)."""


def _dtype(name, align=False, copy=True):
    if not isinstance(name, str) or not _DTYPE_NAME.fullmatch(name):
        raise pickle.UnpicklingError(f"array type {name!r} is not allowed")
    return np.dtype(name)


_ALLOWED = {
    ("joblib.numpy_pickle", "NumpyArrayWrapper"): _ArrayRecord,
    ("numpy", "ndarray"): _NdarrayClass,
    ("numpy", "dtype"): _dtype,
}


class _SafeUnpickler(pickle._Unpickler):
    dispatch = pickle._Unpickler.dispatch.copy()

    def __init__(self, fh, buffer, size: int):
        super().__init__(fh)
        self._fh = fh
        self._buffer = buffer
        self._size = size

    def find_class(self, module, name):
        try:
            return _ALLOWED[(module, name)]
        except KeyError:
            raise pickle.UnpicklingError(f"refusing to load {module}.{name}") from None

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("persistent ids are not allowed")

    def load_build(self):
        state = self.stack.pop()
        obj = self.stack[-1]
        if isinstance(obj, _ArrayRecord):
            self.stack[-1] = self._read_array(state)
        elif isinstance(obj, np.dtype):
            if not (isinstance(state, tuple) and len(state) > 1 and state[1] in "<>|="):
                raise pickle.UnpicklingError("bad array type record")
            self.stack[-1] = obj.newbyteorder(state[1]) if state[1] in "<>" else obj
        else:
            raise pickle.UnpicklingError("unexpected object state in model file")

    dispatch[pickle.BUILD[0]] = load_build

    def _read_array(self, state):
        if not isinstance(state, dict):
            raise pickle.UnpicklingError("bad array record")
        shape, order, dtype = state.get("shape"), state.get("order"), state.get("dtype")
        if not (
            isinstance(shape, tuple)
            and all(isinstance(n, int) and n >= 0 for n in shape)
            and order in ("C", "F")
            and isinstance(dtype, np.dtype)
        ):
            raise pickle.UnpicklingError("bad array record")
        pos = self._fh.tell()
        if state.get("numpy_array_alignment_bytes") is not None:
            pad = self._fh.read(1)
            if not pad:
                raise EOFError
            pos += 1 + pad[0]
        count = 1
        for n in shape:
            count *= n
        nbytes = count * dtype.itemsize
        if pos + nbytes > self._size:
            raise EOFError
        if count == 0:
            array = np.zeros(shape, dtype=dtype, order=order)
        else:
            flat = np.frombuffer(self._buffer, dtype=dtype, count=count, offset=pos)
            array = flat.reshape(shape, order=order)
        self._fh.seek(pos + nbytes)
        if not array.dtype.isnative:
            array = array.astype(array.dtype.newbyteorder("="))
        return array


def read_payload(path: str) -> dict:
    """The raw dict stored in a model file (arrays memory-mapped, read-only)."""
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        raise ModelFileError(f"{path}: no such model file", hint="train one with 'nbcli train CORPUS -o MODEL'") from None
    except IsADirectoryError:
        raise ModelFileError(f"{path} is a folder, not a model file") from None
    except OSError as exc:
        raise ModelFileError(f"cannot read model file {path}: {exc.strerror}") from None
    with fh:
        size = os.fstat(fh.fileno()).st_size
        head = fh.read(2)
        if len(head) == 0:
            raise ModelFileError(f"{path} is empty", hint="the model file was truncated; train it again")
        if head[:1] != b"\x80":
            raise ModelFileError(f"{path} is not an nbcli model file", hint="give a file written by 'nbcli train'")
        fh.seek(0)
        buffer = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            payload = _SafeUnpickler(fh, buffer, size).load()
        except (EOFError, ValueError, struct.error) as exc:
            raise ModelFileError(
                f"{path} is truncated or corrupt ({type(exc).__name__})",
                hint="train the model again",
            ) from None
        except pickle.UnpicklingError as exc:
            raise ModelFileError(f"{path} is not an nbcli model file ({exc})", hint="give a file written by 'nbcli train'") from None
        except Exception as exc:  # anything else a damaged stream can raise
            raise ModelFileError(
                f"{path} is corrupt ({type(exc).__name__}: {exc})", hint="train the model again"
            ) from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise ModelFileError(f"{path} is not an nbcli model file", hint="give a file written by 'nbcli train'")
    version = payload.get("format_version")
    if not isinstance(version, int):
        raise ModelFileError(f"{path} has no format version", hint="train the model again")
    if version > FORMAT_VERSION:
        raise ModelFileError(
            f"{path} was written by a newer nbcli (model format {version}, this nbcli reads up to {FORMAT_VERSION})",
            hint="upgrade nbcli",
        )
    return payload


@contextmanager
def _locked(path: str):
    import fcntl

    folder, name = os.path.split(os.path.abspath(path))
    lock_path = os.path.join(folder, f".{name}.lock")
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _new_file_mode(path: str) -> int:
    try:
        return os.stat(path).st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_payload(payload: dict, path: str) -> None:
    """Write `payload` to `path` atomically (temp file, fsync, rename)."""
    import joblib

    folder, name = os.path.split(os.path.abspath(path))
    if os.path.isdir(path):
        raise NbcliError(f"{path} is a folder", hint="give a file name for the model, such as model.nb")
    if not os.path.isdir(folder):
        raise NbcliError(f"cannot write {path}: folder {folder} does not exist", hint="create it first")
    try:
        with _locked(path):
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
            try:
                with os.fdopen(fd, "wb") as fh:
                    joblib.dump(payload, fh)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.chmod(tmp, _new_file_mode(path))
                os.replace(tmp, path)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
            dir_fd = os.open(folder, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
    except OSError as exc:
        raise NbcliError(f"cannot write model file {path}: {exc.strerror}") from None


# -- Classifier <-> payload ------------------------------------------------------


def _plain(value):
    """Check that a metadata value holds only plain Python types."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not a plain value: {type(value).__name__}")


def format_version(model) -> int:
    """1 for a plain multinomial model (readable by older nbcli), else 2."""
    plain = model.kind == "multinomial" and model.estimate == "mean" and model.m_estimate is None and model.prior_alpha is None
    return 1 if plain else FORMAT_VERSION


def to_payload(classifier) -> dict:
    model, vocab = classifier.model, classifier.vocabulary
    return {
        "format": FORMAT,
        "format_version": format_version(model),
        "nbcli_version": __version__,
        "classes": list(model.classes),
        "model": _plain(model.spec()),
        "analyzer": _plain(classifier.analyzer_options.to_dict()),
        "meta": _plain(classifier.meta),
        "class_count": np.ascontiguousarray(model.class_count, dtype=np.float64),
        "feature_count": np.ascontiguousarray(model.feature_count),
        "doc_freq": None if model.doc_freq is None else np.ascontiguousarray(model.doc_freq),
        "vocab_hashes": np.ascontiguousarray(vocab.hashes, dtype=np.uint64),
        "vocab_blob": np.ascontiguousarray(vocab.blob, dtype=np.uint8),
        "vocab_offsets": np.ascontiguousarray(vocab.offsets, dtype=np.int64),
        "log_prior": np.ascontiguousarray(model.log_prior, dtype=np.float64),
        "weights": np.ascontiguousarray(model.weights, dtype=np.float64),
        "bias": np.ascontiguousarray(model.bias, dtype=np.float64),
        "unknown_weight": np.ascontiguousarray(model.unknown_weight, dtype=np.float64),
        "idf": None if getattr(model, "idf", None) is None else np.ascontiguousarray(model.idf, dtype=np.float64),
        "fit_count": None if getattr(model, "fit_count", None) is None else np.ascontiguousarray(model.fit_count, dtype=np.float64),
    }


def save(classifier, path: str) -> None:
    """Write a Classifier to `path` atomically."""
    write_payload(to_payload(classifier), path)


class _Corrupt(Exception):
    pass


def _array(p: dict, key: str, kinds: str, shape: tuple, optional: bool = False):
    a = p.get(key)
    if a is None and optional:
        return None
    if not isinstance(a, np.ndarray) or a.dtype.kind not in kinds or len(a.shape) != len(shape):
        raise _Corrupt(key)
    for have, want in zip(a.shape, shape):
        if want is not None and have != want:
            raise _Corrupt(key)
    return a


def from_payload(p: dict, path: str = "model"):
    """Rebuild a Classifier from a payload read by `read_payload`."""
    from nbcli.classifier import Classifier
    from nbcli.model import MODELS
    from nbcli.tokenize import AnalyzerOptions
    from nbcli.vectorize import Vocabulary

    try:
        classes = p.get("classes")
        if not (isinstance(classes, list) and len(classes) >= 2 and all(isinstance(c, str) for c in classes)):
            raise _Corrupt("classes")
        n_classes = len(classes)
        hashes = _array(p, "vocab_hashes", "u", (None,))
        n_terms = len(hashes)
        blob = _array(p, "vocab_blob", "u", (None,))
        offsets = _array(p, "vocab_offsets", "i", (n_terms + 1,))
        if n_terms and (offsets[0] != 0 or offsets[-1] != len(blob)):
            raise _Corrupt("vocab_offsets")
        class_count = _array(p, "class_count", "f", (n_classes,))
        feature_count = _array(p, "feature_count", "iuf", (n_classes, n_terms))
        doc_freq = _array(p, "doc_freq", "iuf", (n_classes, n_terms), optional=True)
        tables = (
            _array(p, "log_prior", "f", (n_classes,)),
            _array(p, "weights", "f", (n_terms, n_classes)),
            _array(p, "bias", "f", (n_classes,)),
            _array(p, "unknown_weight", "f", (n_classes,)),
        )
        spec = p.get("model")
        if not isinstance(spec, dict):
            raise _Corrupt("model")
        kind = spec.get("kind")
        if kind not in MODELS:
            raise ModelFileError(
                f"{path} uses event model {spec.get('kind')!r}, which this nbcli does not know",
                hint="upgrade nbcli",
            )
        analyzer = p.get("analyzer")
        meta = p.get("meta")
        if not isinstance(analyzer, dict) or not isinstance(meta, dict):
            raise _Corrupt("analyzer" if not isinstance(analyzer, dict) else "meta")
        m_estimate = spec.get("m_estimate")
        if m_estimate is not None and not (isinstance(m_estimate, list) and len(m_estimate) == 2):
            raise _Corrupt("model")
        settings = dict(
            alpha=spec.get("alpha", 1.0),
            prior=spec.get("prior", "fit"),
            doc_freq=doc_freq,
            unknown=spec.get("unknown", "skip"),
            tables=tables,
            estimate=spec.get("estimate", "mean"),
            m_estimate=m_estimate,
            prior_alpha=spec.get("prior_alpha"),
        )
        if kind == "complement":
            settings.update(
                tf_log=bool(spec.get("tf_log")),
                length_norm=bool(spec.get("length_norm")),
                weight_norm=bool(spec.get("weight_norm")),
                idf=_array(p, "idf", "f", (n_terms,), optional=True),
                fit_count=_array(p, "fit_count", "f", (n_classes, n_terms), optional=True),
            )
            if bool(spec.get("idf")) != (settings["idf"] is not None):
                raise _Corrupt("idf")
        model = MODELS[kind](classes, class_count, feature_count, **settings)
        options = AnalyzerOptions.from_dict(analyzer)
    except _Corrupt as exc:
        raise ModelFileError(f"{path} is corrupt (bad or missing '{exc}')", hint="train the model again") from None
    except (TypeError, ValueError, NbcliError) as exc:
        if isinstance(exc, ModelFileError):
            raise
        raise ModelFileError(f"{path} is corrupt ({exc})", hint="train the model again") from None
    return Classifier(options, Vocabulary(hashes, blob, offsets), model, meta)


def load(path: str):
    """Read a Classifier from a model file (see the module docstring)."""
    return from_payload(read_payload(path), path)

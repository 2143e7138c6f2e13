"""Saving and loading model files.

A model file is one uncompressed joblib file holding a dict of plain values
(str, int, float, bool, None, lists and dicts of them) and numpy arrays of
numeric types; see `FORMAT` below and the README's "The model file".

Writing produces exactly the bytes `joblib.dump` would (`_JoblibPickler`,
which a test checks byte for byte against joblib) without importing joblib
(~50 ms of a one-message `nbcli learn`), to a temporary file in the
target's folder that is flushed, fsynced and renamed over the target, under
a lock file (`.NAME.lock`) so concurrent writers take turns: a reader sees
the old model or the new one, never half of one. A model path that is a
symbolic link is resolved first (`target`): the link's target is locked and
replaced, the link stays. The lock file is opened without following links
and must be a regular file.

Reading does not use joblib. `_SafeUnpickler` reads joblib's layout (a
pickle stream in which each array is a `NumpyArrayWrapper` record followed by
the raw array bytes) with a restricted unpickler that resolves only the three
globals such a file needs, to inert stand-ins, and maps every array straight
from the file (mmap) instead of copying it. So loading never runs code from
the file, costs no joblib import (~95 ms), and copies nothing; what loading
costs is the checksum below, one pass over the mapped bytes (23 ms for a
105 MB model of 1.77M terms). A test checks that `joblib.load` and this
reader agree.

Damage and crafted files: the payload carries a checksum of everything in it
(`payload_checksum`), checked on every load, so a file changed after nbcli
wrote it (a flipped byte, a bad sector) is refused instead of loaded with
negative counts. A checksum is no defence against a crafted file (its
author can recompute it, or drop it: files written before checksums have
none and still load), so every load also checks the payload's structure
(plain values only, bounded nesting, no cycles) and the model's invariants
(`from_payload`): shapes, finite and bounded tables, non-negative counts,
an ascending vocabulary, valid analyzer settings and class names. All of
them are one vectorised pass over each array; see the README's "The model
file" for what they cost.
"""

from __future__ import annotations

import errno
import io
import json
import mmap
import os
import pickle
import re
import struct
import tempfile
import zlib
from contextlib import contextmanager

import numpy as np

from nbcli import __version__
from nbcli.errors import ModelFileError, NbcliError

FORMAT = "nbcli-model"
FORMAT_VERSION = 3
# Version 2 added the bernoulli and complement event models and the
# smoothing settings (estimate, m_estimate, prior_alpha, complement's
# transforms, the arrays `idf` and `fit_count`). A plain multinomial model
# with the posterior-mean estimate is still written as version 1, which
# older nbcli reads; every version up to FORMAT_VERSION loads.

# The checksum is an extra key, which every nbcli ignores unless it knows
# it, so adding it needed no new format version: older nbcli still reads
# the files, and files without one (written before it) load with the
# invariant checks alone. It is for damage, not tampering, and it must not
# make loading slow: a one-message predict maps the arrays and reads only
# the pages it needs, and checking means reading every byte. So the arrays'
# bytes are read as 64-bit words and summed with numpy, each word weighted
# by its place (`_word_sum`): 18 ms for a 105 MB model of 1.77M terms, where
# zlib's CRC-32 took 44 ms and blake2b would take ~110 ms. Damage to one
# word always changes the sum (the weights are odd, so invertible mod 2^64),
# and so does moving words about; random damage elsewhere leaves it
# unchanged with odds of about 2^-64. The plain values and the arrays'
# names, types and shapes go through CRC-32 (they are small).
CHECKSUM_KEY = "checksum"
_CHECKSUM = re.compile(r"sum64:[0-9a-f]{24}")
_SUM_MIX = 0x9E3779B97F4A7C15  # odd: folds each block's (and array's) sum into the total by place
_SUM_BLOCK = 8192  # words (64 KB): a block and its weighted copy stay in the cache
_MAX_DEPTH = 32  # nesting of the plain values (nbcli's own files use 4)
_MAX_CALIBRATION_TABLE = 1 << 20  # numbers in one calibration parameter (an isotonic table is a few hundred)

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


class _BoundedReader:
    """The file as the unpickler sees it: asking for more bytes than are
    left is an EOFError up front, where a damaged length field (a frame of
    2^60 bytes) would otherwise be allocated before the read comes up short."""

    def __init__(self, fh, size: int):
        self._fh = fh
        self._size = size

    def read(self, n: int = -1) -> bytes:
        if n is not None and n > self._size - self._fh.tell():
            raise EOFError
        return self._fh.read(n)

    def readline(self) -> bytes:
        return self._fh.readline()


class _SafeUnpickler(pickle._Unpickler):
    dispatch = pickle._Unpickler.dispatch.copy()

    def __init__(self, fh, buffer, size: int):
        super().__init__(_BoundedReader(fh, size))
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

    def load_bytearray8(self):
        raise pickle.UnpicklingError("byte arrays are not allowed")  # nbcli never writes one; it would allocate first

    dispatch[pickle.BYTEARRAY8[0]] = load_bytearray8

    def _read_array(self, state):
        if not isinstance(state, dict):
            raise pickle.UnpicklingError("bad array record")
        shape, order, dtype = state.get("shape"), state.get("order"), state.get("dtype")
        if not (
            set(state) <= _ARRAY_STATE_KEYS
            and state.get("subclass", _NdarrayClass) is _NdarrayClass
            and state.get("allow_mmap", True) in (True, False)
            and state.get("numpy_array_alignment_bytes") in (None, _ALIGNMENT)
            and isinstance(shape, tuple)
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
            # joblib aligns the data to 16 bytes with 0xff; check them, so a flipped bit there is caught too
            padding = self._buffer[pos + 1 : pos + 1 + pad[0]]
            if pad[0] > _ALIGNMENT or len(padding) != pad[0] or any(b != 0xFF for b in bytes(padding)):
                raise pickle.UnpicklingError("bad array padding")
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


class _ArrayHeader:
    """What joblib pickles in an array's place (its NumpyArrayWrapper's
    attributes); the array's bytes follow it in the file."""

    def __init__(self, array: np.ndarray, order: str):
        self.subclass = np.ndarray
        self.shape = array.shape
        self.order = order
        self.dtype = array.dtype
        self.allow_mmap = True
        self.numpy_array_alignment_bytes = _ALIGNMENT


_ALIGNMENT = 16  # joblib's NUMPY_ARRAY_ALIGNMENT_BYTES
# what joblib records of an array (its NumpyArrayWrapper's attributes); anything else is damage
_ARRAY_STATE_KEYS = {"subclass", "shape", "order", "dtype", "allow_mmap", "numpy_array_alignment_bytes"}


class _JoblibPickler(pickle._Pickler):
    """joblib.dump's layout for a dict of plain values and numeric arrays,
    as joblib's NumpyPickler writes it: each array is pickled as a
    `joblib.numpy_pickle.NumpyArrayWrapper` record, the pickle frame is
    committed, and the array's bytes follow: one byte giving the padding to
    a 16-byte boundary, the padding (0xff), then the data in the record's
    order. The record's class is named, not imported."""

    def __init__(self, fh):
        super().__init__(fh, protocol=pickle.DEFAULT_PROTOCOL)
        self._fh = fh

    def save_global(self, obj, name=None):
        if obj is _ArrayHeader:
            self.save("joblib.numpy_pickle")
            self.save("NumpyArrayWrapper")
            self.write(pickle.STACK_GLOBAL)
            self.memoize(obj)
            return
        super().save_global(obj, name)

    def save(self, obj, save_persistent_id=True):
        if type(obj) is not np.ndarray or obj.dtype.hasobject:
            super().save(obj, save_persistent_id)
            return
        order = "F" if (obj.flags.f_contiguous and not obj.flags.c_contiguous) else "C"
        super().save(_ArrayHeader(obj, order))
        self.framer.commit_frame(force=True)
        pad = _ALIGNMENT - (self._fh.tell() + 1) % _ALIGNMENT
        self._fh.write(bytes([pad]) + b"\xff" * pad)
        if order == "C" and obj.flags.c_contiguous and obj.size:
            self._fh.write(memoryview(obj).cast("B"))
        elif obj.size:
            self._fh.write(obj.tobytes(order))


def dump_payload(payload: dict, fh) -> None:
    """Write `payload` to the binary file `fh` as `joblib.dump` would."""
    if pickle.DEFAULT_PROTOCOL < 4:
        raise RuntimeError("nbcli writes model files with pickle protocol 4 or later")
    _JoblibPickler(fh).dump(payload)


def read_payload(path: str, copy: bool = False) -> dict:
    """The raw dict stored in a model file (arrays memory-mapped, read-only;
    copy=True: read into memory instead, so that nothing done to the file
    afterwards, not even truncating it in place, can reach them: what
    `nbcli serve` does with small models)."""
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        raise ModelFileError(
            f"{path}: no such model file", hint="train one with 'nbcli train CORPUS -o MODEL'"
        ) from None
    except IsADirectoryError:
        raise ModelFileError(f"{path} is a folder, not a model file") from None
    except OSError as exc:
        raise ModelFileError(f"cannot read model file {path}: {exc.strerror}") from None
    with fh:
        if copy:
            buffer = fh.read()
            size, stream = len(buffer), io.BytesIO(buffer)
        else:
            size, stream = os.fstat(fh.fileno()).st_size, fh
        head = stream.read(2)
        if len(head) == 0:
            raise ModelFileError(f"{path} is empty", hint="the model file was truncated; train it again")
        if head[:1] != b"\x80":
            raise ModelFileError(f"{path} is not an nbcli model file", hint="give a file written by 'nbcli train'")
        stream.seek(0)
        if not copy:
            buffer = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            payload = _SafeUnpickler(stream, buffer, size).load()
        except (EOFError, ValueError, struct.error) as exc:
            raise ModelFileError(
                f"{path} is truncated or corrupt ({type(exc).__name__})",
                hint="train the model again",
            ) from None
        except pickle.UnpicklingError as exc:
            raise ModelFileError(
                f"{path} is not an nbcli model file ({exc})", hint="give a file written by 'nbcli train'"
            ) from None
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
    problem = _structure_problem(payload)
    if problem:
        raise ModelFileError(f"{path} is corrupt ({problem})", hint="train the model again")
    stored = payload.get(CHECKSUM_KEY)
    if stored is not None:
        if not (isinstance(stored, str) and _CHECKSUM.fullmatch(stored)):
            raise ModelFileError(f"{path} is corrupt (bad checksum record)", hint="train the model again")
        if stored != payload_checksum(payload):
            raise ModelFileError(
                f"{path} is corrupt (checksum mismatch)",
                hint="the file changed after nbcli wrote it; train the model again",
            )
    return payload


def _structure_problem(payload: dict) -> str | None:
    """What makes a payload more than string keys mapping to numpy arrays
    and plain values (None, bool, int, float, str, lists, dicts with string
    keys), or None. A pickle can build what nbcli never writes: a list that
    contains itself (which recursion over it never finishes), nesting
    thousands deep, a shared sub-list repeated 2^n times, integers of a
    million digits, inert stand-in objects; refuse them all here, in one
    walk that visits each container once."""
    if not all(isinstance(key, str) for key in payload):
        return "a key that is not a string"
    seen: set[int] = set()
    stack = [(key, value, 0) for key, value in payload.items() if not isinstance(value, np.ndarray)]
    while stack:
        key, value, depth = stack.pop()
        kind = type(value)
        if value is None or kind in (bool, float, str):
            continue
        if kind is int:
            if not -(1 << 63) <= value < (1 << 64):
                return f"an integer out of range in '{key}'"
            continue
        if kind not in (list, dict):
            return f"a value of type {kind.__name__} in '{key}'"
        if depth >= _MAX_DEPTH:
            return f"'{key}' is nested too deeply"
        if id(value) in seen:
            return f"'{key}' contains itself, or the same list or dict twice"
        seen.add(id(value))
        if kind is dict:
            if not all(type(k) is str for k in value):
                return f"a key that is not a string in '{key}'"
            value = value.values()
        stack.extend((key, item, depth + 1) for item in value)
    return None


def payload_checksum(payload: dict) -> str:
    """'sum64:' and 24 hex digits over everything in the payload but the
    checksum (see CHECKSUM_KEY): a CRC-32 of a canonical JSON text of the
    plain values (sorted keys) and of each array's name, type and shape,
    and a 64-bit sum of the arrays' little-endian bytes as words (the last
    few bytes of an array padded with zeros), each array's sum folded in by
    its place. Arrays are read straight from the mapped file. The payload
    must have passed `_structure_problem`."""
    plain = {k: v for k, v in payload.items() if k != CHECKSUM_KEY and not isinstance(v, np.ndarray)}
    text = json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=True)
    crc = zlib.crc32(text.encode("ascii"))
    total = 0
    for key in sorted(k for k, v in payload.items() if isinstance(v, np.ndarray)):
        array = payload[key]
        array = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))  # no copy on little-endian machines
        crc = zlib.crc32(f"{key}:{array.dtype.str}:{array.shape}".encode("ascii"), crc)
        total = (total * _SUM_MIX + _word_sum(array.reshape(-1).view(np.uint8))) % (1 << 64)
    return f"sum64:{crc:08x}{total:016x}"


def _word_sum(raw: np.ndarray) -> int:
    """A place-sensitive 64-bit sum of bytes: the little-endian 64-bit words
    (the last few bytes padded with zeros), block by block, each word w_i
    counted as w_i (2i + 1) within its block (an odd weight, so any change
    to one word changes the sum) and the blocks folded in by their place;
    then the length."""
    whole = len(raw) // 8 * 8
    words = raw[:whole].view("<u8")
    total, weights = 0, None
    for start in range(0, len(words), _SUM_BLOCK):
        block = words[start : start + _SUM_BLOCK]
        if weights is None or len(weights) != len(block):
            weights = np.arange(len(block), dtype=np.uint64) * np.uint64(2) + np.uint64(1)
        total = (total * _SUM_MIX + int(np.add.reduce(block * weights, dtype=np.uint64))) % (1 << 64)
    tail = int.from_bytes(raw[whole:].tobytes(), "little")
    return (total * _SUM_MIX + tail + len(raw)) % (1 << 64)


def with_checksum(payload: dict) -> dict:
    """`payload` with its checksum (re)computed (`write_payload` does this)."""
    payload = {k: v for k, v in payload.items() if k != CHECKSUM_KEY}
    return {**payload, CHECKSUM_KEY: payload_checksum(payload)}


_held: set[str] = set()  # the model files whose lock this process holds


def target(path: str) -> str:
    """The file that writing model `path` replaces, and whose lock it takes:
    a symbolic link is followed to its final target (a user's `mail.nb ->
    /srv/shared.nb` learns into the shared file, which every user of it
    then reads; the link stays a link). Every writer resolves the link
    alike, so writers through the link and to the target take turns."""
    return os.path.realpath(path)


@contextmanager
def locked(path: str):
    """Hold the lock of model file `path` (`.NAME.lock` beside it) for a
    read-modify-write: every writer takes it, so updates take turns and none
    is lost. It is an flock(2) lock, which the kernel drops when its holder
    dies (even by kill -9), so a crashed writer never leaves a stale lock;
    the lock file itself stays, empty, and means nothing by existing.
    Re-entrant within a process (write_payload inside it does not wait on
    itself). Temporary files of writers that were killed are removed here,
    since no other writer can be running."""
    import fcntl
    import stat

    key = target(path)
    if key in _held:
        yield
        return
    folder, name = os.path.split(key)
    lock_path = os.path.join(folder, f".{name}.lock")
    try:  # never through a link: a dangling .NAME.lock link would make every learner create its target
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NbcliError(
                f"cannot lock model file {path}: its lock file {lock_path} is a symbolic link",
                hint=f"remove {lock_path}; nbcli makes it again",
            ) from None
        raise NbcliError(f"cannot lock model file {path}: {exc.strerror} ({lock_path})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NbcliError(
            f"cannot lock model file {path}: its lock file {lock_path} is not a regular file",
            hint=f"remove {lock_path}; nbcli makes it again",
        )
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _held.add(key)
        _remove_stale_temporaries(folder, name)
        yield
    finally:
        _held.discard(key)
        os.close(fd)


def _remove_stale_temporaries(folder: str, name: str) -> None:
    prefix = f".{name}."
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for entry in names:
        if entry.startswith(prefix) and entry.endswith(".tmp"):
            try:
                os.unlink(os.path.join(folder, entry))
            except OSError:
                pass


def _new_file_mode(path: str) -> int:
    try:
        return os.stat(path).st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def check_writable(path: str) -> None:
    """Refuse a model path that cannot be written: a folder, or a file in a
    folder that does not exist (checked again when writing; commands check
    first, before reading their input)."""
    folder = os.path.dirname(target(path))
    if os.path.isdir(path):
        raise NbcliError(f"{path} is a folder", hint="give a file name for the model, such as model.nb")
    if not os.path.isdir(folder):
        raise NbcliError(f"cannot write {path}: folder {folder} does not exist", hint="create it first")


def write_payload(payload: dict, path: str, checksum: bool = True) -> None:
    """Write `payload` to `path` atomically (temp file, fsync, rename),
    with its checksum computed afresh (checksum=False: with none, as nbcli
    wrote files before checksums; for tests)."""
    payload = with_checksum(payload) if checksum else {k: v for k, v in payload.items() if k != CHECKSUM_KEY}

    check_writable(path)
    resolved = target(path)
    folder, name = os.path.split(resolved)
    try:
        with locked(path):
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
            try:
                with os.fdopen(fd, "wb") as fh:
                    dump_payload(payload, fh)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.chmod(tmp, _new_file_mode(resolved))
                os.replace(tmp, resolved)
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


def format_version(model, calibrated: bool = False) -> int:
    """1 for a plain multinomial model (readable by older nbcli); 3 for a
    calibrated model (an older nbcli would ignore the calibration and give
    other probabilities, so it must refuse the file); else 2."""
    if calibrated:
        return FORMAT_VERSION
    plain = (
        model.kind == "multinomial"
        and model.estimate == "mean"
        and model.m_estimate is None
        and model.prior_alpha is None
        and model.alpha_per_document is None
    )
    return 1 if plain else 2


def compute_model_id(classifier) -> str:
    """A short identity of a model (6 hex digits): a digest of its counts
    (class counts, vocabulary, term counts, document frequencies), classes,
    analyzer and event-model settings. The same documents learned with the
    same options give the same identity, in any order; `nbcli filter` names
    it in its header, so a filter running another model than the one
    trained shows."""
    model = classifier.model
    if is_table(classifier):
        spec, arrays = model.state()
        total = zlib.crc32(json.dumps([model.classes, _plain(spec)], sort_keys=True).encode())
        if classifier.calibration is not None:
            total = zlib.crc32(json.dumps(calibration_state(classifier.calibration), sort_keys=True).encode(), total)
        for name in sorted(arrays):
            raw = np.ascontiguousarray(arrays[name]).reshape(-1).view(np.uint8)
            total = (total * _SUM_MIX + _word_sum(raw)) % (1 << 64)
        return f"{(total ^ (total >> 32)) & 0xFFFFFF:06x}"
    settings = [model.classes, classifier.analyzer_options.to_dict(), _plain(model.spec())]
    if classifier.calibration is not None:  # a calibrated model gives other probabilities: another identity
        settings.append(calibration_state(classifier.calibration))
    total = zlib.crc32(json.dumps(settings, sort_keys=True).encode())
    arrays = [model.class_count, classifier.vocabulary.hashes, model.feature_count]
    if model.doc_freq is not None:
        arrays.append(model.doc_freq)
    for array in arrays:
        raw = np.ascontiguousarray(np.asarray(array, dtype=np.float64 if array is not arrays[1] else np.uint64))
        total = (total * _SUM_MIX + _word_sum(raw.reshape(-1).view(np.uint8))) % (1 << 64)
    return f"{(total ^ (total >> 32)) & 0xFFFFFF:06x}"


def _table_payload(classifier) -> dict:
    """A table model's payload: its spec under "model" (kind "table"), its
    arrays as "table_<name>" (see `tables.TableModel.state`)."""
    spec, arrays = classifier.model.state()
    extra = {f"table_{name}": np.ascontiguousarray(a) for name, a in arrays.items()}
    if classifier.calibration is not None:
        extra["calibration"] = calibration_state(classifier.calibration)
    extra["model_id"] = compute_model_id(classifier)
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "nbcli_version": __version__,
        "classes": list(classifier.classes),
        "model": _plain(spec),
        "meta": _plain(classifier.meta),
        "class_count": np.ascontiguousarray(classifier.model.class_count, dtype=np.float64),
        **extra,
    }


def _table_from_payload(p: dict, path: str):
    """A TableClassifier from `_table_payload`'s payload, every invariant
    checked by `TableModel.from_state`."""
    from nbcli.nb.table_classifier import TableClassifier
    from nbcli.nb.tables import TableModel

    try:
        classes = _classes(p)
        meta = _meta(p.get("meta"))
        spec = p["model"]
        arrays = {k[len("table_") :]: v for k, v in p.items() if k.startswith("table_")}
        if any(not isinstance(a, np.ndarray) for a in arrays.values()):
            raise _Corrupt("table", "has a value that is not an array")
        model = TableModel.from_state(spec, arrays)
        if list(model.classes) != classes:
            raise _Corrupt("classes", "differ from the table model's")
        calibration = _calibration(p, len(classes))
    except _Corrupt as exc:
        raise ModelFileError(f"{path} is corrupt ({exc})", hint="train the model again") from None
    except (TypeError, ValueError, KeyError, ArithmeticError, NbcliError) as exc:
        if isinstance(exc, ModelFileError):
            raise
        what = exc.message if isinstance(exc, NbcliError) else str(exc)
        raise ModelFileError(f"{path} is corrupt ({what})", hint="train the model again") from None
    classifier = TableClassifier(model, meta, calibration)
    stored_id = p.get("model_id")
    if isinstance(stored_id, str) and re.fullmatch(r"[0-9a-f]{6}", stored_id):
        classifier.stored_model_id = stored_id
    return classifier


def is_table(classifier) -> bool:
    return getattr(classifier.model, "kind", None) == "table"


def to_payload(classifier) -> dict:
    if is_table(classifier):
        return _table_payload(classifier)
    model, vocab = classifier.model, classifier.vocabulary
    extra = {}
    if classifier.record is not None:
        extra.update(classifier.record.arrays())
    if classifier.last_seen is not None:
        extra["term_last_seen"] = np.ascontiguousarray(classifier.last_seen, dtype=np.int32)
    if classifier.calibration is not None:
        extra["calibration"] = calibration_state(classifier.calibration)
    if getattr(classifier, "expected", None) is not None:
        extra["em_count"] = np.ascontiguousarray(classifier.expected[0], dtype=np.float64)
        extra["em_docs"] = np.ascontiguousarray(classifier.expected[1], dtype=np.float64)
    extra["model_id"] = compute_model_id(classifier)
    return {
        "format": FORMAT,  # first: nbcli recognises its files by it (sources._is_model)
        "format_version": format_version(model, classifier.calibration is not None),
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
        "fit_count": None
        if getattr(model, "fit_count", None) is None
        else np.ascontiguousarray(model.fit_count, dtype=np.float64),
        **extra,
    }


def calibration_state(calibration) -> dict:
    """A Calibration's state with plain lists for its (small) arrays."""
    state = calibration.state()
    return {
        **_plain({k: v for k, v in state.items() if k != "params"}),
        "params": {name: np.asarray(value).tolist() for name, value in state["params"].items()},
    }


def _expected(p: dict, n_classes: int, n_terms: int, feature_count, class_count):
    """An EM model's expected counts ("em_count" (C, V), "em_docs" (C,)):
    finite, not negative, and within the model's counts (which include
    them); None when the file has none."""
    if "em_count" not in p and "em_docs" not in p:
        return None
    tf = _within(_array(p, "em_count", "f", (n_classes, n_terms)), "em_count", 0, _MAX_COUNT)
    docs = _within(_array(p, "em_docs", "f", (n_classes,)), "em_docs", 0, _MAX_COUNT)
    slack = 1e-6
    if not (tf <= np.asarray(feature_count, dtype=np.float64) + slack).all() or not (docs <= class_count + slack).all():
        raise _Corrupt("em_count", "exceeds the model's counts")
    return tf, docs


def calibration_of(p: dict, n_classes: int, path: str = "model"):
    """`_calibration` for other readers of a calibration state (`dump`)."""
    try:
        return _calibration(p, n_classes)
    except _Corrupt as exc:
        raise ModelFileError(f"{path} is corrupt ({exc})", hint="train the model again") from None


def _calibration(p: dict, n_classes: int):
    """The payload's calibration (None: none), checked by `Calibration.from_state`."""
    state = p.get("calibration")
    if state is None:
        return None
    from nbcli.nb.calibrators import Calibration

    if not isinstance(state, dict) or not isinstance(state.get("params"), dict):
        raise _Corrupt("calibration")
    params = {}
    for name, value in state["params"].items():
        if not isinstance(value, list) or len(value) > _MAX_CALIBRATION_TABLE:
            raise _Corrupt("calibration", f"has a bad {name}")
        if not all(type(v) in (int, float) for v in value):
            raise _Corrupt("calibration", f"has a bad {name}")
        params[name] = np.asarray(value, dtype=np.int64 if all(type(v) is int for v in value) and value else np.float64)
    try:
        return Calibration.from_state({**state, "params": params}, n_classes)
    except NbcliError as exc:
        detail = exc.message.removeprefix("the model's calibration is damaged: ")
        raise _Corrupt("calibration", f"is damaged: {detail}") from None


def payload_bytes(payload: dict) -> int:
    """About how many bytes `write_payload` writes for `payload`: its arrays'
    bytes and their records, and the plain values (a bound to check before
    writing, within a few KB)."""
    arrays = [v for v in payload.values() if isinstance(v, np.ndarray)]
    plain = {k: v for k, v in payload.items() if not isinstance(v, np.ndarray)}
    size = sum(a.nbytes + 256 for a in arrays)
    return size + len(json.dumps(plain, default=repr))


def save(classifier, path: str) -> None:
    """Write a Classifier to `path` atomically, with its checksum."""
    write_payload(to_payload(classifier), path)


class _Corrupt(Exception):
    """A bad payload entry: _Corrupt(key) or _Corrupt(key, what is wrong)."""

    def __str__(self) -> str:
        key, *why = self.args
        return f"'{key}' {why[0]}" if why else f"bad or missing '{key}'"


# Bounds that no trained model comes near, so that a crafted one cannot
# overflow what is computed from it (sums of counts in int64 or float64,
# scores summed over a long document): counts are exact in float64 up to
# 2^53, and a table entry is a log probability (or a sum of them).
_MAX_COUNT = float(1 << 48)
_TABLE_LIMIT = 1e12


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


def _within(a, key: str, low: float, high: float):
    """a, if every value lies in [low, high] (NaN does not): min and max
    are two passes without a temporary array."""
    if a is not None and a.size and not (low <= a.min() and a.max() <= high):
        raise _Corrupt(key, f"has values outside [{low:g}, {high:g}]")
    return a


def _number(spec: dict, key: str, default, low: float, high: float = float("inf"), above: bool = False):
    value = spec.get(key, default)
    if value is None:
        return None
    if type(value) not in (int, float) or not (low < value if above else low <= value) or not value <= high:
        raise _Corrupt("model", f"has a bad {key} ({value!r})")
    return float(value)


def _vocabulary(p: dict):
    """(hashes, blob, offsets), checked: strictly ascending 64-bit hashes
    (lookups are binary searches), and ascending offsets within the blob.
    The terms' texts are not decoded here (that would cost as much as the
    checksum on a big model): `Vocabulary.terms` decodes what it shows,
    and shows bytes that are not UTF-8 as U+FFFD."""
    hashes = _array(p, "vocab_hashes", "u", (None,))
    n_terms = len(hashes)
    blob = _array(p, "vocab_blob", "u", (None,))
    offsets = _array(p, "vocab_offsets", "i", (n_terms + 1,))
    if hashes.dtype != np.uint64 or blob.dtype != np.uint8:
        raise _Corrupt("vocab_hashes" if hashes.dtype != np.uint64 else "vocab_blob")
    if n_terms > 1 and not (hashes[1:] > hashes[:-1]).all():
        raise _Corrupt("vocab_hashes", "is not strictly ascending")
    if offsets[0] != 0 or offsets[-1] != len(blob) or (offsets[1:] < offsets[:-1]).any():
        raise _Corrupt("vocab_offsets")
    return hashes, blob, offsets


def _classes(p: dict) -> list:
    from nbcli.nb.event_models import label_problem

    classes = p.get("classes")
    if not (isinstance(classes, list) and len(classes) >= 2 and all(isinstance(c, str) for c in classes)):
        raise _Corrupt("classes")
    if len(set(classes)) != len(classes):
        raise _Corrupt("classes", "names a class twice")
    for label in classes:
        problem = label_problem(label)
        if problem:
            raise _Corrupt("classes", f"has a bad class name: {problem}")
    return classes


def _settings(spec, classes: list) -> dict:
    """The event model's settings from the payload's `model`, type- and
    range-checked as `nbcli train` checks its options."""
    from nbcli.nb.event_models import UNKNOWN_TERMS
    from nbcli.nb.smoothing import ESTIMATES, MAX_PSEUDO_COUNT

    prior = spec.get("prior", "fit")
    if isinstance(prior, dict):
        if sorted(prior) != sorted(classes):
            raise _Corrupt("model", "has prior weights for other classes than the model's")
        for name in classes:
            _number(prior, name, None, 0.0, MAX_PSEUDO_COUNT, above=True)
    elif prior not in ("fit", "uniform"):
        raise _Corrupt("model", "has a bad prior")
    unknown, estimate = spec.get("unknown", "skip"), spec.get("estimate", "mean")
    if not (isinstance(unknown, str) and unknown in UNKNOWN_TERMS):
        raise _Corrupt("model", "has a bad unknown-term rule")
    if not (isinstance(estimate, str) and estimate in ESTIMATES):
        raise _Corrupt("model", "has a bad estimate")
    m_estimate = spec.get("m_estimate")
    if m_estimate is not None:
        if not (isinstance(m_estimate, list) and len(m_estimate) == 2):
            raise _Corrupt("model", "has a bad m_estimate")
        pair = {"M": m_estimate[0], "P": m_estimate[1]}
        m_estimate = [
            _number(pair, "M", None, 0.0, MAX_PSEUDO_COUNT, above=True),
            _number(pair, "P", None, 0.0, 1.0, above=True),
        ]
        if m_estimate[0] is None or m_estimate[1] == 1.0:
            raise _Corrupt("model", "has a bad m_estimate")
    for flag in ("tf_log", "idf", "length_norm", "weight_norm"):
        if type(spec.get(flag, False)) is not bool:
            raise _Corrupt("model", f"has a bad {flag}")
    return dict(
        alpha=_number(spec, "alpha", 1.0, 0.0, MAX_PSEUDO_COUNT, above=True),
        prior=prior,
        unknown=unknown,
        estimate=estimate,
        m_estimate=m_estimate,
        prior_alpha=_number(spec, "prior_alpha", None, 0.0, MAX_PSEUDO_COUNT),
        alpha_per_document=_number(spec, "alpha_per_document", None, 0.0, MAX_PSEUDO_COUNT, above=True),
    )


def settings_of(spec, classes: list) -> dict:
    """The event model's kind and settings (EventModel keyword arguments but
    doc_freq, fit_count, idf and tables) from a `model` spec, checked as a
    model file's are (ModelFileError)."""
    from nbcli.nb.event_models import EVENT_MODELS

    try:
        if not isinstance(spec, dict) or spec.get("kind") not in EVENT_MODELS:
            raise _Corrupt("model", "has no event model kind nbcli knows")
        settings = _settings(spec, classes)
        for flag in ("tf_log", "length_norm", "weight_norm"):
            if spec["kind"] == "complement":
                settings[flag] = spec.get(flag, False)
            elif spec.get(flag):
                raise _Corrupt("model", f"has {flag} for a {spec['kind']} model")
    except _Corrupt as exc:
        raise ModelFileError(f"bad model settings ({exc})") from None
    return {"kind": spec["kind"], **settings}


def _meta(meta) -> dict:
    """`meta`, checked where nbcli reads it (info, train --from-model)."""
    if not isinstance(meta, dict):
        raise _Corrupt("meta")
    for key, kinds in (
        ("n_documents", (int,)),
        ("mail_documents", (int,)),
        ("created", (str,)),
        ("nbcli_version", (str,)),
        ("options", (dict,)),
        ("from_model", (str,)),
        ("calibration", (dict,)),
    ):
        if key in meta and type(meta[key]) not in kinds:
            raise _Corrupt("meta", f"has a bad {key}")
    for key, kinds in (("model_documents", (int,)), ("source", (str,)), ("skipped", (str,)), ("dropped", (str,))):
        value = meta.get("calibration", {}).get(key)
        if value is not None and type(value) not in kinds:
            raise _Corrupt("meta", f"has a bad calibration {key}")
    if "n_documents" not in meta or meta["n_documents"] < 0:
        raise _Corrupt("meta", "has no n_documents")
    return meta


def from_payload(p: dict, path: str = "model"):
    """Rebuild a Classifier from a payload read by `read_payload`, checking
    every invariant the rest of nbcli relies on, so that a damaged or
    crafted file is a one-line error here rather than negative counts,
    NaN scores, warnings or an internal error later."""
    from nbcli.nb.classifier import Classifier
    from nbcli.nb.event_models import EVENT_MODELS, build_event_model
    from nbcli.nb.record import Record
    from nbcli.text.analyzer import AnalyzerOptions
    from nbcli.text.vectorize import Vocabulary

    if isinstance(p.get("model"), dict) and p["model"].get("kind") == "table":
        return _table_from_payload(p, path)
    try:
        classes = _classes(p)
        n_classes = len(classes)
        hashes, blob, offsets = _vocabulary(p)
        n_terms = len(hashes)
        class_count = _within(_array(p, "class_count", "f", (n_classes,)), "class_count", 0, _MAX_COUNT)
        feature_count = _within(_array(p, "feature_count", "iuf", (n_classes, n_terms)), "feature_count", 0, _MAX_COUNT)
        doc_freq = _within(_array(p, "doc_freq", "iuf", (n_classes, n_terms), optional=True), "doc_freq", 0, _MAX_COUNT)
        if doc_freq is not None and n_terms and not (doc_freq <= class_count[:, None]).all():
            raise _Corrupt("doc_freq", "counts more documents than the class has")
        tables = tuple(
            _within(_array(p, key, "f", shape), key, -_TABLE_LIMIT, _TABLE_LIMIT)
            if key != "log_prior"
            else _log_prior(_array(p, key, "f", shape), class_count)
            for key, shape in (
                ("log_prior", (n_classes,)),
                ("weights", (n_terms, n_classes)),
                ("bias", (n_classes,)),
                ("unknown_weight", (n_classes,)),
            )
        )
        spec = p.get("model")
        if not isinstance(spec, dict):
            raise _Corrupt("model")
        kind = spec.get("kind")
        if not isinstance(kind, str):
            raise _Corrupt("model", "has no event model kind")
        if kind not in EVENT_MODELS:
            raise ModelFileError(
                f"{path} uses event model {kind!r}, which this nbcli does not know",
                hint="upgrade nbcli",
            )
        analyzer = p.get("analyzer")
        if not isinstance(analyzer, dict):
            raise _Corrupt("analyzer")
        meta = _meta(p.get("meta"))
        settings = _settings(spec, classes)
        settings.update(doc_freq=doc_freq, tables=tables)
        if kind == "complement":
            settings.update(
                tf_log=spec.get("tf_log", False),
                length_norm=spec.get("length_norm", False),
                weight_norm=spec.get("weight_norm", False),
                idf=_within(_array(p, "idf", "f", (n_terms,), optional=True), "idf", 0, _TABLE_LIMIT),
                fit_count=_within(
                    _array(p, "fit_count", "f", (n_classes, n_terms), optional=True), "fit_count", 0, _MAX_COUNT
                ),
            )
            if spec.get("idf", False) != (settings["idf"] is not None):
                raise _Corrupt("idf")
        model = build_event_model(kind, classes, class_count, feature_count, **settings)
        options = AnalyzerOptions.from_dict(analyzer)
        try:
            record = Record.from_arrays(p, n_classes) if "record_digest" in p else None
        except ValueError as exc:
            raise _Corrupt(str(exc)) from None
        last_seen = _array(p, "term_last_seen", "i", (n_terms,), optional=True)
        calibration = _calibration(p, n_classes)
        expected = _expected(p, n_classes, n_terms, feature_count, class_count)
    except _Corrupt as exc:
        raise ModelFileError(f"{path} is corrupt ({exc})", hint="train the model again") from None
    except (TypeError, ValueError, ArithmeticError, NbcliError) as exc:
        if isinstance(exc, ModelFileError):
            raise
        raise ModelFileError(f"{path} is corrupt ({exc})", hint="train the model again") from None
    classifier = Classifier(options, Vocabulary(hashes, blob, offsets), model, meta, record, last_seen, calibration)
    classifier.expected = expected
    stored_id = p.get("model_id")
    if isinstance(stored_id, str) and re.fullmatch(r"[0-9a-f]{6}", stored_id):
        classifier.stored_model_id = stored_id  # the file's own, computed when it was written
    return classifier


def model_id(classifier) -> str:
    """`compute_model_id` of a classifier, as stored in its file when it has one."""
    return getattr(classifier, "stored_model_id", None) or compute_model_id(classifier)


def _log_prior(a: np.ndarray, class_count: np.ndarray) -> np.ndarray:
    """log pi: finite and bounded, or -inf for a class without documents
    (a model being learned from nothing, or one whose class was forgotten)."""
    finite = np.isfinite(a)
    if not ((finite & (np.abs(np.where(finite, a, 0)) <= _TABLE_LIMIT)) | ((a == -np.inf) & (class_count == 0))).all():
        raise _Corrupt("log_prior", f"has values outside [{-_TABLE_LIMIT:g}, {_TABLE_LIMIT:g}]")
    return a


def load(path: str, copy: bool = False):
    """Read a Classifier from a model file (see the module docstring); a
    model of several mixture components per class answers for its classes
    (`classifier.wrap_components`). copy: see `read_payload`."""
    classifier = from_payload(read_payload(path, copy), path)
    if "components" in classifier.meta:
        from nbcli.nb.classifier import wrap_components

        try:
            classifier = wrap_components(classifier)
        except NbcliError as exc:
            raise ModelFileError(f"{path} is corrupt ({exc.message})", hint="train the model again") from None
    return classifier


def _describe_calibration(classifier) -> dict:
    """info's "calibration": {"method", "map" (its parameters in words),
    "documents" (held-out, fitted on), "source", "model_documents" (the
    model's then), "stale", "keeps_ranking", "effect" (on the decisions, in
    words)}; without one, {"method": None, "reason"}."""
    from nbcli.nb.calibrators import calibration_stale

    fitted = classifier.meta.get("calibration") or {}
    cal = classifier.calibration
    if cal is None:
        reason = fitted.get("skipped") or fitted.get("dropped")
        return {"method": None, "reason": reason}
    return {
        "method": cal.method,
        "map": cal.describe(),
        "documents": cal.documents,
        "source": fitted.get("source"),
        "model_documents": fitted.get("model_documents"),
        "stale": calibration_stale(classifier),
        "keeps_ranking": cal.keeps_ranking,
        "effect": _calibration_effect(cal),
    }


def _em_info(em) -> dict | None:
    """info's "em": how the EM run went (its objective: first and last)."""
    if not isinstance(em, dict):
        return None
    objective = em.get("objective") or []
    return {
        **{k: v for k, v in em.items() if k != "objective"},
        "objective_first": objective[0] if objective else None,
        "objective_last": objective[-1] if objective else None,
    }


def _calibration_effect(cal) -> str:
    """What a map does to the model's decisions, in words, for info."""
    if cal.not_increasing() is not None:  # fitted before nbcli refused such maps
        what = "reverses the model's ranking" if cal.method == "platt" else "gives every document the same probability"
        return f"{what}: refit it (nbcli calibrate MODEL HELDOUT)"
    if cal.keeps_ranking:
        return "keeps the ranking"
    if cal.method == "isotonic":
        return "may tie documents the model ranked apart"
    if cal.method == "temperature":
        return "keeps each document's predicted class"
    return "may change the predicted class of some documents"


def _rows(model, c: int):
    """Class c's rows: a whole number, or for soft clusters (expected
    counts) their expected number to 0.01."""
    count = model.class_count[c]
    return round(float(count), 2) if getattr(model, "expected", False) else int(count)


def _describe_table(classifier) -> dict:
    """info of a table model: its columns (name, kind) and, per class, each
    column's summary (`TableModel.summary`)."""
    model = classifier.model
    prior = np.exp(model.log_prior)
    return {
        "format_version": FORMAT_VERSION,
        "kind": "table",
        "nbcli_version": classifier.meta.get("nbcli_version"),
        "created": classifier.meta.get("created"),
        "documents": classifier.meta.get("n_documents"),
        "model_id": model_id(classifier),
        "calibration": _describe_calibration(classifier),
        "columns": [{"name": n, "kind": k} for n, k in zip(model.names, model.kinds)],
        "classes": [
            {"class": name, "documents": _rows(model, c), "prior": float(prior[c])}
            for c, name in enumerate(classifier.classes)
        ],
        "settings": model.settings_dict(),
        "table": classifier.meta.get("table", {}),
        "clusters": classifier.meta.get("clusters"),
        "summary": model.summary(),
    }


def describe(classifier, top: int = 10) -> dict:
    """What `nbcli info` shows of a Classifier, as a JSON-ready dict (here,
    not on Classifier: it names the file format's version)."""
    from nbcli.nb.record import ENTRY_BYTES

    if is_table(classifier):
        return _describe_table(classifier)
    model = classifier.model
    counts = np.asarray(model.feature_count, dtype=np.float64)
    prior = np.exp(model.log_prior)
    top_terms = {}
    if top > 0 and len(classifier.vocabulary):
        odds = model.term_log_odds()
        k = min(top, odds.shape[1])
        for c, name in enumerate(model.classes):  # a mixture model: its components
            best = np.argpartition(-odds[c], k - 1)[:k]
            best = best[np.lexsort((best, -odds[c][best]))]
            best = best[odds[c][best] > 0]
            terms = classifier.vocabulary.terms(best)
            top_terms[name] = [{"term": t, "log_odds": float(odds[c][j])} for t, j in zip(terms, best.tolist())]
    return {
        "format_version": format_version(model, classifier.calibration is not None),
        "kind": model.kind,
        "transforms": [
            k.replace("_", "-") for k in ("tf_log", "idf", "length_norm", "weight_norm") if model.spec().get(k)
        ],
        "nbcli_version": classifier.meta.get("nbcli_version"),
        "created": classifier.meta.get("created"),
        "documents": classifier.meta.get("n_documents"),
        "vocabulary_size": len(classifier.vocabulary),
        "model_id": model_id(classifier),
        "record": None
        if classifier.record is None
        else {
            "entries": len(classifier.record),
            "per_class": dict(
                zip(classifier.classes, classifier.record.documents_per_class(len(classifier.classes)).tolist())
            ),
            "bytes": len(classifier.record) * ENTRY_BYTES,
        },
        "calibration": _describe_calibration(classifier),
        "em": _em_info(classifier.meta.get("em")),
        "components": classifier.meta.get("components"),
        "clusters": classifier.meta.get("clusters"),
        "updated": classifier.meta.get("updated"),
        "pruned": classifier.meta.get("pruned"),
        "classes": [
            {
                "class": name,
                "documents": int(model.class_count[c]),
                "tokens": int(counts[c].sum()),
                "prior": float(prior[c]),
            }
            for c, name in enumerate(model.classes)
        ],
        "smoothing": {k: v for k, v in model.spec().items() if k not in ("kind", "unknown")},
        "analyzer": classifier.analyzer_options.to_dict(),
        "options": classifier.meta.get("options", {}),
        "top_terms": top_terms,
    }

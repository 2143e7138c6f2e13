"""Journal records whose checksum is right but whose content is not an update
that fits the model (store/journal_records.py): a crafted journal, or one a
faulty program wrote. Every command reading it gives a one-line error naming
the journal, never a traceback; and `nbcli compact --drop-bad-tail` keeps the
updates before the bad one, as many as the error's hint says, after which the
model reads again."""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import zlib

import numpy as np
import pytest
from test_journal import BASE, trained
from test_journal_checkpoints import checkpointing, learn, records  # noqa: F401 (checkpointing: a fixture)

from nbcli.errors import ModelFileError
from nbcli.store import journal, journal_updates, modelfile
from nbcli.store.journal_records import good_updates

from conftest import run

pytestmark = pytest.mark.usefixtures("checkpointing", "after_images")  # small models keep a journal, with checkpoints


@pytest.fixture
def after_images(monkeypatch):
    """Every update written as an after-image, as nbcli before differences
    (`nb.deltas.Delta`) wrote it: the crafted records below change its fields
    (test_journal_deltas.py crafts differences)."""
    monkeypatch.setattr(journal_updates, "DIFFERENCES", False)


WRONG = ["x", "", 10**30, -1, 0, 1e308, None, True, [], {}, [1, "a"], {"a": 1}, 2**63]
STEPS = [
    ("learn", 1, "a"),
    ("learn", 2, "b"),
    ("learn", 3, "a"),
    ("forget", 1, "a"),
    ("learn", 5, "c"),
    ("learn", 7, "b"),
]


def journalled(folder, **fields) -> str:
    path = os.path.join(folder, "m.nb")
    modelfile.save(trained(BASE, **fields), path)
    for n, step in enumerate(STEPS):
        assert learn(path, step, n)
    return path


def rewritten(path: str, index: int, change) -> None:
    """Record `index` of the journal of `path` decoded, changed by
    change(plain, arrays) and encoded again, its checksum recomputed."""
    data = open(journal.path_of(path), "rb").read()
    magic, at, n = records(path)[index]
    plain, arrays = journal.decode(data[at + journal._HEAD.size : at + n])
    plain, arrays = json.loads(json.dumps(plain)), {k: np.array(v) for k, v in arrays.items()}
    change(plain, arrays)
    record = journal.encode(plain, arrays, checkpoint=magic == b"NBJC")
    with open(journal.path_of(path), "wb") as fh:
        fh.write(data[:at] + record + data[at + n :])


def one_line_error(result) -> str:
    assert result.exit_code == 1
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("nbcli: error: ") and "internal error" not in lines[0], lines
    return lines[0]


def last_update(path: str) -> int:
    return max(i for i, (magic, _, _) in enumerate(records(path)) if magic == b"NBJR")


def test_a_record_without_a_table_the_model_has_is_refused_and_compact_keeps_the_rest(tmp_path):
    path = journalled(str(tmp_path), kind="bernoulli")  # a model with document frequencies, read by replaying
    whole = records(path)
    assert all(magic == b"NBJR" for magic, _, _ in whole)  # no checkpoint: every record is read
    rewritten(path, 3, lambda plain, arrays: arrays.pop("df"))
    message = one_line_error(run(["predict", path, "-"], input="apple bread\n"))
    assert "m.nb.journal does not fit" in message and "has no df table" in message
    assert "--drop-bad-tail' keeps the good updates before it" in message
    oracle = str(tmp_path / "oracle")
    os.mkdir(oracle)
    shutil.copyfile(path, os.path.join(oracle, "m.nb"))
    data = open(journal.path_of(path), "rb").read()
    with open(journal.path_of(os.path.join(oracle, "m.nb")), "wb") as fh:
        fh.write(data[: whole[3][1]])  # the three updates before the bad one
    assert modelfile.compact(path, drop_bad_tail=True)[0] == 3
    assert modelfile.model_id(modelfile.load(path)) == modelfile.model_id(modelfile.load(os.path.join(oracle, "m.nb")))
    assert run(["predict", path, "-"], input="apple bread\n").exit_code == 0


def test_a_record_out_of_order_names_how_many_updates_compact_keeps(tmp_path):
    path = journalled(str(tmp_path))  # a multinomial model, read through a view from its last checkpoint
    bad = last_update(path)
    rewritten(path, bad, lambda plain, arrays: arrays.update(hashes=np.ascontiguousarray(arrays["hashes"][::-1])))
    with pytest.raises(ModelFileError, match=r"is corrupt \('hashes' is not strictly ascending\)") as caught:
        modelfile.load_view(path)
    kept = int(re.search(r"keeps the (\d+) update\(s\) before it", caught.value.hint).group(1))
    assert kept == len(STEPS) - 1
    result = run(["compact", path, "--drop-bad-tail"])
    assert result.exit_code == 0 and f"compacted {kept} update(s)" in result.stderr
    assert not os.path.exists(journal.path_of(path))
    assert modelfile.load(path).meta["n_documents"] == len(BASE) + 3  # four learns, one forget of an earlier learn


def test_good_updates_is_the_longest_run_that_applies(tmp_path):
    path = journalled(str(tmp_path))
    n = sum(magic == b"NBJR" for magic, _, _ in records(path))
    assert len(good_updates(path, lambda run: True)[0]) == n
    for fits in range(n + 1):
        asked = []

        def applies(updates, fits=fits, asked=asked):
            asked.append(len(updates))
            return len(updates) <= fits

        assert len(good_updates(path, applies)[0]) == fits
        assert len(asked) <= 1 + int(np.ceil(np.log2(n + 1)))  # a binary search, not one replay per length


@pytest.mark.parametrize(
    "spec",
    [
        ["hashes", ["<u8"], [1]],  # a type that is not a name
        ["hashes", {"<u8": 1}, [1]],
        ["hashes", "<u8", [1.5]],  # a length that is not a whole number
        ["hashes", "<u8", "1"],
        ["hashes", "<u8", [1, 1, 1]],
        ["hashes", "<u8", [1 << 40]],  # runs past the record
        ["hashes", "<u8"],
        "hashes",
        [["hashes"], "<u8", [1]],  # a name that is not one: read as its text, then refused as a bad update
        "nested",  # a head of arrays nested 100,000 deep: JSON's parser runs out of recursion
    ],
)
def test_a_record_whose_arrays_are_described_wrongly_is_a_one_line_error(tmp_path, spec):
    """The description of a record's arrays (its JSON head's "arrays": name,
    type, shape) is what a crafted journal controls first: anything but
    what nbcli writes is a one-line error naming the journal, never a
    traceback."""
    path = journalled(str(tmp_path))
    data = open(journal.path_of(path), "rb").read()
    _, at, n = records(path)[last_update(path)]
    body = data[at + journal._HEAD.size : at + n]
    (size,) = struct.unpack_from("<I", body)
    head = json.loads(body[4 : 4 + size])
    head["arrays"][0] = spec
    text = json.dumps(head).encode("ascii") if spec != "nested" else b'{"arrays": ' + b"[" * 10**5 + b"]" * 10**5 + b"}"
    body = struct.pack("<I", len(text)) + text + body[4 + size :]
    length = struct.pack("<Q", len(body))
    record = b"NBJR" + length + struct.pack("<I", zlib.crc32(body, zlib.crc32(length))) + body
    with open(journal.path_of(path), "wb") as fh:
        fh.write(data[:at] + record + data[at + n :])
    message = one_line_error(run(["predict", path, "-"], input="apple bread honey\n"))
    assert journal.path_of(path) in message and "is corrupt" in message


def _mutated(plain: dict, arrays: dict, rng) -> None:
    for _ in range(int(rng.integers(1, 3))):
        if rng.random() < 0.55:
            key = sorted(arrays)[int(rng.integers(0, len(arrays)))]
            a = np.array(arrays[key])
            how = int(rng.integers(0, 7))
            if how == 0 and a.size:
                a.reshape(-1)[rng.integers(0, a.size)] = -1 if a.dtype.kind != "u" else np.iinfo(a.dtype).max
            elif how == 1 and a.size and a.dtype.kind == "f":
                a.reshape(-1)[rng.integers(0, a.size)] = rng.choice([np.nan, np.inf, -np.inf, 1e300])
            elif how == 2:
                a = a[:-1]
            elif how == 3:
                a = a.astype(rng.choice(["<i4", "<f8", "<u8", "<i8", "|u1"]))
            elif how == 4 and a.ndim == 2:
                a = np.ascontiguousarray(a.T)
            elif how == 5:
                a = np.concatenate([a, a])
            arrays[key] = a
        elif rng.random() < 0.2:
            arrays.pop(sorted(arrays)[int(rng.integers(0, len(arrays)))])
        else:
            key = sorted(plain)[int(rng.integers(0, len(plain)))]
            value = WRONG[int(rng.integers(0, len(WRONG)))]
            if isinstance(plain[key], dict) and plain[key] and rng.random() < 0.6:
                plain[key][sorted(plain[key])[int(rng.integers(0, len(plain[key])))]] = value
            else:
                plain[key] = value


@pytest.mark.parametrize("kind", ["multinomial", "bernoulli"])
def test_crafted_records_are_one_line_errors_that_compact_drop_bad_tail_recovers_from(kind, tmp_path):
    """Seeded mutations of a real journal's records, each with its checksum
    recomputed: predict, info and learn work or give a one-line error; and
    whenever reading fails, compact --drop-bad-tail keeps as many updates as
    the error said (when it said), after which predict works."""
    fields = {"kind": kind} if kind != "multinomial" else {}
    source = journalled(str(tmp_path), **fields)
    rng = np.random.default_rng(27)
    refused = 0
    for i in range(40):
        folder = str(tmp_path / f"case{i}")
        os.mkdir(folder)
        path = os.path.join(folder, "m.nb")
        shutil.copyfile(source, path)
        shutil.copyfile(journal.path_of(source), journal.path_of(path))
        index = int(rng.integers(0, len(records(path))))
        rewritten(path, index, lambda plain, arrays: _mutated(plain, arrays, rng))
        predicted = run(["predict", path, "-"], input="apple bread honey\n")
        for args in (["info", path], ["learn", path, "--class", "a", "-", "-q"]):
            result = run(args, input="cider dough\n")
            if result.exit_code:
                one_line_error(result)
        if not predicted.exit_code:
            continue
        refused += 1
        message = one_line_error(predicted)
        said = re.search(r"keeps the (\d+) update\(s\) before it", message)
        compacted = run(["compact", path, "--drop-bad-tail"])
        assert compacted.exit_code == 0, compacted.stderr
        kept = re.search(r"compacted (\d+) update\(s\)", compacted.stderr)
        if said:
            assert (kept.group(1) if kept else "0" if "no updates" in compacted.stderr else None) == said.group(1)
        assert run(["predict", path, "-"], input="apple bread honey\n").exit_code == 0
    assert refused >= 8  # the mutations reach the records read


def test_a_records_class_names_are_checked_once_and_a_bad_list_is_refused_after_good_ones():
    from nbcli.store.checks import Corrupt
    from nbcli.store.journal_records import _classes_of

    good = ["ham", "spam"]
    assert _classes_of(good) == good and _classes_of(list(good)) == good
    assert _classes_of(good) is not good  # a list of its own: a caller may keep it
    for bad in (["ham", "ham"], ["ham", "sp\nam"], ["ham"], "hamspam", [1, 2], ["ham", ["spam"]]):
        with pytest.raises(Corrupt):
            _classes_of(bad)

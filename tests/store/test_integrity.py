"""What is read is what nbcli wrote (store/integrity.py): checksums, one-line
errors for damaged, foreign and missing files, atomic locked writes."""

import os
import pickle

import joblib
import numpy as np
import pytest

from nbcli.errors import ModelFileError, NbcliError
from nbcli.store import integrity, modelfile


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

    monkeypatch.setattr(integrity, "dump_payload", failing_dump)
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


def _payload():
    return {"format": "nbcli-model", "format_version": 1, "meta": {"n": 1}, "a": np.arange(40, dtype=np.float64)}


def test_the_checksum_changes_with_any_word_and_with_their_order():
    payload = _payload()
    checksum = integrity.payload_checksum(payload)
    assert checksum.startswith("sum64:") and len(checksum) == len("sum64:") + 24
    assert integrity.payload_checksum(_payload()) == checksum  # a function of the content only
    for change in (
        lambda p: p["a"].__setitem__(17, p["a"][17] + 1),
        lambda p: p.update(a=p["a"][::-1].copy()),
        lambda p: p.update(a=p["a"].astype(np.int64)),
        lambda p: p["meta"].update(n=2),
        lambda p: p.update(b=np.zeros(0)),
    ):
        changed = _payload()
        change(changed)
        assert integrity.payload_checksum(changed) != checksum
    raw = np.arange(64, dtype=np.uint8)
    swapped = raw.copy()
    swapped[:8], swapped[8:16] = raw[8:16], raw[:8]
    assert integrity.word_sum(raw) != integrity.word_sum(swapped)
    assert integrity.word_sum(raw) != integrity.word_sum(raw[:-1])  # the length counts


def test_with_checksum_replaces_an_old_checksum():
    payload = integrity.with_checksum({**_payload(), integrity.CHECKSUM_KEY: "sum64:" + "0" * 24})
    assert payload[integrity.CHECKSUM_KEY] == integrity.payload_checksum(_payload())


def test_a_write_reads_back_checked_and_a_link_stays_a_link(tmp_path):
    real = tmp_path / "real.nb"
    link = tmp_path / "link.nb"
    link.symlink_to(real)
    assert integrity.target(str(link)) == str(real)
    integrity.write_payload(_payload(), str(link))
    assert link.is_symlink() and real.is_file()
    got = integrity.read_payload(str(link))
    assert np.array_equal(got["a"], _payload()["a"]) and got[integrity.CHECKSUM_KEY].startswith("sum64:")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".real.nb.lock", "link.nb", "real.nb"]


def test_a_link_repointed_while_its_lock_is_held_still_names_the_file_locked(tmp_path):
    """A learn through `mail.nb -> shared.nb` writes its journal and
    checkpoints beside the file whose lock it holds, even if the link is
    re-pointed meanwhile; the next lock follows the link again."""
    from nbcli.store import journal

    real, other, link = tmp_path / "real.nb", tmp_path / "other.nb", tmp_path / "link.nb"
    link.symlink_to(real)
    with integrity.locked(str(link)):
        link.unlink()
        link.symlink_to(other)
        assert integrity.target(str(link)) == str(real)
        assert journal.path_of(str(link)) == str(real) + journal.SUFFIX
    assert integrity.target(str(link)) == str(other)
    with integrity.locked(str(link)):
        assert integrity.target(str(link)) == str(other)


def test_the_lock_is_reentrant_and_clears_stale_temporaries(tmp_path):
    path = tmp_path / "m.nb"
    stale = tmp_path / ".m.nb.abc123.tmp"
    stale.write_bytes(b"half a model")
    with integrity.locked(str(path)):
        assert not stale.exists()
        with integrity.locked(str(path)):  # the same process: no wait on itself
            integrity.write_payload(_payload(), str(path))
    assert integrity.read_payload(str(path))["meta"] == {"n": 1}


def test_a_process_lists_the_folder_for_stale_temporaries_at_most_once_a_minute(tmp_path, monkeypatch):
    """A daemon takes the lock for every TELL; listing a folder of many
    users' models each time would cost O(the folder)."""
    path = tmp_path / "m.nb"
    with integrity.locked(str(path)):
        pass
    stale = tmp_path / ".m.nb.def456.tmp"
    stale.write_bytes(b"half a model")
    with integrity.locked(str(path)):
        assert stale.exists()  # listed moments ago
    monkeypatch.setattr(integrity, "CLEAN_EVERY", 0.0)
    with integrity.locked(str(path)):
        assert not stale.exists()


def test_a_lock_file_that_is_a_link_is_refused(tmp_path):
    (tmp_path / ".m.nb.lock").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(NbcliError, match=r"its lock file .*\.m\.nb\.lock is a symbolic link"):
        with integrity.locked(str(tmp_path / "m.nb")):
            pass
    assert not (tmp_path / "elsewhere").exists()


def test_a_model_in_a_missing_folder_is_said_as_check_writable_says_it(tmp_path):
    """The writers that lock first (learn --create, calibrate -o, the
    library's save) said 'cannot lock model file ...: No such file or
    directory (.../.m.nb.lock)'; they name the missing folder, as train -o does."""
    from conftest import one_line_error, run

    path = tmp_path / "nope" / "m.nb"
    with pytest.raises(NbcliError, match=f"cannot write {path}: folder {path.parent} does not exist; create it first"):
        with integrity.locked(str(path)):
            pass
    line = one_line_error(run(["learn", "--create", path, "--class", "a", "--classes", "a,b", "-"], input="hello"))
    assert line == f"nbcli: error: cannot write {path}: folder {path.parent} does not exist; create it first"
    assert not path.parent.exists()


def test_check_writable_refuses_folders_and_missing_folders(tmp_path):
    integrity.check_writable(str(tmp_path / "m.nb"))
    with pytest.raises(NbcliError, match="is a folder"):
        integrity.check_writable(str(tmp_path))
    with pytest.raises(NbcliError, match="folder .*nope does not exist"):
        integrity.check_writable(str(tmp_path / "nope" / "m.nb"))


def test_a_model_whose_tables_are_not_finite_is_never_written(tmp_path, monkeypatch, classifier):
    """The writer refuses what the reader would refuse: a prior of 0/0 (what
    forgetting a model's last documents made) was written, and the file
    could not be read again."""
    path = tmp_path / "m.nb"
    model = classifier
    modelfile.save(model, str(path))
    before = path.read_bytes()
    real = modelfile.to_payload

    def broken(classifier):
        payload = real(classifier)
        payload["log_prior"] = np.full_like(payload["log_prior"], np.nan)
        return payload

    monkeypatch.setattr(modelfile, "to_payload", broken)
    with pytest.raises(
        NbcliError, match=r"would not read back \('log_prior' has values outside .*\); the file is unchanged"
    ):
        modelfile.save(model, str(path))
    assert path.read_bytes() == before

"""The model's journal on the command line: every reader sees the updates
learn and forget appended, `nbcli compact`, a corrupt journal's one-line
error, and writers killed part-way through learning or compacting."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import SAMPLES, one_line_error, run, run_process
from conftest import model_info as info

MAIL = SAMPLES / "mail"
SPAM = sorted((MAIL / "test" / "spam").iterdir())
HAM = sorted((MAIL / "test" / "ham").iterdir())


@pytest.fixture
def model(mail_model_copy, monkeypatch):
    from nbcli.store import modelfile

    monkeypatch.setattr(modelfile, "COMPACT_FRACTION", 1e9)  # in-process learners keep their journal
    monkeypatch.setattr(modelfile, "JOURNAL_MIN_BYTES", 0)  # the sample model is small
    return mail_model_copy


def journal_of(model):
    return model.parent / (model.name + ".journal")


def outputs(model, tmp_path) -> dict:
    """What the reading commands say of `model`."""
    said = {}
    for name, args in {
        "predict": ["predict", "--json", model, MAIL / "test"],
        "info": ["info", "--json", model],
        "dump": ["dump", model],
        "eval": ["eval", model, MAIL / "test"],
        "tokens": ["tokens", "--model", model, SPAM[0]],
        "prune": ["prune", "--dry-run", "--json", model, "--min-count", "3"],
    }.items():
        result = run(args)
        assert result.exit_code == 0, (name, result.stderr)
        said[name] = result.stdout
    result = run(["filter", model], input=SPAM[5].read_bytes())
    said["filter"] = result.stdout_bytes.split(b"\n", 1)[0]
    merged, other = tmp_path / "merged.nb", tmp_path / "other.nb"  # merge refuses one file given twice
    if not other.exists():
        assert run(["train", MAIL / "test", "-o", other, "-q"]).exit_code == 0
    assert run(["merge", model, other, "-o", merged, "-q"]).exit_code == 0
    said["merge"] = info(merged)["model_id"]
    return said


def test_every_reader_sees_the_journal_and_compact_writes_it_in(model, tmp_path):
    before = outputs(model, tmp_path)
    for message in SPAM[:3]:
        assert run(["learn", model, "--spam", "-q", message]).exit_code == 0
    assert run(["learn", model, "--ham", "-q", SPAM[0]]).exit_code == 0  # a move
    assert run(["forget", model, "-q", SPAM[1]]).exit_code == 0
    assert journal_of(model).exists()
    through = outputs(model, tmp_path)
    for name in through:
        assert through[name] != before[name] or name in ("tokens",), name
    result = run(["compact", model])
    assert result.exit_code == 0 and "compacted 5 update(s)" in result.stderr
    assert not journal_of(model).exists()
    compacted = outputs(model, tmp_path)
    assert compacted == through
    result = run(["compact", model])
    assert result.exit_code == 0 and "no updates to compact" in result.stderr


def test_learning_into_a_journal_equals_training_on_it(tmp_path, monkeypatch):
    """Train on the sample mail without some spam, learn those one at a time
    (each an update in the journal): the model training on all gives."""
    import shutil

    from nbcli.store import modelfile

    monkeypatch.setattr(modelfile, "COMPACT_FRACTION", 1e9)
    monkeypatch.setattr(modelfile, "JOURNAL_MIN_BYTES", 0)
    corpus = tmp_path / "train"
    shutil.copytree(MAIL / "train", corpus)
    held_out = sorted((corpus / "spam").iterdir())[:6]
    raw = ["-q", "--calibrate", "none"]
    later = tmp_path / "later"
    later.mkdir()
    for path in held_out:
        path.rename(later / path.name)
    assert run(["train", corpus, "-o", tmp_path / "part.nb", *raw]).exit_code == 0
    for path in sorted(later.iterdir()):
        assert run(["learn", tmp_path / "part.nb", "--spam", "-q", path]).exit_code == 0
    for path in held_out:
        (later / path.name).rename(path)
    assert run(["train", corpus, "-o", tmp_path / "all.nb", *raw]).exit_code == 0
    assert info(tmp_path / "part.nb")["model_id"] == info(tmp_path / "all.nb")["model_id"]
    predict = [run(["predict", "--json", tmp_path / n, MAIL / "test"]).stdout for n in ("part.nb", "all.nb")]
    assert predict[0] == predict[1]
    assert run(["compact", tmp_path / "part.nb", "-q"]).exit_code == 0
    assert info(tmp_path / "part.nb")["model_id"] == info(tmp_path / "all.nb")["model_id"]


def test_a_corrupt_journal_is_a_one_line_error_and_compact_keeps_the_good_updates(model):
    for message in SPAM[:3]:
        assert run(["learn", model, "--spam", "-q", message]).exit_code == 0
    data = bytearray(journal_of(model).read_bytes())
    starts = [i for i in range(len(data)) if data[i : i + 4] == b"NBJR"]
    assert len(starts) == 3
    data[starts[1] + 30] ^= 0x55
    journal_of(model).write_bytes(bytes(data))
    line = one_line_error(run(["predict", model, SPAM[4]]))
    assert str(journal_of(model)) in line and "fails its checksum" in line and "--drop-bad-tail" in line
    line = one_line_error(run(["learn", model, "--spam", SPAM[5]]))
    assert str(journal_of(model)) in line
    assert one_line_error(run(["compact", model]))
    result = run(["compact", model, "--drop-bad-tail"])
    assert result.exit_code == 0 and "compacted 1 update(s)" in result.stderr
    after_one = info(model)
    assert [c["documents"] for c in after_one["classes"]][1] == 211


def test_a_learn_leaves_the_model_file_alone(model):
    stat = os.stat(model)
    assert run(["learn", model, "--spam", "-q"], input=SPAM[7].read_bytes()).exit_code == 0
    assert os.stat(model).st_mtime_ns == stat.st_mtime_ns and os.stat(model).st_ino == stat.st_ino
    assert 0 < journal_of(model).stat().st_size < 50_000  # the message's terms (the model is 500 KB)


# -- killed part-way ----------------------------------------------------------------

LEARNER = textwrap.dedent(
    """
    import sys
    from nbcli.fit import learning
    from nbcli.fit.analysed import analyse_for_learning
    from nbcli.store import modelfile
    from nbcli.text.sources import Document

    from nbcli.store import journal_updates

    rolling = sys.argv[2] == "rolling"  # a checkpoint after (almost) every update: the journal started anew each time
    modelfile.COMPACT_FRACTION = 1e9 if rolling else float(sys.argv[2])
    modelfile.JOURNAL_MIN_BYTES = 0
    journal_updates.CHECKPOINT_MIN_BYTES = 0
    path = sys.argv[1]
    for name in sys.argv[3:]:
        with modelfile.locked(path):
            current = modelfile.load_view(path) if rolling else modelfile.load(path)
            docs = analyse_for_learning(current.analyzer, [Document(name, "spam", open(name, "rb").read(), "mail")])
            updated, _ = learning.learn(current, docs)
            if updated is not current:
                modelfile.save(updated, path, since=current)
    """
)


def legal_states(model, messages) -> list[str]:
    """The model id after learning the first k of `messages`, k = 0..n."""
    from nbcli.fit import learning
    from nbcli.fit.analysed import analyse_for_learning
    from nbcli.store import modelfile
    from nbcli.text.sources import Document

    current = modelfile.load(str(model))
    ids = [modelfile.model_id(current)]
    for name in messages:
        docs = analyse_for_learning(current.analyzer, [Document(str(name), "spam", name.read_bytes(), "mail")])
        current, _ = learning.learn(current, docs)
        ids.append(modelfile.model_id(current))
    return ids


@pytest.mark.parametrize("fraction", ["1e9", "0.02", "rolling"], ids=["appending", "compacting", "rolling"])
def test_a_learner_killed_at_any_moment_leaves_a_state_of_whole_updates(model, fraction):
    messages = SPAM[:12]
    entries = info(model)["record"]["entries"]
    states = legal_states(model, messages)
    assert len(set(states)) == len(states)
    rng = random.Random(20261126)
    seen = set()
    for _ in range(6):
        proc = subprocess.Popen(
            [sys.executable, "-c", LEARNER, str(model), fraction, *map(str, messages)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.3, 2.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        described = info(model)
        assert described["model_id"] in states  # whole updates only, none applied twice
        k = states.index(described["model_id"])
        assert described["record"]["entries"] == entries + k
        seen.add(k)
    done = subprocess.run([sys.executable, "-c", LEARNER, str(model), fraction, *map(str, messages)], timeout=300)
    assert done.returncode == 0
    assert info(model)["model_id"] == states[-1]
    if fraction == "rolling":  # the kills met journals started anew at a checkpoint (`journal.roll`)
        assert journal_of(model).read_bytes().startswith(b"nbcli-journal 2 ")
    assert run_process(["compact", model, "-q"]).returncode == 0
    assert info(model)["model_id"] == states[-1]
    assert seen


def test_learners_at_once_through_journals_started_anew_lose_no_update(model):
    """Four processes learning at once, each update making a checkpoint due
    and so starting the journal anew (`journal.roll`) under the model's
    lock: every update is in the model read through the journal, which is
    the model learning them one after another makes, and so is its
    compaction."""
    messages = SPAM[:16]
    entries = info(model)["record"]["entries"]
    expected = legal_states(model, messages)[-1]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", LEARNER, str(model), "rolling", *map(str, messages[i::4])],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for i in range(4)
    ]
    for proc in procs:
        assert proc.wait(timeout=300) == 0, proc.stderr.read()
        proc.stderr.close()
    assert journal_of(model).read_bytes().startswith(b"nbcli-journal 2 ")
    described = info(model)
    assert described["record"]["entries"] == entries + len(messages)
    assert described["model_id"] == expected
    assert run_process(["compact", model, "-q"]).returncode == 0
    assert info(model)["model_id"] == expected


def test_a_compaction_killed_at_any_moment_leaves_the_same_model(model, monkeypatch):
    for message in SPAM[:8]:
        assert run(["learn", model, "--spam", "-q", message]).exit_code == 0
    expected = info(model)
    journal = journal_of(model).read_bytes()
    original = model.read_bytes()
    rng = random.Random(7)
    for _ in range(6):
        proc = subprocess.Popen(
            [sys.executable, "-m", "nbcli", "compact", str(model)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        time.sleep(rng.uniform(0, 0.8))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        now = info(model)
        assert (now["model_id"], now["record"]) == (expected["model_id"], expected["record"])
        # back to the uncompacted pair (as a writer would: whole files renamed in)
        (model.parent / "restore").write_bytes(original)
        os.replace(model.parent / "restore", model)
        (model.parent / "restore").write_bytes(journal)
        os.replace(model.parent / "restore", journal_of(model))


def test_learn_and_forget_of_a_journalled_model_build_no_model_and_say_what_a_whole_write_says(
    mail_model_copy, tmp_path, monkeypatch
):
    """A journalled model's learn and forget append the Update made from the
    message's terms (fit.learning.learn_update) without rebuilding the model,
    and say on stdout (--json) and stderr exactly what the same commands say
    when the model is written whole; both models end with the same id."""
    import shutil

    from nbcli.fit import learning
    from nbcli.store import modelfile

    whole = tmp_path / "whole.nb"
    shutil.copyfile(mail_model_copy, whole)
    steps = [
        ["learn", "--spam", SPAM[0]],
        ["learn", "--ham", SPAM[0]],  # a move
        ["learn", "--class", "news", "--new-class", HAM[0]],  # a class new to the model
        ["forget", HAM[0]],  # its last document: the class goes again
        ["forget", "--ham", SPAM[0]],
    ]

    def rebuilt(*args, **kwargs):
        raise AssertionError("a journalled model was rebuilt to learn")

    monkeypatch.setattr(modelfile, "COMPACT_FRACTION", 1e9)
    said = {}
    for path, minimum in ((whole, 1 << 40), (mail_model_copy, 0)):
        monkeypatch.setattr(modelfile, "JOURNAL_MIN_BYTES", minimum)
        if minimum == 0:
            monkeypatch.setattr(learning, "rebuild", rebuilt)
        for command, *rest in steps:
            result = run([command, path, *rest, "--json"])
            assert result.exit_code == 0, result.stderr
            said.setdefault(minimum, []).append(
                (result.stdout.replace(str(path), "MODEL"), result.stderr.replace(str(path), "MODEL"))
            )
    assert said[0] == said[1 << 40]
    assert journal_of(mail_model_copy).exists() and not journal_of(whole).exists()
    assert info(mail_model_copy)["model_id"] == info(whole)["model_id"]


VIEW_WRITER = textwrap.dedent(
    """
    import sys
    from nbcli.fit import learning
    from nbcli.fit.analysed import analyse_for_learning
    from nbcli.store import journal_updates, modelfile
    from nbcli.text.sources import Document

    modelfile.COMPACT_FRACTION = 0.1  # a compaction every few updates (the sample model: 0.5 MB)
    modelfile.JOURNAL_MIN_BYTES = 0
    journal_updates.CHECKPOINT_MIN_BYTES = 0  # a checkpoint once the records reach half the last one
    path = sys.argv[1]
    for round in range(3):
        for name in sys.argv[2:]:
            with modelfile.locked(path):
                current = modelfile.load_view(path)
                docs = analyse_for_learning(current.analyzer, [Document(name, "spam", open(name, "rb").read(), "mail")])
                update = learning.learn_update(current, docs, forgetting=round % 2 == 1)[0]
                if update is not None:
                    modelfile.append_update(path, update, since=current)
    """
)

VIEW_READER = textwrap.dedent(
    """
    import sys, time
    from nbcli.store import modelfile

    end, reads = time.monotonic() + float(sys.argv[2]), 0
    while time.monotonic() < end or reads < 3:
        view = modelfile.load_view(sys.argv[1])  # its checkpoint mapped, while the writer appends and compacts
        view.log_proba(["cheap pills buy now", "meeting notes for tomorrow"])
        modelfile.model_id(view)
        reads += 1
    print(reads)
    """
)


def test_readers_mapping_checkpoints_survive_a_writer_appending_and_compacting(model):
    """A reader maps its journal's last checkpoint (`journal._mapped_checkpoint`):
    a writer appending updates and checkpoints and compacting the journal
    away meanwhile never cuts a mapped record (no SIGBUS), and every read
    is of a whole state."""
    writer = subprocess.Popen([sys.executable, "-c", VIEW_WRITER, str(model), *map(str, SPAM[:10])])
    readers = [
        subprocess.Popen([sys.executable, "-c", VIEW_READER, str(model), "4"], stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    assert writer.wait(timeout=300) == 0
    for reader in readers:
        out, _ = reader.communicate(timeout=300)
        assert reader.returncode == 0 and int(out) >= 3  # a signal would be a negative code
    assert run_process(["compact", model, "-q"]).returncode == 0

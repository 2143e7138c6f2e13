"""`spam/daemon.py`: what a request gets from a worker (`Worker.respond`:
the models it keeps, the scores, TELL), in this process; the daemon as a
whole runs as real processes in test_serve*.py."""

from __future__ import annotations

import os
import shutil
import time
import zlib
from pathlib import Path

import pytest
from test_serve import HAM_FILE, SPAM_FILE, TRAIN, nbcli

from nbcli.errors import NbcliError
from nbcli.spam import daemon, spamd
from nbcli.spam.settings import Settings

from conftest import one_line_error, run


@pytest.fixture(scope="module")
def model_bytes(tmp_path_factory) -> bytes:
    trained = tmp_path_factory.mktemp("daemon") / "mail.nb"
    nbcli("train", TRAIN, "-o", trained, "-q")
    return trained.read_bytes()


@pytest.fixture
def served(model_bytes, tmp_path) -> Path:
    """A served model of the test's own (a worker's tests change it)."""
    path = tmp_path / "mail.nb"
    path.write_bytes(model_bytes)
    return path


def ask(worker, head: bytes, body: bytes | None = None) -> bytes:
    if body is not None:
        head += b"Content-length: %d\r\n" % len(body)
    return worker.respond(spamd.parse_head(head + b"\r\n"), body)


def test_a_large_mapped_model_changed_in_place_is_never_read_again(served, monkeypatch):
    """Above daemon.COPY_LIMIT a model is mapped: once its file changes in
    place, the old mapping (whose pages may be gone) is not served."""
    monkeypatch.setattr(daemon, "COPY_LIMIT", 0)
    worker = daemon.Worker(daemon.Settings(str(served), None, None, [], 1), [])
    first = worker.model(str(served))[2]
    content = served.read_bytes()
    with open(served, "r+b") as fh:
        fh.truncate(len(content) // 2)
    with pytest.raises(NbcliError):
        worker.model(str(served))
    assert str(served) not in worker.models
    with open(served, "r+b") as fh:  # written whole again, in place
        fh.write(content)
    os.utime(served, ns=(time.time_ns(), time.time_ns() + 10**9))
    assert worker.model(str(served))[2] == first


def test_the_model_cache_releases_the_least_recently_used_and_never_the_served_model(served, tmp_path):
    paths = [str(tmp_path / f"u{i}.nb") for i in range(3)]
    for path in paths:
        shutil.copy(served, path)
    settings = daemon.Settings(str(served), None, None, [], 1, models_dir=str(tmp_path), model_cache=2)
    worker = daemon.Worker(settings, [])
    for path in (str(served), paths[0], paths[1], paths[0], paths[2], paths[0]):
        worker.model(path)
    assert set(worker.models) == {str(served), paths[0], paths[2]}


def test_a_worker_scores_a_compressed_message_as_the_plain_one(served):
    worker = daemon.Worker(Settings(str(served), None, None, [], 1), [])
    spam = SPAM_FILE.read_bytes()
    plain = ask(worker, b"CHECK SPAMC/1.5\r\n", spam)
    assert plain.startswith(b"SPAMD/1.1 0 EX_OK\r\nSpam: True ; ")
    packed = ask(worker, b"CHECK SPAMC/1.5\r\nCompress: zlib\r\n", zlib.compress(spam))
    assert packed == plain
    ham = ask(worker, b"PROCESS SPAMC/1.5\r\n", HAM_FILE.read_bytes())
    assert b"\r\nSpam: False ; " in ham and b"X-Spam-Status: No, score=" in ham and b"X-NB-Class: ham; p=" in ham
    assert ask(worker, b"PING SPAMC/1.5\r\n") == b"SPAMD/1.5 0 PONG\r\n"


def test_what_a_request_cannot_get_is_its_own_error_line(served, tmp_path):
    worker = daemon.Worker(Settings(str(served), None, None, [], 1), [])
    with pytest.raises(spamd.ProtocolError, match="TELL commands are not enabled; start with --allow-tell") as told:
        ask(worker, b"TELL SPAMC/1.5\r\nMessage-class: spam\r\nSet: local\r\n", b"Subject: x\n\nhi\n")
    assert told.value.reply().startswith(b"SPAMD/1.0 69 EX_UNAVAILABLE ")
    os.unlink(served)  # the model file gone: that request's error, not the worker's end
    worker.models.clear()
    with pytest.raises(spamd.ProtocolError, match="no such model file") as gone:
        ask(worker, b"CHECK SPAMC/1.5\r\n", b"Subject: x\n\nhi\n")
    assert gone.value.reply().startswith(b"SPAMD/1.0 70 EX_SOFTWARE cannot score the message: ")


def test_a_tell_reads_set_and_remove_as_lists_of_words(served):
    """A TELL of "Set: local, remote" learns; one of "Set: nonlocal" (a substring) does not."""
    from nbcli.store import modelfile

    worker = daemon.Worker(Settings(str(served), None, None, [], 1, allow_tell=True), [])
    before = modelfile.load(str(served)).model.class_count.sum()
    with pytest.raises(spamd.ProtocolError, match="TELL needs one of Set: local and Remove: local"):
        ask(worker, b"TELL SPAMC/1.5\r\nMessage-class: spam\r\nSet: nonlocal\r\n", SPAM_FILE.read_bytes())
    assert modelfile.load(str(served)).model.class_count.sum() == before
    reply = ask(worker, b"TELL SPAMC/1.5\r\nMessage-class: ham\r\nSet: Local, remote\r\n", SPAM_FILE.read_bytes())
    assert reply.startswith(b"SPAMD/1.1 0 EX_OK\r\nDidSet: local")


def test_the_supervisor_refuses_a_model_that_is_not_a_spam_model_before_binding(tmp_path):
    topics = tmp_path / "topics.nb"
    nbcli("train", TRAIN.parent.parent / "topics" / "train.jsonl", "-o", topics, "-q")
    socket_path = tmp_path / "s.sock"
    with pytest.raises(NbcliError, match="a spamd server needs a two-class model with a 'spam' class"):
        daemon.run(Settings(str(topics), str(socket_path), None, [], 1), print)
    assert not socket_path.exists()


def test_a_tell_the_model_cannot_learn_says_the_flag_under_serve_and_the_parameter_without(tmp_path):
    """The library's error names the parameter (min_df); `nbcli serve` gives
    the daemon the command line's flags (Settings.in_terms), so the reply
    says --min-df as it always has (test_serve_models.py: the served reply)."""
    from nbcli.cli.options import in_flag_terms

    pruned = tmp_path / "pruned.nb"
    nbcli("train", TRAIN, "--min-df", "2", "-o", pruned, "-q")
    tell = b"TELL SPAMC/1.5\r\nMessage-class: spam\r\nSet: local\r\n"
    replies = {}
    for in_terms in (None, in_flag_terms):
        worker = daemon.Worker(Settings(str(pruned), None, None, [], 1, allow_tell=True, in_terms=in_terms), [])
        with pytest.raises(spamd.ProtocolError) as refused:
            ask(worker, tell, SPAM_FILE.read_bytes())
        replies[in_terms] = refused.value.reply()
    said = (
        "SPAMD/1.0 70 EX_SOFTWARE cannot learn the message: the model was trained with {}, which kept no counts "
        "for the terms it dropped, so it cannot learn exactly; train it again without {} (and keep it small with "
        "'nbcli prune')\r\n"
    )
    assert replies[in_flag_terms] == said.format("--min-df", "--min-df").encode()
    assert replies[None] == said.format("min_df", "min_df").encode()


def test_a_model_without_the_spam_class_is_named_by_parameter_and_the_cli_and_its_replies_by_flag(served, tmp_path):
    """The refusal names the parameter (spam_class) in the library; the
    command line says --spam-class, both at start-up (its error boundary)
    and in a worker's protocol reply (Settings.in_terms, which `nbcli
    serve` sets), where a per-user model without the class is met."""
    from nbcli.cli.options import in_flag_terms
    from nbcli.errors import ParameterError

    topics = tmp_path / "topics.nb"
    nbcli("train", TRAIN.parent.parent / "topics" / "train.jsonl", "-o", topics, "-q")
    with pytest.raises(ParameterError) as refused:
        daemon.run(Settings(str(topics), str(tmp_path / "s.sock"), None, [], 1), print)
    assert refused.value.parameter == "spam_class"
    assert str(refused.value).endswith("a 'spam' class; name the spam class with spam_class")
    assert str(in_flag_terms(refused.value)).endswith("a 'spam' class; name the spam class with --spam-class")
    cli = one_line_error(run(["serve", topics, "--socket", tmp_path / "t.sock"]))
    assert cli == f"nbcli: error: {in_flag_terms(refused.value)}"

    users = tmp_path / "users"
    users.mkdir()
    shutil.copy(topics, users / "alice.nb")
    for in_terms, said in ((None, b"spam_class"), (in_flag_terms, b"--spam-class")):
        worker = daemon.Worker(Settings(str(served), None, None, [], 1, models_dir=str(users), in_terms=in_terms), [])
        with pytest.raises(spamd.ProtocolError) as reply:
            ask(worker, b"CHECK SPAMC/1.5\r\nUser: alice\r\n", b"Subject: x\n\nhi\n")
        assert reply.value.reply() == (
            b"SPAMD/1.0 70 EX_SOFTWARE cannot score the message: "
            + str(users / "alice.nb").encode()
            + b" has classes astronomy, cooking, football, programming; a spamd server needs a two-class model with"
            b" a 'spam' class; name the spam class with " + said + b"\r\n"
        )


def test_a_tell_into_a_journalled_model_appends_the_update_of_its_terms_and_builds_no_model(
    served, tmp_path, monkeypatch
):
    """A worker's TELL on a model that keeps a journal appends the Update
    made from the message's terms (learning.learn_update) without
    rebuilding the model: the model read through the journal is the one a
    TELL on the same model written whole gives (same replies, same model
    id), for a learn, a move and a forget; --max-model-size weighs the file,
    its journal and the new record."""
    from nbcli.fit import learning
    from nbcli.store import modelfile

    whole = tmp_path / "whole.nb"
    shutil.copyfile(served, whole)
    tells = [
        (b"TELL SPAMC/1.5\r\nMessage-class: spam\r\nSet: local\r\n", SPAM_FILE),
        (b"TELL SPAMC/1.5\r\nMessage-class: spam\r\nSet: local\r\n", HAM_FILE),
        (b"TELL SPAMC/1.5\r\nMessage-class: ham\r\nSet: local\r\n", HAM_FILE),  # a move
        (b"TELL SPAMC/1.5\r\nRemove: local\r\n", SPAM_FILE),  # forgotten from where the record holds it
    ]

    def rebuilt(*args, **kwargs):
        raise AssertionError("a journalled model was rebuilt to learn")

    monkeypatch.setattr(modelfile, "COMPACT_FRACTION", 1e9)
    replies = {}
    for path, minimum in ((whole, 1 << 40), (served, 0)):
        monkeypatch.setattr(modelfile, "JOURNAL_MIN_BYTES", minimum)
        if minimum == 0:
            monkeypatch.setattr(learning, "rebuild", rebuilt)
        worker = daemon.Worker(Settings(str(path), None, None, [], 1, allow_tell=True), [])
        replies[minimum] = [ask(worker, head, body.read_bytes()) for head, body in tells]
    assert replies[0] == replies[1 << 40]
    assert b"DidSet" in replies[0][0] and b"DidRemove" in replies[0][3]
    assert (tmp_path / "mail.nb.journal").exists() and not (tmp_path / "whole.nb.journal").exists()
    assert modelfile.model_id(modelfile.load(str(served))) == modelfile.model_id(modelfile.load(str(whole)))
    stamp = os.path.getsize(served) + os.path.getsize(tmp_path / "mail.nb.journal")
    worker = daemon.Worker(Settings(str(served), None, None, [], 1, allow_tell=True, max_model_size=stamp), [])
    with pytest.raises(spamd.ProtocolError, match="over --max-model-size"):
        ask(worker, tells[0][0], sorted(SPAM_FILE.parent.iterdir())[4].read_bytes())


@pytest.mark.parametrize("rolling", [False, True], ids=["appended", "rolled"])
def test_a_worker_follows_its_own_tells_and_another_writers_learns_without_reading_the_model_again(
    served, monkeypatch, rolling
):
    """A worker lays its TELL's update over the model it holds, and reads
    only the new records of the journal when another process learned
    (`modelfile.followed`): its replies (score, model id) are a fresh
    worker's, and the model file is never read again; also when each
    update makes a checkpoint due and so starts the journal anew
    (`journal.roll`), past the end the worker holds."""
    from nbcli.fit.analysed import analyse_for_learning
    from nbcli.run.updating import learn_into
    from nbcli.store import journal_updates, modelfile
    from nbcli.text.sources import Document

    monkeypatch.setattr(modelfile, "JOURNAL_MIN_BYTES", 0)
    monkeypatch.setattr(modelfile, "COMPACT_FRACTION", 1e9)
    if rolling:
        monkeypatch.setattr(journal_updates, "CHECKPOINT_MIN_BYTES", 0)
        monkeypatch.setattr(journal_updates, "_marks", {})
    report = b"REPORT SPAMC/1.5\r\n"
    tell = b"TELL SPAMC/1.5\r\nMessage-class: spam\r\nSet: local\r\n"
    messages = sorted(HAM_FILE.parent.iterdir())[:12]
    question = SPAM_FILE.read_bytes()

    def fresh() -> bytes:
        with monkeypatch.context() as m:
            m.setattr(modelfile, "read_payload", real_read)
            return ask(daemon.Worker(Settings(str(served), None, None, [], 1), []), report, question)

    real_read = modelfile.read_payload
    worker = daemon.Worker(Settings(str(served), None, None, [], 1, allow_tell=True), [])
    first = ask(worker, report, question)
    monkeypatch.setattr(modelfile, "read_payload", lambda *a, **k: pytest.fail("the model file was read again"))
    for message in messages[:2]:
        assert b"DidSet" in ask(worker, tell, message.read_bytes())
        assert str(served) in worker.unfollowed  # laid over the model once the reply is on its way
        worker.settle()  # what the connection loop does after each round of replies
        assert not worker.unfollowed
        now = ask(worker, report, question)
        assert now == fresh() and now != first
    held_end = worker.models[str(served)][1].journal_state[1]

    def rolled_past() -> bool:  # the journal started anew after the worker's end: the records between are gone
        line = (served.parent / "mail.nb.journal").read_bytes().split(b"\n")[0].split()
        return line[1] == b"2" and int(line[3]) > held_end

    with monkeypatch.context() as m:  # another process learns (rolling: until a checkpoint started the journal anew)
        m.setattr(modelfile, "read_payload", real_read)
        for message in messages[2:] if rolling else messages[2:3]:
            current = modelfile.load_view(str(served))
            docs = analyse_for_learning(current.analyzer, [Document("m", "ham", message.read_bytes(), "mail")])
            learn_into(str(served), docs, current.analyzer_options)
            if rolling and rolled_past():
                break
    assert rolled_past() == rolling
    assert ask(worker, report, question) == fresh()
    with monkeypatch.context() as m:  # a failure laying its TELL over the model does not end the worker
        m.setattr(modelfile, "followed", lambda *a, **k: 1 / 0)
        assert b"DidSet" in ask(worker, tell, messages[2].read_bytes())
        worker.settle()
    assert ask(worker, report, question) == fresh()  # the next request reads the journal's new record


def learned_into_a_journal(served, monkeypatch, flat_after: int) -> None:
    """`served` with a message learned into its journal (kept, never
    compacted), and daemon.FLAT_AFTER set to flat_after."""
    from nbcli.fit.analysed import analyse_for_learning
    from nbcli.run.updating import learn_into
    from nbcli.store import modelfile
    from nbcli.text.sources import Document

    monkeypatch.setattr(modelfile, "JOURNAL_MIN_BYTES", 0)
    monkeypatch.setattr(modelfile, "COMPACT_FRACTION", 1e9)
    monkeypatch.setattr(daemon, "FLAT_AFTER", flat_after)
    current = modelfile.load_view(str(served))
    docs = analyse_for_learning(current.analyzer, [Document("m", "ham", HAM_FILE.read_bytes(), "mail")])
    learn_into(str(served), docs, current.analyzer_options)


def test_a_worker_scores_a_journalled_model_from_a_flat_table_between_updates(served, tmp_path, monkeypatch):
    """A worker reading a journalled model from scratch derives every term's
    weights once (`JournalView.flatten`); after a TELL it scores through the
    view's layers until the new view has scored FLAT_AFTER messages, then
    flattens it again, after a reply. Every reply is what a worker of the
    same model written whole gives."""
    from nbcli.nb.overlay import JournalView
    from nbcli.store import modelfile

    learned_into_a_journal(served, monkeypatch, flat_after=2)
    report = b"REPORT SPAMC/1.5\r\n"
    question = SPAM_FILE.read_bytes()

    def whole() -> bytes:  # the same model, written whole
        copy = tmp_path / f"whole{time.monotonic_ns()}.nb"
        shutil.copyfile(served, copy)
        shutil.copyfile(str(served) + ".journal", str(copy) + ".journal")
        modelfile.compact(str(copy))
        return ask(daemon.Worker(Settings(str(copy), None, None, [], 1), []), report, question)

    worker = daemon.Worker(Settings(str(served), None, None, [], 1, allow_tell=True), [])
    assert ask(worker, report, question) == whole()
    held = worker.models[str(served)][1]
    assert isinstance(held, JournalView) and held.flat is not None
    tell = b"TELL SPAMC/1.5\r\nMessage-class: spam\r\nSet: local\r\n"
    assert b"DidSet" in ask(worker, tell, sorted(SPAM_FILE.parent.iterdir())[3].read_bytes())
    worker.settle()
    expected = whole()
    for flat in (False, False, True):  # two messages through the layers, then flattened after the reply
        assert ask(worker, report, question) == expected
        held = worker.models[str(served)][1]
        assert isinstance(held, JournalView) and (held.flat is not None) == flat
        worker.settle()


def test_a_view_that_cannot_be_flattened_is_served_through_its_layers(served, monkeypatch):
    """A failure deriving the flat table (`_flatten`, run at a load and in
    `settle`, outside any request) leaves the worker serving the view as it
    was, with the same replies, and it is not tried again."""
    from nbcli.nb.overlay import JournalView

    learned_into_a_journal(served, monkeypatch, flat_after=1)
    report = b"REPORT SPAMC/1.5\r\n"
    expected = ask(daemon.Worker(Settings(str(served), None, None, [], 1), []), report, SPAM_FILE.read_bytes())
    tries = []

    def broken(self, release=None):
        tries.append(1)
        raise IndexError("a crafted journal")

    monkeypatch.setattr(JournalView, "flatten", broken)
    worker = daemon.Worker(Settings(str(served), None, None, [], 1), [])
    for _ in range(3):
        assert ask(worker, report, SPAM_FILE.read_bytes()) == expected
        worker.settle()
    assert worker.models[str(served)][1].flat is None and len(tries) == 1


def test_a_users_own_model_starts_as_the_shared_model_reads_journal_included(served, tmp_path, monkeypatch):
    """--user-tell own copies the shared model for a user's first TELL. The
    shared model's journal (an administrator's `nbcli learn` into it) was
    left out of the copy: the user's model lost that learn, and the user's
    TELL of the same message counted it a second time."""
    from nbcli.fit.analysed import analyse_for_learning
    from nbcli.run.updating import learn_into
    from nbcli.store import modelfile
    from nbcli.text.sources import Document

    monkeypatch.setattr(modelfile, "JOURNAL_MIN_BYTES", 0)
    monkeypatch.setattr(modelfile, "COMPACT_FRACTION", 1e9)
    learned = sorted(HAM_FILE.parent.iterdir())[2].read_bytes()
    current = modelfile.load_view(str(served))
    learn_into(
        str(served),
        analyse_for_learning(current.analyzer, [Document("m", "spam", learned, "mail")]),
        current.analyzer_options,
    )
    assert (tmp_path / "mail.nb.journal").exists()
    users = tmp_path / "users"
    users.mkdir()
    worker = daemon.Worker(Settings(str(served), None, None, [], 1, allow_tell=True, models_dir=str(users)), [])
    tell = b"TELL SPAMC/1.5\r\nMessage-class: spam\r\nSet: local\r\nUser: bob\r\n"
    assert ask(worker, tell, learned) == b"SPAMD/1.1 0 EX_OK\r\n\r\n"  # learned already: the shared model's record
    bob = modelfile.load(str(users / "bob.nb"))
    assert modelfile.model_id(bob) == modelfile.model_id(modelfile.load(str(served)))
    assert not (users / "bob.nb.journal").exists()  # written whole


def test_a_tell_into_a_journal_damaged_since_the_worker_read_it_names_the_damage(served, monkeypatch):
    """It said the model "changed while the update was made (another
    writer); run the command again", which would never help."""
    from nbcli.store import modelfile

    monkeypatch.setattr(modelfile, "JOURNAL_MIN_BYTES", 0)
    worker = daemon.Worker(Settings(str(served), None, None, [], 1, allow_tell=True), [])
    tell = b"TELL SPAMC/1.5\r\nMessage-class: spam\r\nSet: local\r\n"
    messages = sorted(HAM_FILE.parent.iterdir())[:3]
    for message in messages[:2]:
        assert b"DidSet: local" in ask(worker, tell, message.read_bytes())
    journal = served.parent / (served.name + ".journal")
    with open(journal, "ab") as fh:
        fh.write(b"not an update, and longer than a record's head" * 2)  # after the worker's last read
    with pytest.raises(spamd.ProtocolError) as refused:
        ask(worker, tell, messages[2].read_bytes())
    reply = refused.value.reply()
    assert b"journal is corrupt (byte " in reply and b"does not start an update" in reply, reply
    assert b"--drop-bad-tail" in reply and b"another writer" not in reply
    journal.unlink()
    damaged = bytearray(served.read_bytes())
    damaged[len(damaged) // 2] ^= 0xFF  # the model file, in place
    served.write_bytes(bytes(damaged))
    with pytest.raises(spamd.ProtocolError) as refused:
        ask(worker, tell, messages[2].read_bytes())
    reply = refused.value.reply()
    assert b"is corrupt (checksum mismatch)" in reply and b"another writer" not in reply, reply


def test_a_tell_into_a_journal_damaged_in_place_at_its_size_appends_nothing_and_checks_go_on(served, monkeypatch):
    """A journal changed in place (its size the same: a bit flipped in a
    record the worker had read) is read again, not followed from its end: a
    TELL would have appended after the damage, and a recovery that keeps
    the updates before it (--drop-bad-tail) would have dropped the TELL.
    The TELL is refused, naming the damage; CHECKs go on with the model as
    the worker last read it whole."""
    from nbcli.store import modelfile

    monkeypatch.setattr(modelfile, "JOURNAL_MIN_BYTES", 0)
    worker = daemon.Worker(Settings(str(served), None, None, [], 1, allow_tell=True), [])
    tell = b"TELL SPAMC/1.5\r\nMessage-class: spam\r\nSet: local\r\n"
    check = b"CHECK SPAMC/1.5\r\n"
    messages = sorted(HAM_FILE.parent.iterdir())[:3]
    for message in messages[:2]:
        assert b"DidSet: local" in ask(worker, tell, message.read_bytes())
    before = ask(worker, check, messages[0].read_bytes())
    journal = served.parent / (served.name + ".journal")
    data = bytearray(journal.read_bytes())
    data[len(data) // 3] ^= 0xFF  # in a record the worker has read
    stat = journal.stat()
    with open(journal, "r+b") as fh:  # in place: the same inode and size
        fh.write(data)
    os.utime(journal, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))  # (a clock tick later)
    with pytest.raises(spamd.ProtocolError) as refused:
        ask(worker, tell, messages[2].read_bytes())
    reply = refused.value.reply()
    assert b"journal is corrupt" in reply and b"--drop-bad-tail" in reply, reply
    assert journal.stat().st_size == stat.st_size  # nothing appended after the damage
    assert ask(worker, check, messages[0].read_bytes()) == before

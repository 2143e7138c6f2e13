"""`nbcli serve`'s model handling under stress (issue 25): a model file that
vanishes, is rewritten in place or is a link; many per-user models; TELLs
that would grow a model without bound or teach the shared model; and the
exact requests of `spamc -L` (forget sends no Message-class).

Servers are real processes (tests/spam/test_serve.py's `Server`); every test
also checks that no worker died (the supervisor says so on stderr)."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from spamd_client import build_request, child_pids, connect, exchange, read_all, request, rss_kb
from test_serve import HAM_FILE, SPAM_FILE, TRAIN, Server, model_id, nbcli, served_id

from conftest import debian_tool

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="Unix sockets and signals")

ERROR = re.compile(rb"SPAMD/1\.0 (\d+) (EX_[A-Z]+) ([^\r\n]+)\r\n")
DIED = "ended ("  # the supervisor's "warning: worker PID ended (...); starting another"

# What spamc 4.0.1 (Debian's) sends for `spamc -L spam` and `spamc -L forget`
# of a 19-byte message, captured byte for byte from a listening socket.
SPAMC_MESSAGE = b"Subject: hi\n\nhello\n"
SPAMC_LEARN_SPAM = (
    b"TELL SPAMC/1.5\r\nMessage-class: spam\r\nSet: local\r\nUser: root\r\nContent-length: 19\r\n\r\n"
    b"Subject: hi\n\nhello\n"
)
SPAMC_FORGET = b"TELL SPAMC/1.5\r\nRemove: local\r\nUser: root\r\nContent-length: 19\r\n\r\nSubject: hi\n\nhello\n"


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("served") / "mail.nb"
    nbcli("train", TRAIN, "-o", path, "-q")
    return path


@pytest.fixture
def served(trained, tmp_path) -> Path:
    path = tmp_path / "mail.nb"
    shutil.copy(trained, path)
    return path


def stopped(srv: Server) -> str:
    """Stop the server (it must exit 0) and say that no worker died."""
    code = srv.stop()
    log = "".join(srv.stderr)
    assert code == 0, log
    assert DIED not in log, log
    return log


def held_files(pid: int, folder: Path) -> tuple[int, int]:
    """(descriptors open on files in `folder`, distinct files of `folder` mapped) of process `pid`."""
    prefix = str(folder) + "/"
    fds = 0
    for name in os.listdir(f"/proc/{pid}/fd"):
        try:
            fds += os.readlink(f"/proc/{pid}/fd/{name}").startswith(prefix)
        except OSError:
            pass
    with open(f"/proc/{pid}/maps") as fh:
        mapped = {line.split(None, 5)[-1].strip() for line in fh if prefix in line}
    return fds, len(mapped)


def new_words(n: int, seed: int) -> bytes:
    rng = random.Random(seed)
    words = ("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(9)) for _ in range(n))
    return b"Subject: words\n\n" + " ".join(words).encode() + b"\n"


# -- 7: every request's failure is that request's reply --------------------------------


def test_tell_while_the_model_file_is_absent_is_an_error_reply(served, tmp_path):
    """The worker survives: the TELL gets an error line, and another client
    that same (only) worker holds is still answered."""
    srv = Server(served, "--allow-tell", "--workers", "1")
    try:
        waiting = connect(srv.unix)
        waiting.sendall(b"PING SPAMC/1.5\r\n")  # incomplete: the head's blank line is still to come
        time.sleep(0.2)
        away = tmp_path / "away.nb"
        os.rename(served, away)
        raw = exchange(
            srv.unix, build_request("TELL", HAM_FILE.read_bytes(), [("Message-class", "spam"), ("Set", "local")])
        )
        m = ERROR.fullmatch(raw)
        assert m, raw
        assert b"no such model file" in m[3], raw
        waiting.sendall(b"\r\n")
        assert read_all(waiting).startswith(b"SPAMD/1.5 0 PONG"), "the other connection was reset"
        waiting.close()
        raw = exchange(srv.tcp, build_request("CHECK", HAM_FILE.read_bytes()))
        assert ERROR.fullmatch(raw), raw  # no model to score with: an error line, spamc passes the mail through
        os.rename(away, served)
        srv.assert_alive()
        assert served_id(srv.unix, HAM_FILE.read_bytes()) == model_id(served)
    finally:
        stopped(srv)


# -- 11: a model rewritten in place ---------------------------------------------------------


def test_a_model_rewritten_in_place_does_not_kill_the_worker(served, tmp_path):
    """`cp new.nb mail.nb` truncates the served file, then writes it: the
    worker answers throughout (with the last good model while the file is
    incomplete), then serves the new one."""
    other = tmp_path / "other.nb"
    shutil.copy(served, other)
    nbcli("learn", other, "--spam", HAM_FILE, "-q")
    new = other.read_bytes()
    message = SPAM_FILE.read_bytes()
    srv = Server(served, "--workers", "1")
    try:
        first = served_id(srv.unix, message)
        with open(served, "r+b") as fh:  # what cp does: open with O_TRUNC, then write
            fh.truncate(0)
            fh.flush()
            assert served_id(srv.unix, message) == first
            fh.write(new[: len(new) // 2])
            fh.flush()
            assert served_id(srv.tcp, message) == first
            fh.write(new[len(new) // 2 :])
        os.utime(served, ns=(time.time_ns(), time.time_ns() + 10**9))  # another mtime, even on a coarse clock
        assert served_id(srv.unix, message) == model_id(other) != first
        srv.assert_alive()
    finally:
        stopped(srv)


# -- 8: per-user models are released ----------------------------------------------------------


def test_per_user_models_are_released(trained, tmp_path):
    """40 users through one worker with --model-cache 3: no file of theirs
    stays open or mapped, and the worker's memory does not grow by a model
    per user."""
    users = tmp_path / "users"
    users.mkdir()
    for i in range(40):
        shutil.copy(trained, users / f"u{i}.nb")
    size_kb = trained.stat().st_size // 1024
    message = HAM_FILE.read_bytes()
    srv = Server(trained, "--models-dir", str(users), "--model-cache", "3", "--workers", "1")
    try:
        (pid,) = child_pids(srv.proc.pid)
        for i in range(3):
            served_id(srv.unix, message, f"u{i}")
        before = rss_kb(pid)
        for i in range(40):
            served_id(srv.unix, message, f"u{i}")
        fds, mapped = held_files(pid, users)
        assert fds <= 3 and mapped <= 3, (fds, mapped)
        grown = rss_kb(pid) - before
        assert grown < 10 * size_kb, f"RSS grew by {grown} kB for 37 more users of a {size_kb} kB model"
    finally:
        stopped(srv)


# -- 9: what a TELL may add --------------------------------------------------------------------


def test_a_tell_may_not_grow_the_model_past_max_model_size(served):
    size = served.stat().st_size
    cap = size + 64 * 1024
    before = served.read_bytes()
    srv = Server(served, "--allow-tell", "--max-model-size", str(cap))
    try:
        big = new_words(20000, seed=1)  # ~200 KB of new words: ~20000 new terms
        raw = exchange(srv.unix, build_request("TELL", big, [("Message-class", "spam"), ("Set", "local")]))
        m = ERROR.fullmatch(raw)
        assert m and m[2] == b"EX_UNAVAILABLE", raw
        assert b"--max-model-size" in m[3] and b"nbcli prune" in m[3], raw
        assert served.read_bytes() == before
        # a message over --max-size is not learned either
        huge = new_words(60000, seed=2)
        assert len(huge) > 500 * 1024
        raw = exchange(srv.tcp, build_request("TELL", huge, [("Message-class", "spam"), ("Set", "local")]))
        m = ERROR.fullmatch(raw)
        assert m and b"--max-size" in m[3], raw
        assert served.read_bytes() == before
        # an ordinary message still is
        reply = request(srv.unix, "TELL", HAM_FILE.read_bytes(), [("Message-class", "spam"), ("Set", "local")])
        assert reply.headers.get("didset") == "local", reply.raw
        assert served.stat().st_size <= cap
    finally:
        stopped(srv)


def test_a_tell_the_model_cannot_learn_says_the_flag_it_was_trained_with(tmp_path):
    """The library's error names the parameter (select); `nbcli serve`'s reply says the flag."""
    pruned = tmp_path / "pruned.nb"
    nbcli("train", TRAIN, "--select", "50", "-o", pruned, "-q")
    before = pruned.read_bytes()
    srv = Server(pruned, "--allow-tell", "--workers", "1")
    try:
        raw = exchange(
            srv.unix, build_request("TELL", SPAM_FILE.read_bytes(), [("Message-class", "spam"), ("Set", "local")])
        )
        assert raw == (
            b"SPAMD/1.0 70 EX_SOFTWARE cannot learn the message: the model was trained with --select, which kept no "
            b"counts for the terms it dropped, so it cannot learn exactly; train it again without --select\r\n"
        )
        assert pruned.read_bytes() == before
    finally:
        stopped(srv)


# -- 10, 12: per-user TELLs, links ------------------------------------------------------------


def test_tell_with_models_dir_teaches_only_a_users_own_model(trained, tmp_path):
    """--user-tell refuse: a TELL from a user without a model of their own, or naming no user, is refused;
    a user's own model (a link included: its target) learns."""
    users = tmp_path / "users"
    users.mkdir()
    shared = tmp_path / "shared.nb"
    shutil.copy(trained, shared)
    alice = users / "alice.nb"
    shutil.copy(trained, alice)
    target = tmp_path / "team.nb"  # bob's model is a link to a file other users share
    shutil.copy(trained, target)
    (users / "bob.nb").symlink_to(target)
    before = shared.read_bytes()
    message = HAM_FILE.read_bytes()
    learn = [("Message-class", "spam"), ("Set", "local")]
    srv = Server(shared, "--models-dir", str(users), "--allow-tell", "--user-tell", "refuse")
    try:
        for headers in (learn + [("User", "nobody")], learn):
            raw = exchange(srv.unix, build_request("TELL", message, headers))
            m = ERROR.fullmatch(raw)
            assert m and m[2] == b"EX_NOPERM", raw
            assert b"shared model" in m[3], raw
        assert shared.read_bytes() == before and not (users / "nobody.nb").exists()
        reply = request(srv.unix, "TELL", message, learn + [("User", "alice")])
        assert reply.headers.get("didset") == "local", reply.raw
        assert model_id(alice) != model_id(shared)
        reply = request(srv.unix, "TELL", message, learn + [("User", "bob")])
        assert reply.headers.get("didset") == "local", reply.raw
        assert (users / "bob.nb").is_symlink()
        assert model_id(target) == model_id(alice)  # the link's target learned
        assert (tmp_path / ".team.nb.lock").exists() and not (users / ".bob.nb.lock").exists()
        assert shared.read_bytes() == before
    finally:
        stopped(srv)


def _scores(srv, users, message):
    """{user: the CHECK score of `message`} for each user and for a request naming no user."""
    out = {}
    for user in users:
        headers = [("User", user)] if user else []
        out[user] = request(srv.unix, "CHECK", message, headers).raw.split(b"\r\n")[1]
    return out


def test_under_user_tell_own_one_users_tell_never_changes_another_users_or_the_shared_verdicts(trained, tmp_path):
    """Issue 28: the first TELL of a user without a model gives them one, a copy of the shared model, and
    teaches it; another user's verdicts and the shared model's stay as they were, byte for byte, and a TELL
    naming no user still does not teach the shared model."""
    users = tmp_path / "users"
    users.mkdir()
    shared = tmp_path / "shared.nb"
    shutil.copy(trained, shared)
    carol = users / "carol.nb"
    shutil.copy(trained, carol)
    before = {shared: shared.read_bytes(), carol: carol.read_bytes()}
    spam = SPAM_FILE.read_bytes()
    ham = HAM_FILE.read_bytes()
    srv = Server(shared, "--models-dir", str(users), "--allow-tell", "--workers", "2")
    try:
        asked = ["carol", "dave", None]
        scores = {m: _scores(srv, asked, m) for m in (spam, ham)}
        for round_ in range(3):  # the first TELL creates alice.nb; later ones teach it; repeats change nothing
            for message, kind in ((ham, "spam"), (spam, "ham")):
                headers = [("Message-class", kind), ("Set", "local"), ("User", "alice")]
                reply = request(srv.unix, "TELL", message, headers)
                assert reply.headers.get("didset") == ("local" if round_ == 0 else None), reply.raw
        alice = users / "alice.nb"
        assert alice.is_file() and model_id(alice) != model_id(shared)
        assert not [p for p in users.iterdir() if p.name.endswith(".tmp")]  # no temporary left behind
        info = json.loads(nbcli("info", alice, "--json").stdout)
        shared_info = json.loads(nbcli("info", shared, "--json").stdout)
        assert info["documents"] == shared_info["documents"] + 2  # the shared counts plus alice's two messages
        assert {p: p.read_bytes() for p in before} == before
        assert {m: _scores(srv, asked, m) for m in (spam, ham)} == scores
        reply = request(srv.unix, "CHECK", ham, [("User", "alice")])
        assert reply.raw.split(b"\r\n")[1] != scores[ham]["carol"]  # alice's filter learned her correction
        raw = exchange(srv.unix, build_request("TELL", ham, [("Message-class", "spam"), ("Set", "local")]))
        assert ERROR.fullmatch(raw) and ERROR.fullmatch(raw)[2] == b"EX_NOPERM", raw
        # under --user-tell own (this daemon's): the way out is a User, or shared; not "start with own"
        assert b"name the user (spamc -u USER), or start with --user-tell shared" in raw, raw
        assert shared.read_bytes() == before[shared]
    finally:
        stopped(srv)


def test_user_tell_shared_teaches_the_shared_model(trained, tmp_path):
    users = tmp_path / "users"
    users.mkdir()
    shared = tmp_path / "shared.nb"
    shutil.copy(trained, shared)
    before = model_id(shared)
    srv = Server(shared, "--models-dir", str(users), "--allow-tell", "--user-tell", "shared")
    try:
        headers = [("Message-class", "spam"), ("Set", "local"), ("User", "erin")]
        reply = request(srv.unix, "TELL", HAM_FILE.read_bytes(), headers)
        assert reply.headers.get("didset") == "local", reply.raw
        assert model_id(shared) != before and not list(users.iterdir())
    finally:
        stopped(srv)


# -- spamc -L forget --------------------------------------------------------------------------


def test_spamc_forget_request_exactly(served):
    """spamc -L forget sends Remove: local and no Message-class: the message
    is forgotten from the class the record holds it in."""
    original = model_id(served)
    srv = Server(served, "--allow-tell")
    try:
        raw = exchange(srv.unix, SPAMC_LEARN_SPAM)
        assert raw.startswith(b"SPAMD/1.") and b"DidSet: local" in raw, raw
        learned = model_id(served)
        assert learned != original
        raw = exchange(srv.unix, SPAMC_FORGET)
        assert raw.startswith(b"SPAMD/1.") and b" 0 EX_OK" in raw and b"DidRemove: local" in raw, raw
        assert model_id(served) == original
        raw = exchange(srv.tcp, SPAMC_FORGET)  # again: nothing to remove, and not an error
        assert b" 0 EX_OK" in raw and b"DidRemove" not in raw, raw
    finally:
        stopped(srv)


def test_real_spamc_learns_and_forgets(served, tmp_path):
    (spamc_path,) = debian_tool("spamc", "spamc")
    message = tmp_path / "m.eml"
    message.write_bytes(HAM_FILE.read_bytes())
    original = model_id(served)
    srv = Server(served, "--allow-tell")
    try:

        def spamc(*args) -> subprocess.CompletedProcess:
            with open(message, "rb") as fh:
                return subprocess.run([spamc_path, "-U", srv.unix, *args], stdin=fh, capture_output=True, timeout=30)

        done = spamc("-L", "spam")
        assert done.returncode == 0 and b"successfully" in done.stdout, done
        assert model_id(served) != original
        done = spamc("-L", "forget")
        assert done.returncode == 0 and b"successfully" in done.stdout, done
        assert model_id(served) == original
    finally:
        stopped(srv)


def test_remove_without_a_class_of_a_message_never_learned(served):
    before = served.read_bytes()
    srv = Server(served, "--allow-tell")
    try:
        reply = request(srv.unix, "TELL", new_words(50, seed=3), [("Remove", "local")])
        assert reply.code == 0 and "didremove" not in reply.headers, reply.raw
        assert served.read_bytes() == before
        # a Set still needs its class
        raw = exchange(srv.unix, build_request("TELL", HAM_FILE.read_bytes(), [("Set", "local")]))
        assert ERROR.fullmatch(raw) and b"Message-class" in raw, raw
    finally:
        stopped(srv)

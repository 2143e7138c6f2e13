"""`nbcli imap`: connecting (TLS, STARTTLS, loopback plain text), the
password's sources, and the one-line errors of what goes wrong before and
during a pass, against a real Dovecot."""

from __future__ import annotations

import imaplib
import os
import socket

import pytest
from dovecot import free_port
from imap_helpers import append, folder, imap_args, imap_pass, samples, settings_for, summary

from conftest import SAMPLES, one_line_error, run


def test_tls_starttls_and_loopback_plain_text_all_log_in(dovecot, mail_model_copy, tmp_path):
    state = tmp_path / "state.json"
    assert summary(imap_pass(dovecot, mail_model_copy, state))["classified"] == 0
    args = imap_args(dovecot, mail_model_copy, state)
    at = args.index("--tls")
    starttls = args[: at - 2] + ["--port", dovecot.port, "--starttls"] + args[at + 1 :]
    assert run(starttls).exit_code == 0
    append(dovecot, "INBOX", samples("ham", 2))
    said = summary(imap_pass(dovecot, mail_model_copy, state, tls=False))  # 127.0.0.1: plain text allowed
    assert said["classified"] == 2


def test_a_refused_connection_is_one_line(mail_model_copy, tmp_path, dovecot):
    args = imap_args(dovecot, mail_model_copy, tmp_path / "s.json")
    args[args.index("--port") + 1] = free_port()
    line = one_line_error(run(args))
    assert "connection refused" in line and "check --host and --port" in line


def test_a_certificate_that_does_not_verify_is_refused(dovecot, mail_model_copy, tmp_path):
    args = imap_args(dovecot, mail_model_copy, tmp_path / "s.json")
    at = args.index("--cafile")
    del args[at : at + 2]
    line = one_line_error(run(args))
    assert "could not be verified" in line and "--cafile" in line
    assert not (tmp_path / "s.json").exists()


def test_a_refused_login_never_shows_the_password(dovecot, mail_model_copy, tmp_path):
    wrong = tmp_path / "wrong"
    wrong.write_text("not-the-Passw0rd-xyz\n")
    wrong.chmod(0o600)
    args = imap_args(dovecot, mail_model_copy, tmp_path / "s.json")
    args[args.index("--password-file") + 1] = wrong
    result = run(args)
    line = one_line_error(result)
    assert f"refused the login as {dovecot.user}" in line and "NBCLI_IMAP_PASSWORD" in line
    assert "not-the-Passw0rd-xyz" not in result.stdout + result.stderr


def test_the_password_from_the_environment_and_files_others_may_read(dovecot, mail_model_copy, tmp_path):
    args = imap_args(dovecot, mail_model_copy, tmp_path / "s.json")
    at = args.index("--password-file")
    shared = args[at + 1]
    del args[at : at + 2]
    assert run(args, env={"NBCLI_IMAP_PASSWORD": dovecot.password}).exit_code == 0
    line = one_line_error(run(args, env={"NBCLI_IMAP_PASSWORD": None}))
    assert "no password" in line and "--password-file" in line
    args = imap_args(dovecot, mail_model_copy, tmp_path / "s.json")  # (writes the file again, 0600)
    os.chmod(shared, 0o640)
    line = one_line_error(run(args))
    assert "may be read by others" in line and "chmod 600" in line


def test_a_password_file_that_is_a_device_is_named_so():
    """/dev/null (mode 666) was 'may be read by others; chmod 600 /dev/null':
    advice that, taken as root, breaks the machine's /dev/null."""
    from nbcli.errors import NbcliError
    from nbcli.imap.settings import read_password

    with pytest.raises(NbcliError) as said:
        read_password("/dev/null")
    assert str(said.value).startswith("--password-file /dev/null is a device, not a file")
    assert "chmod" not in said.value.hint


def test_plain_text_to_a_host_that_is_not_loopback_is_refused(mail_model_copy, tmp_path):
    password = tmp_path / "pw"
    password.write_text("x\n")
    password.chmod(0o600)
    args = ["imap", mail_model_copy, "--host", "imap.example.org", "--no-tls", "--user", "u"]
    line = one_line_error(run([*args, "--password-file", password]))
    assert "plain text" in line and "--allow-plaintext" in line


@pytest.mark.parametrize(
    "host, user, says",
    [
        ("", "u", "--host is empty"),
        ("127.0.0.1", "", "--user is empty"),
        ("a" * 300, "u", "not a valid host name"),  # its IDNA encoding fails: was internal error: UnicodeError
        ("a..b", "u", "not a valid host name"),
    ],
)
def test_a_host_or_user_that_cannot_be_one_is_a_one_line_error(mail_model_copy, tmp_path, host, user, says):
    password = tmp_path / "pw"
    password.write_text("x\n")
    password.chmod(0o600)
    args = ["imap", mail_model_copy, "--host", host, "--user", user, "--password-file", password, "--once"]
    line = one_line_error(run([*args, "--state", tmp_path / "state.json"]))
    assert says in line and "internal error" not in line
    assert not (tmp_path / "state.json").exists()


@pytest.mark.parametrize("option", ["--inbox", "--junk"])
def test_an_empty_folder_name_is_refused_before_connecting(mail_model_copy, tmp_path, option):
    password = tmp_path / "pw"
    password.write_text("x\n")
    password.chmod(0o600)
    args = ["imap", mail_model_copy, "--host", "127.0.0.1", "--port", "1", "--no-tls", "--user", "u"]
    line = one_line_error(run([*args, "--password-file", password, "--state", tmp_path / "s.json", option, ""]))
    assert line == f"nbcli: error: {option} is empty; give the folder's name as your mail program shows it"


@pytest.mark.parametrize("which", ["table", "topics", "missing"])
def test_a_model_no_pass_can_use_is_refused_before_connecting(tmp_path, which):
    """A table model, a model without a spam class, no model: one line, and
    the server (a listening socket here) is never connected to."""
    if which == "table":
        table = tmp_path / "spamish.csv"
        table.write_text("Outlook,Wind,label\nSunny,Weak,ham\nRain,Strong,spam\nRain,Weak,spam\nSunny,Strong,ham\n")
        assert run(["train", table, "--features", "all", "-o", tmp_path / "m.nb", "-q"]).exit_code == 0
    elif which == "topics":
        topics = SAMPLES / "topics" / "train.jsonl"
        assert run(["train", topics, "-o", tmp_path / "m.nb", "-q", "--calibrate", "none"]).exit_code == 0
    password = tmp_path / "pw"
    password.write_text("x\n")
    password.chmod(0o600)
    with socket.create_server(("127.0.0.1", 0)) as listening:
        listening.settimeout(0)
        port = listening.getsockname()[1]
        args = ["imap", tmp_path / "m.nb", "--host", "127.0.0.1", "--port", port, "--no-tls", "--user", "u"]
        line = one_line_error(run([*args, "--password-file", password, "--state", tmp_path / "s.json", "--once"]))
        with pytest.raises(BlockingIOError):
            listening.accept()  # nobody came
    says = {
        "table": "m.nb is a table model: it classifies rows of a table, and nbcli imap classifies mail",
        "topics": "m.nb is not a spam model: its classes are",
        "missing": "cannot read model",
    }[which]
    assert says in line


def test_a_pass_reads_the_model_once(dovecot, mail_model_copy, tmp_path, monkeypatch):
    """The command checks the model before connecting, and its pass uses that read."""
    from nbcli.store import modelfile

    reads = []
    load_view = modelfile.load_view
    monkeypatch.setattr(modelfile, "load_view", lambda *a, **k: reads.append(a) or load_view(*a, **k))
    append(dovecot, "INBOX", samples("ham", 1))
    assert summary(imap_pass(dovecot, mail_model_copy, tmp_path / "s.json"))["classified"] == 1
    assert len(reads) == 1


def test_a_missing_folder_names_the_folders_there_are(dovecot, mail_model_copy, tmp_path):
    line = one_line_error(run(imap_args(dovecot, mail_model_copy, tmp_path / "s.json", "--junk", "Spam")))
    assert "has no folder 'Spam'" in line and "INBOX" in line and "Junk" in line


def test_a_lost_connection_says_how_far_the_pass_got_and_the_next_goes_on(
    dovecot, mail_model_copy, tmp_path, monkeypatch
):
    from nbcli.imap import passes

    state = tmp_path / "state.json"
    append(dovecot, "INBOX", samples("spam", 3) + samples("ham", 3))
    inbox = passes._Pass.inbox

    def dropped(self):
        self.imap.sock.shutdown(socket.SHUT_RDWR)  # the connection drops (a stopped Dovecot keeps its clients)
        return inbox(self)

    monkeypatch.setattr(passes._Pass, "inbox", dropped)
    line = one_line_error(run(imap_args(dovecot, mail_model_copy, state)))
    assert "the connection to localhost was lost" in line and "while classifying the inbox INBOX" in line
    assert "so far: classified=0" in line and "run it again" in line
    monkeypatch.setattr(passes._Pass, "inbox", inbox)
    assert summary(imap_pass(dovecot, mail_model_copy, state))["classified"] == 6


def test_run_pass_lets_a_dropped_connection_out(dovecot, mail_model_copy, tmp_path):
    from nbcli.imap.connection import connect
    from nbcli.imap.passes import run_pass
    from nbcli.run.updating import learn_into

    append(dovecot, "INBOX", samples("ham", 2))
    settings = settings_for(dovecot, mail_model_copy, tmp_path / "s.json")
    imap = connect(settings)
    imap.sock.shutdown(socket.SHUT_RDWR)
    with pytest.raises((OSError, imaplib.IMAP4.abort)):
        run_pass(imap, settings, learn_into)
    assert "password=" not in repr(settings) and dovecot.password not in repr(settings)


def test_without_move_spam_is_copied_and_only_its_uids_expunged(make_dovecot, mail_model_copy, tmp_path):
    server = make_dovecot(capabilities="IMAP4rev1 LITERAL+ UIDPLUS")
    append(server, "INBOX", samples("ham", 1), flags="(\\Deleted)")  # the user's, not expunged yet
    append(server, "INBOX", samples("spam", 5) + samples("ham", 5))
    said = summary(imap_pass(server, mail_model_copy, tmp_path / "s.json"))
    inbox, junk = folder(server, "INBOX"), folder(server, "Junk")
    assert said["filed"] == len(junk) >= 3
    assert inbox[1][0] - {"\\recent"} == {"\\deleted"}  # still there, left alone
    assert len(inbox) == 11 - said["filed"]
    assert all("$junk" in flags and "\\deleted" not in flags for flags, _ in junk.values())


def test_a_server_without_move_or_uidplus_is_refused_before_anything_changes(make_dovecot, mail_model_copy, tmp_path):
    server = make_dovecot(capabilities="IMAP4rev1 LITERAL+")
    append(server, "INBOX", samples("spam", 2))
    line = one_line_error(run(imap_args(server, mail_model_copy, tmp_path / "s.json")))
    assert "neither MOVE nor UIDPLUS" in line
    assert len(folder(server, "INBOX")) == 2 and not folder(server, "Junk")

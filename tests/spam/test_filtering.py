"""`spam/filtering.py` and `nbcli filter` (issue 12's hardening): procmail
recipes under real procmail, all-or-nothing --split appends, input
errors, CR-only mail, header injection, the --split summary, failing open
end to end, and the scorer the caller gives."""

import errno
import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from nbcli.spam import filtering
from nbcli.text.raw_messages import read_messages

from conftest import SAMPLES, debian_tool, docs_text, run, run_process
from mailfixtures import MESSAGES, mbox_of

MAIL = SAMPLES / "mail"
SPAM = (MAIL / "test" / "spam" / "0001.eml").read_bytes()
HAM = (MAIL / "test" / "ham" / "0001.eml").read_bytes()
FROM_ = b"From sender@example.org Mon Jan  1 00:00:00 2024\n"


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "mail.nb"
    assert run(["train", MAIL / "train", "-o", path, "-q"]).exit_code == 0
    return path


def classes_of(out_dir: Path) -> dict[str, int]:
    return {p.name: len(list(read_messages(str(p)))) for p in sorted(out_dir.iterdir())}


# -- procmail ----------------------------------------------------------------------


@pytest.fixture(scope="session")
def procmail():
    """procmail on PATH, installed from Debian's package when missing."""
    return debian_tool("procmail", "procmail")[0]


def shown_recipes() -> list[tuple[str, str]]:
    """Every procmail recipe the README or `filter --help` shows."""
    recipes = []
    readme = docs_text()
    block = None
    for line in readme.splitlines(keepends=True):
        if line.startswith("```"):
            if block is not None and re.search(r"(?m)^:0", "".join(block)) and "nbcli filter" in "".join(block):
                recipes.append(("README", "".join(block)))
            block = [] if block is None else None
        elif block is not None:
            block.append(line)
    help_text = run(["filter", "--help"]).stdout
    lines = [line.strip() for line in help_text.splitlines()]
    for i, line in enumerate(lines):
        if line.startswith("# procmail"):
            body = []
            for rest in lines[i + 1 :]:
                if not rest.startswith("#"):
                    break
                body.append(rest[1:].strip())
            recipes.append(("filter --help", "\n".join(body) + "\n"))
    return recipes


def test_the_shown_recipes_are_found():
    where = [w for w, _ in shown_recipes()]
    assert "README" in where and "filter --help" in where


@pytest.mark.parametrize("where,recipe", shown_recipes())
def test_every_shown_procmail_recipe_files_spam_and_keeps_ham(where, recipe, procmail, model, tmp_path):
    """Under real procmail: spam ends up in the spam folder, ham in the
    default mailbox, nothing lost (defect 4: `:0 W | nbcli filter
    --exit-codes` made every spam verdict vanish)."""
    mail = tmp_path / "Mail"
    mail.mkdir()
    bindir = Path(sys.executable).parent
    assert (bindir / "nbcli").exists()
    recipe = re.sub(r"(\$HOME|~)/\.nbcli/mail\.nb", str(model), recipe)
    rc = tmp_path / "rc"
    rc.write_text(
        f"SHELL=/bin/sh\nPATH={bindir}:/usr/bin:/bin\nMAILDIR={mail}\nDEFAULT={mail}/inbox.mbox\n"
        f"LOGFILE={tmp_path}/procmail.log\nVERBOSE=on\n\n{recipe}"
    )
    spams = sorted((MAIL / "test" / "spam").iterdir())[:3]
    hams = sorted((MAIL / "test" / "ham").iterdir())[:3]
    for msg in spams + hams:
        proc = subprocess.run([procmail, "-m", str(rc)], stdin=msg.open("rb"), capture_output=True, timeout=120)
        assert proc.returncode == 0, (where, proc.stderr, (tmp_path / "procmail.log").read_text())
    spam_box = [p for p in mail.iterdir() if p.name != "inbox.mbox" and not p.name.endswith(".lock")]
    assert [p.name for p in spam_box] == ["spam.mbox"], where
    spam_text, inbox = spam_box[0].read_bytes(), (mail / "inbox.mbox").read_bytes()
    for msg in spams:  # each message's Subject is in the right place, once
        subject = re.search(rb"(?m)^Subject: .*$", msg.read_bytes()).group()
        assert spam_text.count(subject) == 1 and subject not in inbox, (where, subject)
    for msg in hams:
        subject = re.search(rb"(?m)^Subject: .*$", msg.read_bytes()).group()
        assert inbox.count(subject) == 1 and subject not in spam_text, (where, subject)


def test_the_readme_correction_hook_teaches_the_model_under_procmail(procmail, model, tmp_path):
    """The README's `nbcli learn` hook: a message sent to you+spam@ is
    learned as spam (once, however often it comes), other mail is
    delivered as usual."""
    readme = docs_text()
    start = readme.index("# ~/.procmailrc: mail piped")
    recipe = readme[start : readme.index("\n\n", start)]  # the procmail part (the Dovecot script follows)
    assert ":0" in recipe and "nbcli learn" in recipe
    learning = tmp_path / "learning.nb"
    learning.write_bytes(Path(model).read_bytes())
    recipe = re.sub(r"\$HOME/\.nbcli/mail\.nb", str(learning), recipe)
    mail = tmp_path / "Mail"
    mail.mkdir()
    bindir = Path(sys.executable).parent
    rc = tmp_path / "rc"
    rc.write_text(
        f"SHELL=/bin/sh\nPATH={bindir}:/usr/bin:/bin\nMAILDIR={mail}\nDEFAULT={mail}/inbox.mbox\n"
        f"LOGFILE={tmp_path}/procmail.log\n\n{recipe}\n"
    )
    message = re.sub(rb"(?m)^To: .*$", b"To: you+spam@example.org", SPAM, count=1)

    def spam_documents():
        info = json.loads(run(["info", learning, "--json"]).stdout)
        return {row["class"]: row["documents"] for row in info["classes"]}["spam"]

    before = spam_documents()
    for _ in range(2):
        proc = subprocess.run([procmail, "-m", str(rc)], input=message, capture_output=True, timeout=120)
        assert proc.returncode == 0, (proc.stderr, (tmp_path / "procmail.log").read_text())
    assert spam_documents() == before + 1  # learned once: the second time it was already learned
    assert not (mail / "inbox.mbox").exists()  # the teaching address does not deliver
    proc = subprocess.run([procmail, "-m", str(rc)], input=HAM, capture_output=True, timeout=120)
    assert proc.returncode == 0 and (mail / "inbox.mbox").read_bytes().count(b"\nSubject: ") == 1


# -- --split appends are all or nothing (defect 5) ---------------------------------------


def test_a_failed_append_leaves_the_mbox_as_it_was_and_names_it(model, tmp_path, monkeypatch):
    out = tmp_path / "sorted"
    assert run(["filter", model, "--split", out], input=HAM).exit_code == 0
    before = (out / "ham.mbox").read_bytes()
    real_write, calls = os.write, []

    def half_then_full_disk(fd, data):
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", half_then_full_disk)
    failed = run(["filter", model, "--split", out, "--exit-codes"], input=HAM)
    monkeypatch.undo()
    assert len(calls) == 2  # it did write half an entry
    assert (out / "ham.mbox").read_bytes() == before  # ... and took it back
    assert failed.exit_code == 3  # never 1 (ham) for an error under --exit-codes
    assert failed.stderr.strip().splitlines()[-1] == (
        f"nbcli: error: cannot append to {out / 'ham.mbox'}: No space left on device; it was left as it was "
        "before this message"
    )
    # the next append is a clean entry of its own
    assert run(["filter", model, "--split", out], input=HAM).exit_code == 0
    assert classes_of(out) == {"ham.mbox": 2}


def test_a_file_size_limit_leaves_no_torn_entry(model, tmp_path):
    import resource
    import signal

    out = tmp_path / "sorted"
    two_way = ["--spam-cutoff", "0.5", "--ham-cutoff", "0.5"]  # no unsure band: both messages go to spam.mbox
    assert run(["filter", model, "--split", out, *two_way], input=SPAM).exit_code == 0
    before = (out / "spam.mbox").read_bytes()
    big = SPAM.replace(b"\n\n", b"\n\n" + b"cheap pills now\n" * 20000, 1)
    limit = len(before) + 4096

    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = subprocess.run(
        [sys.executable, "-m", "nbcli", "filter", str(model), "--split", str(out), *two_way],
        input=big,
        capture_output=True,
        timeout=120,
        preexec_fn=limited,
    )
    assert proc.returncode == 1
    assert f"cannot append to {out / 'spam.mbox'}: File too large".encode() in proc.stderr
    assert (out / "spam.mbox").read_bytes() == before


def test_split_prints_where_the_messages_went(model, tmp_path):
    out = tmp_path / "sorted"
    result = run(["filter", model, MAIL / "inbox.mbox", "--split", out])
    assert result.exit_code == 0 and result.stdout_bytes == b""
    # the second ham message is unsure: P(ham) 0.93 under the sample model's calibration
    assert result.stderr == (
        f"nbcli: filed 6 messages: ham 2 ({out / 'ham.mbox'}), spam 3 ({out / 'spam.mbox'}), "
        f"unsure 1 ({out / 'unsure.mbox'})\n"
    )
    assert run(["filter", model, MAIL / "inbox.mbox", "--split", out, "-q"]).stderr == ""


def test_split_file_names_are_sanitised(tmp_path):
    writer = filtering.SplitWriter(str(tmp_path))
    writer.write("../evil\nname", b"Subject: x\n\nbody\n")
    assert [p.name for p in tmp_path.iterdir()] == [".._evil_name.mbox"]


# -- filter's input (defect 13) ----------------------------------------------------------


def test_an_unreadable_input_is_an_error_naming_it(model, tmp_path, monkeypatch):
    from nbcli.text import raw_messages as sources

    path = tmp_path / "locked.eml"
    path.write_bytes(SPAM)

    def denied(name, *args, **kw):
        raise PermissionError(errno.EACCES, "Permission denied", name)

    monkeypatch.setattr(sources, "open", denied, raising=False)
    result = run(["filter", model, path, "--exit-codes"])
    assert result.exit_code == 3 and result.stdout_bytes == b""
    assert result.stderr == f"nbcli: error: cannot read {path}: Permission denied\n"
    assert run(["filter", model, path]).exit_code == 1


def test_a_missing_input_under_exit_codes_is_3(model, tmp_path):
    result = run(["filter", model, tmp_path / "nope.eml", "--exit-codes"])
    assert result.exit_code == 3 and f"{tmp_path / 'nope.eml'}: no such file or folder" in result.stderr


def test_process_substitution_and_a_fifo_are_read(model, tmp_path):
    msg = tmp_path / "spam.eml"
    msg.write_bytes(SPAM)
    proc = subprocess.run(
        ["bash", "-c", f'"{sys.executable}" -m nbcli filter --exit-codes "{model}" <(cat "{msg}")'],
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 0 and proc.stdout.startswith(b"X-NB-Class: spam") and proc.stdout.endswith(SPAM), (
        proc.stderr
    )
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(mbox_of([HAM, SPAM])))
    writer.start()
    try:
        result = run_process(["filter", model, fifo])
    finally:
        writer.join(timeout=60)
    assert result.returncode == 0 and result.stdout.count(b"X-NB-Class: ") == 2


def test_dev_null_is_no_messages(model):
    result = run_process(["filter", model, "/dev/null"])
    assert result.returncode == 0 and result.stdout == b""
    assert result.stderr == b"nbcli: warning: /dev/null: no messages\n"
    assert run_process(["filter", model, "/dev/null", "--exit-codes"]).returncode == 3  # neither spam nor ham


def test_a_folder_and_a_maildir_come_out_as_one_mbox(model, tmp_path):
    import mailbox

    folder = tmp_path / "mail"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.eml").write_bytes(SPAM)
    (folder / "sub" / "b.eml").write_bytes(b"Subject: quoting\n\nline\nFrom here on\n")
    (folder / "box.mbox").write_bytes(mbox_of([HAM, SPAM, HAM]))
    (folder / ".hidden").write_bytes(SPAM)
    result = run(["filter", model, folder])
    assert result.exit_code == 0, result.stderr
    out = result.stdout_bytes
    entries = list(read_messages(str(_write(tmp_path / "out.mbox", out))))
    assert len(entries) == 5 and all(e.count(b"X-NB-Class: ") == 1 for e in entries)  # count in = count out
    assert entries[-1].endswith(b"\n\nline\n>From here on\n\n")  # a message given its From_ line and quoting
    box = mailbox.Maildir(str(tmp_path / "Maildir"), create=True)
    for raw in (HAM, SPAM):
        box.add(raw)
    box.close()
    result = run(["filter", model, tmp_path / "Maildir"])
    assert (
        result.exit_code == 0 and len(list(read_messages(str(_write(tmp_path / "md.mbox", result.stdout_bytes))))) == 2
    )


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


# -- CR-only mail (defect 16) and header injection (defect 17) -------------------------


def test_a_cr_only_message_gets_its_header_or_no_verdict(model, tmp_path):
    cr = (FROM_ + SPAM).replace(b"\n", b"\r")
    result = run(["filter", model, "--exit-codes"], input=cr)
    assert result.exit_code == 0
    ours = re.search(rb"\rX-NB-Class: spam; p=[01]\.\d{4}; model=[0-9a-f]{6}\r", result.stdout_bytes).group()
    assert result.stdout_bytes == cr.replace(b"\r", ours, 1)
    run(["filter", model, "--split", tmp_path / "out"], input=cr)
    assert ours in (tmp_path / "out" / "spam.mbox").read_bytes()
    # a message that is nothing but a From_ line cannot get a header: no verdict
    bare = FROM_.rstrip(b"\n")
    result = run(["filter", model, "--exit-codes"], input=bare)
    assert result.exit_code == 3 and result.stdout_bytes == bare and "no header block" in result.stderr


def test_class_names_never_put_a_line_break_into_a_header():
    class Fixed:
        classes = ["ham\r\nX-Injected: yes", "spam"]

        def score(self, docs, kinds, explain=0):
            rows = np.log(np.tile([0.999, 0.001], (len(docs), 1)))
            if not explain:
                return rows
            why = {
                "versus": "spam\nX-Also: no",
                "log_odds": 1.0,
                "prior": 0.0,
                "unknown": {"count": 0, "contribution": 0.0},
                "terms": [{"term": "a\rb", "count": 1, "contribution": 1.0}],
            }
            return rows, [why] * len(docs)

    written = []
    filtering.run(
        iter([b"Subject: a\n\nbody\n"]),
        Fixed(),
        filtering.Verdicts(Fixed.classes),
        lambda v, m: written.append(m),
        print,
        explain=3,
    )
    head = written[0].split(b"\n\n")[0]
    assert b"\r" not in head
    assert [line.split(b":")[0] for line in head.split(b"\n") if not line.startswith(b"\t")] == [
        b"X-NB-Class",
        b"X-NB-Evidence",
        b"Subject",
    ]


# -- failing open, end to end ------------------------------------------------------------


def test_a_message_that_makes_scoring_raise_passes_through_unchanged(model, tmp_path, monkeypatch):
    from nbcli.nb.classifier import Classifier

    real = Classifier.score

    def picky(self, docs, kinds=None, explain=0):
        if any(b"POISON" in (d if isinstance(d, bytes) else d.encode()) for d in docs):
            raise ValueError("cannot score this one")
        return real(self, docs, kinds, explain)

    monkeypatch.setattr(Classifier, "score", picky)
    poisoned = b"Subject: bad\n\nPOISON\n"
    messages = [HAM, poisoned, SPAM, MESSAGES["crlf"]]
    original = mbox_of(messages)
    result = run(["filter", model, "-", "--jobs", "1"], input=original)
    assert result.exit_code == 1 and "passed through unchanged" in result.stderr
    out = list(read_messages(str(_write(tmp_path / "out.mbox", result.stdout_bytes))))
    assert len(out) == len(messages)  # count in = count out
    assert out[1] == list(read_messages(str(_write(tmp_path / "in.mbox", original))))[1]  # byte for byte
    assert re.sub(rb"X-NB-Class: [^\r\n]*\r?\n", b"", result.stdout_bytes) == original


def test_a_folder_with_an_unreadable_file_and_a_fifo(model, tmp_path, monkeypatch):
    """Unreadable files in a folder are warnings that fail the run (exit 1,
    3 under --exit-codes); a FIFO is skipped without blocking."""
    from nbcli.text import raw_messages as sources

    folder = tmp_path / "mail"
    folder.mkdir()
    (folder / "a.eml").write_bytes(SPAM)
    (folder / "b.eml").write_bytes(HAM)
    os.mkfifo(folder / "c.fifo")
    real_open = os.open

    def deny_b(name, flags, *args):
        if str(name).endswith("b.eml"):
            raise PermissionError(errno.EACCES, "Permission denied", name)
        return real_open(name, flags, *args)

    monkeypatch.setattr(sources.os, "open", deny_b)
    result = run(["filter", model, folder, "--exit-codes"])
    monkeypatch.undo()
    assert result.exit_code == 3
    assert f"skipping {folder / 'b.eml'}: Permission denied" in result.stderr
    assert "c.fifo" in result.stderr
    assert result.stdout_bytes.count(b"X-NB-Class: spam") == 1


def test_the_callers_scorer_scores_and_a_batch_it_cannot_score_is_scored_one_by_one():
    """`run` scores with the caller's classify (nbcli filter gives the
    pipeline's, on --jobs workers), in order; a batch it returns an
    exception for is scored message by message, so only the bad message
    passes through with the verdict 'error'."""

    class Picky:
        classes = ["ham", "spam"]

        def score(self, docs, kinds, explain=0):
            if any(b"POISON" in d for d in docs):
                raise ValueError("cannot read this one")
            return np.log(np.tile([0.2, 0.8], (len(docs), 1)))

    calls = []

    def classify(classifier, batches, explain=0):
        for batch, result in filtering.scored_here(classifier, batches, explain):
            calls.append([d.id for d in batch])
            yield batch, result

    messages = [b"Subject: a\n\nfine\n", b"Subject: b\n\nPOISON\n", b"Subject: c\n\nfine too\n"]
    written, warnings = [], []
    seen = filtering.run(
        iter(messages),
        Picky(),
        filtering.Verdicts(Picky.classes),
        lambda v, m: written.append(m),
        warnings.append,
        classify=classify,
        model_id="3f9a1c",
    )
    assert sum(calls, []) == ["1", "2", "3"] and seen == ["unsure", "error", "unsure"]
    assert written[0].startswith(b"X-NB-Class: unsure; p=0.8000; model=3f9a1c\n") and written[1] == messages[1]
    assert warnings == ["message 2: cannot read this one; passed through unchanged"]


def test_a_split_folder_that_cannot_be_made_names_split_dir_and_the_cli_says_split(model, tmp_path):
    """The library names the parameter (split_dir); `nbcli filter` says --split."""
    from nbcli.errors import ParameterError

    (tmp_path / "file").write_text("")
    folder = tmp_path / "file" / "sorted"  # under a file: cannot be made
    with pytest.raises(ParameterError) as refused:
        filtering.SplitWriter(str(folder))
    assert str(refused.value).startswith(f"split_dir {folder}: cannot create the folder: Not a directory; give")
    result = run(["filter", model, MAIL / "inbox.mbox", "--split", folder])
    assert result.exit_code == 1 and result.stdout_bytes == b""
    assert result.stderr == (
        f"nbcli: error: --split {folder}: cannot create the folder: Not a directory; give a folder that exists, or "
        "one whose parent does (not a file's name)\n"
    )

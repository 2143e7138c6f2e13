"""The command line under hostile conditions: outputs that would destroy
inputs, closed or broken standard streams, odd locales and file names,
absurd --jobs, and a parent killed under its workers (issue 12)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from conftest import SAMPLES, run, run_process

MAIL_TRAIN = SAMPLES / "mail" / "train"
HAM = SAMPLES / "mail" / "test" / "ham" / "0001.eml"
SPAM = SAMPLES / "mail" / "test" / "spam" / "0001.eml"


@pytest.fixture(scope="module")
def mail_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "mail.nb"
    result = run(["train", MAIL_TRAIN, "-o", path, "-q"])
    assert result.exit_code == 0, result.stderr
    return path


def _one_error_line(stderr: str, *words: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("nbcli: error: "), stderr
    assert "Traceback" not in stderr and "internal error" not in stderr
    for word in words:
        assert word in lines[0], lines[0]


# -- outputs that are inputs -----------------------------------------------------


def test_train_refuses_to_write_the_model_over_its_corpus(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    shutil.copy(SAMPLES / "topics" / "train.jsonl", corpus)
    before = corpus.read_bytes()
    os.symlink(corpus, tmp_path / "link.jsonl")
    os.link(corpus, tmp_path / "hard.jsonl")
    for source in (corpus, tmp_path / "link.jsonl", tmp_path / "hard.jsonl"):
        result = run(["train", source, "-o", corpus])
        assert result.exit_code == 1
        _one_error_line(result.stderr, "-o", "input")
    spam = tmp_path / "in.mbox"
    spam.write_bytes((SAMPLES / "mail" / "inbox.mbox").read_bytes())
    result = run(["train", "--label", f"spam={spam}", "--label", f"ham={MAIL_TRAIN / 'ham'}", "-o", spam])
    assert result.exit_code == 1
    _one_error_line(result.stderr, str(spam))
    assert corpus.read_bytes() == before
    assert spam.read_bytes() == (SAMPLES / "mail" / "inbox.mbox").read_bytes()


def test_train_refuses_a_model_inside_an_input_folder(tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(MAIL_TRAIN, corpus)
    result = run(["train", corpus, "-o", corpus / "ham" / "mail.nb"])
    assert result.exit_code == 1
    _one_error_line(result.stderr, "inside the input folder")
    assert not (corpus / "ham" / "mail.nb").exists()
    # next to the corpus is fine
    assert run(["train", corpus, "-o", tmp_path / "mail.nb", "-q"]).exit_code == 0


def test_eval_refuses_a_plot_over_its_input(tmp_path, mail_model):
    predictions = tmp_path / "p.svg"
    result = run(["predict", mail_model, SAMPLES / "mail" / "test", "--json"])
    predictions.write_text(result.stdout)
    result = run(["eval", "--predictions", predictions, "--plot", predictions])
    assert result.exit_code == 1
    _one_error_line(result.stderr, "--plot")
    assert predictions.read_text() == result.stdout or predictions.read_text().startswith("{")


def test_filter_refuses_to_split_into_its_input(tmp_path, mail_model):
    inbox = tmp_path / "sorted" / "spam.mbox"
    inbox.parent.mkdir()
    original = (SAMPLES / "mail" / "inbox.mbox").read_bytes()
    inbox.write_bytes(original)
    result = run(["filter", mail_model, inbox, "--split", inbox.parent])
    assert result.exit_code == 1
    _one_error_line(result.stderr, "--split", str(inbox))
    assert inbox.read_bytes() == original
    folder = tmp_path / "mail"
    shutil.copytree(SAMPLES / "mail" / "test", folder)
    result = run(["filter", mail_model, folder, "--split", folder / "sorted", "--exit-codes"])
    assert result.exit_code == 3
    _one_error_line(result.stderr, "inside the input folder")
    assert not (folder / "sorted").exists()


# -- standard streams ---------------------------------------------------------------


def _closing(*fds):
    def close():
        for fd in fds:
            os.close(fd)

    return close


def test_closed_stderr_never_sends_warnings_into_the_mail(mail_model):
    env = dict(os.environ)
    blank = b"  \n\n"  # a message with nothing in it: a warning, passed through
    proc = subprocess.run(
        [sys.executable, "-m", "nbcli", "filter", str(mail_model)],
        input=blank,
        capture_output=False,
        stdout=subprocess.PIPE,
        preexec_fn=_closing(2),
        env=env,
        timeout=60,
    )
    assert proc.stdout == blank
    message = HAM.read_bytes()
    proc = subprocess.run(
        [sys.executable, "-m", "nbcli", "filter", "/nonexistent/model.nb"],
        input=message,
        stdout=subprocess.PIPE,
        preexec_fn=_closing(2),
        env=env,
        timeout=60,
    )
    assert proc.stdout == message  # fail open: the message passes unchanged
    assert proc.returncode == 1


def test_closed_stdin_and_stdout_are_one_line_errors(mail_model):
    proc = subprocess.run(
        [sys.executable, "-m", "nbcli", "predict", str(mail_model)],
        capture_output=True,
        preexec_fn=_closing(0),
        timeout=60,
    )
    assert proc.returncode == 1
    _one_error_line(proc.stderr.decode(), "standard input is closed")
    proc = subprocess.run(
        [sys.executable, "-m", "nbcli", "predict", str(mail_model), str(HAM)],
        stderr=subprocess.PIPE,
        preexec_fn=_closing(1),
        timeout=60,
    )
    assert proc.returncode == 1
    _one_error_line(proc.stderr.decode(), "standard output is closed")


def _with_broken_stdout(args):
    """Run nbcli with a stdout pipe whose reader is already gone."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [sys.executable, "-m", "nbcli", *map(str, args)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            timeout=120,
        )
    finally:
        os.close(write_end)


def test_a_broken_pipe_exits_141_quietly(mail_model, tmp_path):
    for args in (
        ["predict", mail_model, SAMPLES / "mail" / "test"],
        ["eval", mail_model, SAMPLES / "mail" / "test"],
        ["info", mail_model],
        ["filter", mail_model, SAMPLES / "mail" / "inbox.mbox"],
        ["tune", SAMPLES / "topics" / "train.jsonl", "--cv", "2", "-j", "1"],
    ):
        proc = _with_broken_stdout(args)
        assert proc.returncode == 141, (args, proc.stderr)
        assert proc.stderr == b"", (args, proc.stderr)


def test_an_ascii_locale_gives_output_not_an_internal_error(mail_model):
    env = {"PYTHONIOENCODING": "ascii"}
    proc = run_process(["eval", "--cv", "2", MAIL_TRAIN, "-j", "1"], env=env)
    assert proc.returncode == 0, proc.stderr
    assert b"accuracy" in proc.stdout and b"internal error" not in proc.stderr
    proc = run_process(["eval", "--cv", "2", SAMPLES / "topics" / "train.jsonl", "--json", "-j", "1"], env=env)
    assert proc.returncode == 0, proc.stderr
    json.loads(proc.stdout)


def test_file_names_that_are_not_utf8_give_valid_json_and_tsv(tmp_path, mail_model):
    folder = tmp_path / "in"
    folder.mkdir()
    name = os.fsencode(folder) + b"/caf\xe9.eml"
    with open(name, "wb") as fh:
        fh.write(HAM.read_bytes())
    proc = run_process(["predict", mail_model, folder, "--json"])
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout.decode("utf-8"))  # strict UTF-8, valid JSON
    assert record["id"].endswith("caf\\xe9.eml")
    proc = run_process(["predict", mail_model, folder])
    proc.stdout.decode("utf-8")
    assert proc.stdout.split(b"\t")[0].endswith(b"caf\\\\xe9.eml")  # TSV escapes the backslash


# -- jobs and workers ----------------------------------------------------------------


def test_jobs_are_capped_at_the_cores_and_absurd_values_refused(mail_model):
    result = run(["predict", mail_model, HAM, "-j", "1000"])
    assert result.exit_code == 0
    assert "core" in result.stderr and "using" in result.stderr
    assert result.stdout == run(["predict", mail_model, HAM, "-j", "1"]).stdout
    for jobs in ("5000", "100000"):
        result = run(["predict", mail_model, HAM, "-j", jobs])
        assert result.exit_code == 2
        assert "0<=x<=1024" in result.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_workers_die_with_their_parent(tmp_path, mail_model):
    """Kill only nbcli's own process while its workers are up: the caller's
    pipes must close (the workers must not outlive it)."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    proc = subprocess.Popen(
        [sys.executable, "-m", "nbcli", "predict", str(mail_model), str(HAM), str(fifo), "-j", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        workers = []
        deadline = time.monotonic() + 60
        while len(workers) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
            found = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
            workers = [int(pid) for pid in found]
        assert len(workers) >= 2, "the workers never started"
        os.kill(proc.pid, signal.SIGTERM)  # nbcli blocks opening the FIFO; only it is killed
        proc.communicate(timeout=30)  # hangs while a worker holds stdout open
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(pid) for pid in workers):
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in workers)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


# -- small things a user notices -----------------------------------------------------


def test_eval_names_a_spam_class_the_model_does_not_have(mail_model):
    result = run(["eval", mail_model, SAMPLES / "mail" / "test", "--spam-class", "junk"])
    assert result.exit_code == 1
    _one_error_line(result.stderr, "junk", "ham, spam")


def test_reports_are_plain_aligned_text(mail_model):
    for args in (
        ["eval", mail_model, SAMPLES / "mail" / "test"],
        ["info", mail_model],
        ["eval", "--cv", "2", MAIL_TRAIN],
    ):
        out = run(args).stdout
        assert not any(ch in out for ch in "─━│┃┌┐└┘╭╮╰╯"), out
        assert all(line == line.rstrip() for line in out.splitlines())
    lines = run(["eval", mail_model, SAMPLES / "mail" / "test"]).stdout.splitlines()
    header = lines[1].split()
    assert header == ["class", "precision", "recall", "f1", "support"]
    assert lines[2].split()[0] == "ham" and len(lines[2].split()) == 5


def test_the_analysis_cap_can_be_lowered_at_classification_time(tmp_path, mail_model):
    # A message of ham words whose tail, past 2 KB, is full of spam words.
    top = json.loads(run(["info", mail_model, "--json", "--top", "40"]).stdout)["top_terms"]
    words = {c: " ".join(t["term"] for t in top[c] if ":" not in t["term"]) for c in ("ham", "spam")}
    long_message = (
        b"Subject: notes\n\n" + (words["ham"] + "\n").encode() * 5 + b" " * 2048 + (words["spam"] + "\n").encode() * 50
    )
    path = tmp_path / "long.eml"
    path.write_bytes(long_message)
    whole = run(["predict", mail_model, path, "--json"])
    capped = run(["predict", mail_model, path, "--json", "--max-message-bytes", "2K"])
    assert whole.exit_code == 0 and capped.exit_code == 0, capped.stderr
    assert json.loads(whole.stdout)["label"] == "spam"
    assert json.loads(capped.stdout)["label"] == "ham"
    result = run(["eval", mail_model, SAMPLES / "mail" / "test", "--max-message-bytes", "64K", "--json"])
    assert result.exit_code == 0, result.stderr
    tagged = run(["filter", mail_model, path, "--max-message-bytes", "2K"])
    assert tagged.stdout_bytes.startswith(b"X-NB-Class: ham;")


def test_info_never_writes_control_characters_from_a_model(tmp_path, mail_model):
    from nbcli.store import modelfile

    payload = dict(modelfile.read_payload(str(mail_model)))
    payload["meta"] = {**payload["meta"], "created": "\x1b]0;pwned\x07\x1b[2J"}
    payload.pop("checksum", None)  # a model from before checksums: loaded on its invariants
    crafted = tmp_path / "crafted.nb"
    modelfile.write_payload(payload, str(crafted))
    result = run(["info", crafted])
    assert result.exit_code == 0, result.stderr
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "?]0;pwned??[2J" in result.stdout


def test_an_analysis_cap_beyond_the_limit_is_a_usage_error(mail_model):
    result = run(["predict", mail_model, HAM, "--max-message-bytes", "1G"])
    assert result.exit_code == 2
    assert "64M" in result.stderr and result.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "args",
    [
        ["eval", "--cv", "3", str(SAMPLES / "topics" / "train.jsonl")],
        ["tune", str(SAMPLES / "topics" / "train.jsonl")],
        ["cluster", str(SAMPLES / "topics" / "train.jsonl"), "-k", "2", "-o", "never.nb"],
    ],
    ids=["eval-cv", "tune", "cluster"],
)
def test_a_negative_seed_is_a_usage_error_not_an_internal_one(args):
    result = run([*args, "--seed", "-1"])
    assert result.exit_code == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"nbcli: error: Invalid value for '--seed': -1 is not in the range x>=0. (see 'nbcli {args[0]} --help')"
    ]


@pytest.mark.parametrize(
    "option, value, says",
    [
        ("--spam-cutoff", "nan", "'nan' is not a finite number"),  # click's FloatRange let NaN through: all unsure
        ("--ham-cutoff", "NaN", "'NaN' is not a finite number"),
        ("--max-message-bytes", "inf", "'inf' is not a size such as 512K"),  # was internal error: OverflowError
        ("--max-message-bytes", "1e400K", "'1e400K' is not a size such as 512K"),
    ],
)
def test_numbers_that_are_not_finite_are_usage_errors(mail_model, option, value, says):
    result = run(["predict", mail_model, "-", option, value], input="hello\n")
    assert result.exit_code == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"nbcli: error: Invalid value for '{option}': {says}"), lines

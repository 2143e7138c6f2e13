"""`nbcli predict`: one line per document on stdout, streaming."""

import json
import os
import select
import subprocess
import sys
import time

import numpy as np

from nbcli.store import modelfile

from conftest import SAMPLES, make_docs, run, run_process


def test_tsv_lines_one_per_document(tmp_path, small_model):
    docs = tmp_path / "in"
    docs.mkdir()
    texts, _ = make_docs(5, seed=9, classes=["code", "food"])
    for i, t in enumerate(texts):
        (docs / f"{i}.txt").write_text(t)
    result = run(["predict", small_model, docs])
    assert result.exit_code == 0 and result.stderr == ""
    lines = result.stdout.splitlines()
    assert len(lines) == 5
    clf = modelfile.load(str(small_model))
    expected = np.exp(clf.log_proba(texts))
    for i, line in enumerate(lines):
        doc_id, label, prob = line.split("\t")
        assert doc_id == str(docs / f"{i}.txt")
        assert label == clf.classes[expected[i].argmax()]
        assert float(prob) == expected[i].max()


def test_json_lines_carry_every_class_probability(tmp_path, small_model):
    result = run(["predict", small_model, "--json", "-"], input="function compile python bug")
    assert result.exit_code == 0
    (line,) = result.stdout.splitlines()
    rec = json.loads(line)
    assert rec["id"] == "-" and rec["label"] == "code"
    assert set(rec["probabilities"]) == {"code", "food"}
    assert abs(sum(rec["probabilities"].values()) - 1) < 1e-12
    assert rec["probability"] == rec["probabilities"]["code"] > 0.5


def test_tables_and_id_escaping(tmp_path, small_model):
    (tmp_path / "t.jsonl").write_text(
        json.dumps({"id": "tab\there", "text": "oven recipe butter"})
        + "\n"
        + json.dumps({"text": "deploy server"})
        + "\n"
    )
    result = run(["predict", small_model, tmp_path / "t.jsonl"])
    assert result.exit_code == 0
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert rows[0][:2] == ["tab\\there", "food"]
    assert rows[1][:2] == [f"{tmp_path / 't.jsonl'}:2", "code"]
    stdin_table = run(
        ["predict", small_model, "-", "--input-format", "jsonl"], input=(tmp_path / "t.jsonl").read_text()
    )
    assert [r.split("\t")[1] for r in stdin_table.stdout.splitlines()] == ["food", "code"]


def test_empty_inputs(tmp_path, small_model):
    result = run(["predict", small_model, "-"], input="")
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr == (
        "nbcli: warning: skipping -: empty document\n"
        "nbcli: error: nothing to classify: - held no non-empty documents; check the input paths\n"
    )
    (tmp_path / "empty").mkdir()
    result = run(["predict", small_model, tmp_path / "empty", "-q"])
    assert result.exit_code == 1
    assert result.stderr == (
        f"nbcli: error: nothing to classify: {tmp_path / 'empty'} held no non-empty documents; check the input paths\n"
    )
    (tmp_path / "empty" / "a").write_text("")
    (tmp_path / "empty" / "b").write_text("oven")
    result = run(["predict", small_model, tmp_path / "empty"])
    assert result.exit_code == 0 and len(result.stdout.splitlines()) == 1
    assert result.stderr == f"nbcli: warning: skipping {tmp_path / 'empty' / 'a'}: empty document\n"


def test_bad_model_files_are_one_line_errors(tmp_path):
    (tmp_path / "doc").write_text("hello")
    (tmp_path / "text.nb").write_text("not a model")
    for model, message in [
        (
            tmp_path / "missing.nb",
            (
                f"nbcli: error: {tmp_path / 'missing.nb'}: no such model file; train one with 'nbcli train CORPUS -o "
                "MODEL'"
            ),
        ),
        (
            tmp_path / "text.nb",
            f"nbcli: error: {tmp_path / 'text.nb'} is not an nbcli model file; give a file written by 'nbcli train'",
        ),
    ]:
        result = run(["predict", model, tmp_path / "doc"])
        assert result.exit_code == 1 and result.stdout == ""
        assert result.stderr == message + "\n"
    result = run(["predict", tmp_path / "text.nb", tmp_path / "nope"])
    assert result.exit_code == 1


def test_missing_input_path(tmp_path, small_model):
    result = run(["predict", small_model, tmp_path / "nope"])
    assert result.exit_code == 1
    assert result.stderr == f"nbcli: error: {tmp_path / 'nope'}: no such file or folder; check the path\n"


def test_a_real_process_prints_results_only_and_no_traceback(tmp_path, small_model):
    proc = run_process(["predict", small_model, "-"], input=b"\xff\xfe\x00 garbage bytes \x80")
    assert proc.returncode == 0
    assert proc.stdout.decode().count("\n") == 1 and proc.stderr == b""
    proc = run_process(["predict", tmp_path / "missing.nb", "-"], input=b"x")
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr and proc.stderr.count(b"\n") == 1


def test_results_stream_before_the_input_ends(small_model):
    """The first result comes out while stdin is still open."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "nbcli", "predict", str(small_model), "-", "--input-format", "jsonl"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        proc.stdin.write(b'{"text": "oven recipe"}\n')
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        assert ready, "no result before the end of input"
        first = proc.stdout.readline()
        assert first.split(b"\t")[1] == b"food"
        assert proc.poll() is None  # still running: stdin is open
        proc.stdin.write(b'{"text": "python compile"}\n')
        proc.stdin.close()
        rest = proc.stdout.read()
        assert rest.split(b"\t")[1] == b"code"
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()


def test_closed_stdout_is_quiet(tmp_path, small_model):
    texts, _ = make_docs(3000, seed=5, classes=["code", "food"])
    (tmp_path / "many.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    proc = subprocess.run(
        f"{sys.executable} -m nbcli predict {small_model} {tmp_path / 'many.jsonl'} | head -n 1",
        shell=True,
        capture_output=True,
        timeout=120,
    )
    assert proc.stdout.count(b"\n") == 1
    assert proc.stderr == b""


def test_no_input_on_a_terminal_is_a_usage_error(small_model):
    import pty

    pid, fd = pty.fork()
    if pid == 0:  # child: stdin is a terminal
        os.execv(sys.executable, [sys.executable, "-m", "nbcli", "predict", str(small_model)])
    out = b""
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 2
    assert b"no INPUT given and stdin is a terminal" in out


def test_json_is_strict_where_a_class_is_ruled_out(tmp_path):
    """A table model with --alpha 0 rules a class out (p = 0): its log p is
    null, not the -Infinity that jq and strict parsers refuse, and eval
    --predictions reads the line back as probability 0."""
    model = tmp_path / "tennis.nb"
    features = ["--features", "all", "--label-field", "PlayTennis", "--id-field", "Day", "--alpha", "0"]
    assert run(["train", SAMPLES / "playtennis.csv", *features, "-o", model, "-q"]).exit_code == 0
    rows = "Day,Outlook,Temperature,Humidity,Wind\nNo/x,Overcast,Cool,High,Strong\n"
    result = run(["predict", model, "-", "--input-format", "csv", "--json"], input=rows)
    assert result.exit_code == 0, result.stderr

    def refuse(constant):
        raise ValueError(f"not strict JSON: {constant}")

    line = json.loads(result.stdout, parse_constant=refuse)
    assert line["probabilities"]["No"] == 0.0 and line["log_probabilities"]["No"] is None
    assert line["label"] == "Yes" and line["log_probabilities"]["Yes"] == 0.0
    (tmp_path / "p.jsonl").write_text(result.stdout)
    said = run(["eval", "--predictions", tmp_path / "p.jsonl", "--json"])
    assert said.exit_code == 0, said.stderr
    assert json.loads(said.stdout)["accuracy"] == 0.0  # its id's folder says No; the model said Yes

"""Conventions every command keeps: help, version, stdout/stderr, start-up."""

import os
import platform
import pty
import re
import subprocess
import sys

import pytest

from nbcli import __version__
from nbcli.cli.main import cli

from conftest import SAMPLES, make_docs, run, run_process


def test_version():
    """One line: the version, the model format (the one the model files
    carry), the Python version; the same from `python -m nbcli`; no numpy."""
    from nbcli.store.modelfile import FORMAT_VERSION

    line = f"nbcli {__version__} (model format {FORMAT_VERSION}, Python {platform.python_version()})\n"
    result = run(["--version"])
    assert result.exit_code == 0 and result.stdout == line and result.stderr == ""
    proc = run_process(["--version"])
    assert proc.returncode == 0 and proc.stdout.decode() == line
    assert line.split()[1] == __version__ and re.fullmatch(r"nbcli \S+ \(model format \d+, Python [^)]+\)\n", line)
    code = (
        "import sys; sys.argv = ['nbcli', '--version']\n"
        "from nbcli.cli.main import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('HEAVY', sorted(m for m in sys.modules if m.split('.')[0] == 'numpy'), file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.stdout == line and "HEAVY []" in proc.stderr


@pytest.mark.parametrize("command", sorted(cli.commands))
def test_every_command_has_help_with_an_example(command):
    result = run([command, "--help"])
    assert result.exit_code == 0
    assert "Example:" in result.stdout and f"nbcli {command}" in result.stdout


def test_help_does_not_import_numpy():
    code = (
        "import sys; sys.argv = ['nbcli', '--help']\n"
        "from nbcli.cli.main import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'scipy', 'joblib', 'rich'))\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "HEAVY []" in proc.stderr


def test_predict_does_not_import_scipy_joblib_or_rich(small_model, tmp_path):
    (tmp_path / "doc").write_text("oven recipe")
    code = (
        f"import sys; sys.argv = ['nbcli', 'predict', {str(small_model)!r}, {str(tmp_path / 'doc')!r}]\n"
        "from nbcli.cli.main import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('scipy', 'joblib', 'rich'))\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "HEAVY []" in proc.stderr and proc.stdout.count("\t") == 2


def _on_a_terminal(args):
    """(the process, what it wrote to stderr) for `python -m nbcli ARGS` with
    stderr a terminal (a pty)."""
    master, slave = pty.openpty()
    proc = subprocess.run(
        [sys.executable, "-m", "nbcli", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=slave,
        timeout=120,
    )
    os.close(slave)
    seen = b""
    try:
        while True:
            chunk = os.read(master, 65536)
            if not chunk:
                break
            seen += chunk
    except OSError:
        pass
    os.close(master)
    return proc, seen


def test_progress_bars_only_when_stderr_is_a_terminal(tmp_path, make_class_folders):
    texts, labels = make_docs(3000, seed=3, classes=["code", "food"])
    corpus = make_class_folders(texts, labels)
    proc, seen = _on_a_terminal(["train", corpus, "-o", tmp_path / "m.nb"])
    assert proc.returncode == 0 and proc.stdout == b""
    assert b"training" in seen and b"wrote" in seen  # the bar and the summary went to the terminal
    quiet = run_process(["train", corpus, "-o", tmp_path / "m2.nb"])
    assert quiet.stdout == b"" and b"training" not in quiet.stderr  # not a terminal: no bar


def test_the_training_bar_names_its_calibration_phase(tmp_path):
    """After the counting pass the bar said 525/525 "training" while the
    cross-validation models were built: it now says what runs, from 0."""
    proc, seen = _on_a_terminal(["train", SAMPLES / "mail" / "train", "-o", tmp_path / "m.nb"])
    assert proc.returncode == 0
    assert b"calibrating (525 held-out documents, 5 models)" in seen


def test_unexpected_errors_are_one_line_without_traceback(tmp_path, monkeypatch, small_model):
    from nbcli.nb import classifier

    def boom(self, docs, kinds=None, explain=0):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(classifier.Classifier, "score", boom)
    result = run(["predict", small_model, "-"], input="x")
    assert result.exit_code == 1
    assert (
        result.stderr
        == "nbcli: internal error: RuntimeError: simulated bug (please report it; NBCLI_DEBUG=1 shows the traceback)\n"
    )


def test_python_dash_m():
    proc = run_process(["--help"])
    assert proc.returncode == 0 and b"Usage: nbcli" in proc.stdout

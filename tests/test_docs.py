"""The generated docs are fresh and real (tools/reference.py): the command
reference shows what `nbcli CMD --help` prints, the man page renders
without a warning, and shell completion works through the installed `nbcli`.

groff and man come from Debian's groff-base and man-db; when missing they
are installed with apt-get if this runs as root (as CI does), else the man
page's rendering tests are skipped with the reason.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, debian_tool

sys.path.insert(0, str(REPO / "tools"))
import reference  # noqa: E402

BIN = Path(sys.executable).parent
NBCLI = BIN / "nbcli"


def run(args, env=None, **kwargs):
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", **(env or {})}
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=120, **kwargs)


def test_reference_and_man_page_are_what_the_generator_writes_now():
    diffs = reference.stale()
    assert not diffs, "docs/reference.md or docs/man/nbcli.1 is stale: run `make docs`\n" + "".join(diffs)[:4000]


def test_a_changed_help_text_makes_both_files_stale(monkeypatch):
    from nbcli.cli.main import cli

    info = cli.commands["info"]
    monkeypatch.setattr(info, "help", info.help + "\n\nA sentence that is not in the docs.")
    stale = reference.stale()
    assert len(stale) == 2 and all("A sentence that is not in the docs." in diff for diff in stale)
    assert "docs/reference.md" in stale[0] and "docs/man/nbcli.1" in stale[1]


def test_check_exits_0_when_fresh_and_1_with_a_diff_when_stale(tmp_path, monkeypatch, capsys):
    assert run([sys.executable, REPO / "tools" / "reference.py", "--check"]).returncode == 0
    copy = tmp_path / "nbcli.1"
    copy.write_text(reference.MANPAGE.read_text(encoding="utf-8").replace("SEE ALSO", "SEE TOO"), encoding="utf-8")
    monkeypatch.setattr(reference, "MANPAGE", copy)
    diffs = reference.stale()
    assert len(diffs) == 1 and "-.SH SEE TOO\n+.SH SEE ALSO\n" in diffs[0]
    monkeypatch.setattr(sys, "argv", ["reference.py", "--check"])
    assert reference.main() == 1
    out, err = capsys.readouterr()
    assert out == diffs[0] and "run `make docs`" in err


def test_reference_shows_every_help_as_the_installed_nbcli_prints_it():
    text = reference.REFERENCE.read_text(encoding="utf-8")
    names = re.findall(r"(?m)^## nbcli ?(\S*)$", text)
    from nbcli.cli.main import cli

    assert names == ["", *sorted(cli.commands)]
    for name in names:
        proc = run([NBCLI, *([name] if name else []), "--help"], env={"COLUMNS": "100"})
        assert proc.returncode == 0, proc.stderr
        assert f"## nbcli {name}".rstrip() + "\n\n```text\n" + proc.stdout + "```\n" in text, name
        title = f"nbcli {name}".rstrip()
        assert f"- [`{title}`](#{reference.anchor(title)})" in text


def test_reference_documents_completion_for_each_shell():
    text = reference.REFERENCE.read_text(encoding="utf-8")
    for line in (
        'eval "$(_NBCLI_COMPLETE=bash_source nbcli)"',
        'eval "$(_NBCLI_COMPLETE=zsh_source nbcli)"',
        "_NBCLI_COMPLETE=fish_source nbcli | source",
    ):
        assert f"\n```sh\n{line}\n```\n" in text


def test_man_page_has_its_sections_every_command_and_the_environment_the_code_reads():
    page = reference.MANPAGE.read_text(encoding="utf-8")
    sections = re.findall(r"(?m)^\.SH (.+)$", page)
    assert sections == [
        "NAME",
        "SYNOPSIS",
        "DESCRIPTION",
        "OPTIONS",
        "COMMANDS",
        "EXIT STATUS",
        "ENVIRONMENT",
        "FILES",
        "SHELL COMPLETION",
        "SEE ALSO",
    ]
    from nbcli.cli.main import cli

    assert re.findall(r'(?m)^\.SS "nbcli (\S+)"$', page) == sorted(cli.commands)
    assert "\\fB\\-\\-spam\\-cutoff\\fR \\fIFLOAT\\fR \\fIRANGE\\fR" in page
    for ref in (".BR spamc (1),", ".BR spamd (1),", ".BR procmail (1),"):
        assert ref in page
    # no text line starts with a control character, and nothing outside ASCII
    assert page.isascii()
    environment = page.split(".SH ENVIRONMENT")[1].split(".SH FILES")[0]
    read = set()
    for path in (REPO / "nbcli").rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        if "environ" in source:
            read |= set(re.findall(r'"(NBCLI_[A-Z_]+)"', source))
    read |= {"NBCLI_CLUSTER_TIMEOUT"}  # named in dask_executor as TIMEOUT_VARIABLE
    assert {"NBCLI_DEBUG", "NBCLI_CLUSTER_TIMEOUT"} <= read
    for name in read | {"XDG_RUNTIME_DIR", "SOURCE_DATE_EPOCH", "_NBCLI_COMPLETE"}:
        assert f"\\fB{name}\\fR" in environment, name
    exits = page.split(".SH EXIT STATUS")[1].split(".SH ENVIRONMENT")[0]
    assert [m for m in re.findall(r"(?m)^\\fB(\d+)\\fR$", exits)] == ["0", "1", "2", "130", "141"]


def roff_tools() -> None:
    """groff and man on PATH, installed from Debian if missing and allowed."""
    debian_tool("groff-base man-db", "groff", "man")


def test_man_page_renders_with_groff_without_warnings():
    roff_tools()
    proc = run(["groff", "-man", "-Tutf8", "-ww", "-z", reference.MANPAGE])
    assert proc.returncode == 0 and proc.stderr == ""


def test_man_l_renders_the_page_without_warnings():
    roff_tools()
    proc = run(["man", "-l", reference.MANPAGE], env={"MANWIDTH": "100", "MAN_KEEP_FORMATTING": ""})
    assert proc.returncode == 0 and proc.stderr == ""
    text = re.sub(r".\x08", "", proc.stdout)  # no overstrike when piped, but be sure
    assert text.startswith("NBCLI(1)") and "\nNAME\n       nbcli - a Naive Bayes text and spam classifier" in text
    assert "--spam-cutoff FLOAT RANGE" in text and "spamc(1), spamd(1), procmail(1)" in text
    assert "           #   :0 fw\n" in text  # a verbatim example keeps its lines


# -- shell completion through the installed entry point ------------------------------


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_source_for_each_shell(shell):
    proc = run([NBCLI], env={"_NBCLI_COMPLETE": f"{shell}_source"})
    assert proc.returncode == 0 and proc.stderr == ""
    assert "_nbcli_completion" in proc.stdout and f"_NBCLI_COMPLETE={shell}_complete" in proc.stdout


@pytest.mark.parametrize(
    ("shell", "words", "cword", "expected"),
    [
        ("bash", "nbcli tr", "1", "plain,train\n"),
        ("zsh", "nbcli tr", "1", "plain\ntrain\nTrain a model on labelled documents.\n"),
        ("fish", "nbcli tr", "tr", "plain,train\tTrain a model on labelled documents.\n"),
        ("bash", "nbcli filter --spam-c", "2", "plain,--spam-cutoff\nplain,--spam-class\n"),
        ("bash", "nbcli train --model ", "3", "plain,multinomial\nplain,bernoulli\nplain,complement\n"),
    ],
)
def test_completion_completes(shell, words, cword, expected):
    env = {"_NBCLI_COMPLETE": f"{shell}_complete", "COMP_WORDS": words, "COMP_CWORD": cword}
    proc = run([NBCLI], env=env)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, expected, "")


def test_completion_in_a_real_bash():
    script = 'eval "$(_NBCLI_COMPLETE=bash_source nbcli)"; complete -p nbcli; '
    script += 'COMP_WORDS=(nbcli filter --spam-c); COMP_CWORD=2; _nbcli_completion nbcli; echo "${COMPREPLY[*]}"'
    proc = run(["bash", "-c", script])
    assert proc.stdout == "complete -o nosort -F _nbcli_completion nbcli\n--spam-cutoff --spam-class\n", proc.stderr


def test_completion_imports_no_numpy():
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'numpy', 'scipy', 'joblib', 'rich'}), file=sys.stderr))\n"
        "from nbcli.cli.main import main\n"
        "main()\n"
    )
    env = {"_NBCLI_COMPLETE": "bash_complete", "COMP_WORDS": "nbcli train --mo", "COMP_CWORD": "2"}
    proc = run([sys.executable, "-c", code], env=env)
    assert (proc.stdout, proc.stderr) == ("plain,--model\n", "[]\n")


def test_completion_in_a_real_fish(tmp_path):
    (fish,) = debian_tool("fish", "fish")  # installed where it can be (CI), else skipped with the reason
    script = '_NBCLI_COMPLETE=fish_source nbcli | source; complete -C "nbcli tr"; complete -C "nbcli filter --spam-c"'
    proc = run([fish, "--no-config", "-c", script], env={"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)})
    assert proc.stdout == (
        "train\tTrain a model on labelled documents.\n"
        "--spam-class\tThe spam class of a two-class model.\n"
        "--spam-cutoff\tP(spam) at or above this is spam.\n"
    ), proc.stderr


def test_completion_registers_in_a_real_zsh(tmp_path):
    """zsh runs completion functions only inside its line editor; here the
    script loads after compinit and registers its function for nbcli (what
    the function asks nbcli is test_completion_completes' zsh case)."""
    (zsh,) = debian_tool("zsh", "zsh")
    script = 'autoload -Uz compinit && compinit -u -D; eval "$(_NBCLI_COMPLETE=zsh_source nbcli)"; '
    script += "print -r -- $_comps[nbcli]; whence -w _nbcli_completion"
    proc = run([zsh, "-f", "-c", script], env={"HOME": str(tmp_path), "ZDOTDIR": str(tmp_path)})
    assert (proc.stdout, proc.stderr) == ("_nbcli_completion\n_nbcli_completion: function\n", "")

"""The command reference and the man page, generated from the click commands.

    python tools/reference.py           # write docs/reference.md and docs/man/nbcli.1
    python tools/reference.py --check   # exit 1 and show a diff if either is stale

`make docs` runs the first; tests/test_docs.py fails when a --help text
changed and these files were not regenerated.

Both come from the one source, the click group `nbcli.cli.main.cli`: every
command click lists (alphabetically, as `nbcli --help` does), hidden ones
left out. Decisions:

- docs/reference.md shows each `--help` byte for byte as `nbcli CMD --help`
  prints it in a terminal 100 columns wide (click's own formatter, given a
  fixed terminal_width and max_content_width of 100, the width the group's
  context already caps help at), so the file does not depend on the terminal
  of whoever runs the generator. Its header says how to set up shell
  completion (click's `_NBCLI_COMPLETE=SHELL_source`), the one place it is
  documented.
- docs/man/nbcli.1 is one page for all commands (as git(1) was before it
  split): NAME, SYNOPSIS, DESCRIPTION (the group's help), OPTIONS, COMMANDS
  (each command's usage, its help and its options as .TP entries, from the
  same click objects, so the option texts, defaults and ranges are those of
  --help), EXIT STATUS, ENVIRONMENT, FILES, SEE ALSO. The roff is written
  here, not by a library: backslashes become \\e, a leading '.' or "'" gets
  \\&, '-' becomes \\- (a minus, so options can be searched and copied), and
  characters outside ASCII become \\[uXXXX], so the page reads the same under
  groff with or without preconv. It carries no date (the page would go stale
  every day); the version is in its footer.
- The hand-written sections (exit status, environment, files) say what
  nbcli/cli/main.py, the README's "Exit codes" and the modules reading the
  environment say; tests/test_docs.py checks that every NBCLI_ variable the
  code reads is listed.
- The man page is installed with the wheel as share/man/man1/nbcli.1
  (pyproject's data-files), where man finds it beside the nbcli command of a
  virtual environment or a --user install; `make dist-check` checks it.
"""

from __future__ import annotations

import argparse
import difflib
import inspect
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REFERENCE = REPO / "docs" / "reference.md"
MANPAGE = REPO / "docs" / "man" / "nbcli.1"
WIDTH = 100

COMPLETION = [
    ("bash", "~/.bashrc", 'eval "$(_NBCLI_COMPLETE=bash_source nbcli)"'),
    ("zsh", "~/.zshrc, after `autoload -Uz compinit && compinit`", 'eval "$(_NBCLI_COMPLETE=zsh_source nbcli)"'),
    ("fish", "~/.config/fish/completions/nbcli.fish", "_NBCLI_COMPLETE=fish_source nbcli | source"),
]

EXIT_STATUS = [
    ("0", "Success."),
    (
        "1",
        "An error: a bad path, an empty corpus, only one class, a bad model file, nothing to classify, an input "
        "that could not be read (the command still finishes with the rest), a broken --fail-under/--fail-over "
        "limit of eval. One line 'nbcli: error: WHAT; HOW TO FIX' on standard error, never a traceback.",
    ),
    ("2", "A usage error: an unknown option, a bad option value, a missing argument."),
    ("130", "Interrupted (Ctrl-C)."),
    ("141", "Standard output was closed early (nbcli predict ... | head): nbcli stops quietly, as SIGPIPE would."),
]
EXIT_FILTER = (
    "nbcli filter exits 1 when any message could not be classified (it still passes through); with --exit-codes "
    "it uses bogofilter's codes instead: 0 spam, 1 ham, 2 unsure, 3 error."
)

ENVIRONMENT = [
    ("NBCLI_DEBUG", "Set (to anything), an internal error shows its Python traceback instead of one line."),
    (
        "NBCLI_IMAP_PASSWORD",
        "The password nbcli imap logs in with when no --password-file is given (never given on the command line).",
    ),
    (
        "NBCLI_CLUSTER_TIMEOUT",
        "Seconds to wait for a Dask scheduler given by --cluster to answer (default 10).",
    ),
    (
        "XDG_RUNTIME_DIR",
        "nbcli serve's default Unix socket is $XDG_RUNTIME_DIR/nbcli/spamd.sock (else /tmp/nbcli-UID/spamd.sock).",
    ),
    (
        "SOURCE_DATE_EPOCH",
        "The date, in seconds since 1970, given to documents without one (else now), so two trainings of the "
        "same corpus write the same model.",
    ),
    ("COLUMNS", "The width of --help texts (at most 100 columns)."),
    ("_NBCLI_COMPLETE", "Shell completion (see SHELL COMPLETION): bash_source, zsh_source or fish_source."),
    (
        "OPENBLAS_NUM_THREADS, OMP_NUM_THREADS, MKL_NUM_THREADS",
        "nbcli sets each to 1 unless set: it works in processes (--jobs), not BLAS threads.",
    ),
]

FILES = [
    (
        "*.nb",
        "A model file: written by train, cluster, merge and load; learn, forget, prune and calibrate replace it "
        "atomically (prune and calibrate write -o instead if given); read by the other commands.",
    ),
    (
        "$XDG_RUNTIME_DIR/nbcli/spamd.sock, /tmp/nbcli-UID/spamd.sock",
        "nbcli serve's default Unix socket; its folder is private (mode 0700).",
    ),
    ("$HOME/.nbcli/mail.nb", "Where the procmail examples keep a user's mail model (a convention only)."),
]

SEE_ALSO = ["spamc(1)", "spamd(1)", "procmail(1)", "procmailrc(5)", "bogofilter(1)"]


# -- the click side -----------------------------------------------------------------


def commands():
    """(group context, [(name, command, context)...]) with click's order."""
    import click

    from nbcli.cli.main import cli

    def context(cmd, name, parent=None):
        # click wraps at min(terminal columns, max_content_width) - 2 when it
        # asks the terminal, and at terminal_width itself when given one
        settings = {**cmd.context_settings, "terminal_width": WIDTH - 2, "max_content_width": WIDTH}
        return click.Context(cmd, info_name=name, parent=parent, **settings)

    top = context(cli, "nbcli")
    listed = []
    for name in cli.list_commands(top):
        cmd = cli.get_command(top, name)
        if cmd is not None and not cmd.hidden:
            listed.append((name, cmd, context(cmd, name, top)))
    return top, listed


def help_paragraphs(cmd) -> list[tuple[bool, str]]:
    """A command's help as click shows it: (verbatim, text) paragraphs; a
    paragraph that starts with \\b is kept line for line."""
    text = inspect.cleandoc(cmd.help or "").partition("\f")[0]
    out = []
    for para in re.split(r"\n\s*\n", text):
        if para.startswith("\b\n"):
            out.append((True, para[2:]))
        elif para.strip():
            out.append((False, " ".join(line.strip() for line in para.splitlines())))
    return out


def usage(cmd, ctx) -> str:
    return " ".join(cmd.collect_usage_pieces(ctx))


# -- docs/reference.md --------------------------------------------------------------


def anchor(title: str) -> str:
    """The id GitHub gives a heading."""
    return re.sub(r"[^a-z0-9 _-]", "", title.lower()).replace(" ", "-")


def reference() -> str:
    top, listed = commands()
    sections = [("nbcli", top.command, top)] + [(f"nbcli {name}", cmd, ctx) for name, cmd, ctx in listed]
    lines = [
        "<!-- Generated by tools/reference.py from nbcli's click commands. Do not edit: run `make docs`. -->",
        "",
        "# Command reference",
        "",
        f"Every command's `--help`, exactly as `nbcli COMMAND --help` prints it in a terminal {WIDTH} columns",
        "wide or wider. The same text, as a man page: [`docs/man/nbcli.1`](man/nbcli.1)",
        "(`man -l docs/man/nbcli.1`; installed with the package, so `man nbcli` finds it beside the `nbcli`",
        "command). Both are generated from the click commands by `make docs` (tools/reference.py); the test",
        "suite fails when either is stale. `make readme` does the same for the README's examples.",
        "",
        "## Contents",
        "",
    ]
    for title, cmd, _ctx in sections:
        lines.append(f"- [`{title}`](#{anchor(title)}): {cmd.get_short_help_str(limit=WIDTH)}")
    lines += [
        "- [Shell completion](#shell-completion)",
        "",
        "## Shell completion",
        "",
        "nbcli completes its commands, options and choices in bash (4.4 or newer), zsh and fish. Add one line",
        "to your shell's start-up file:",
        "",
    ]
    for shell, where, line in COMPLETION:
        lines += [f"{shell}, in {where}:", "", "```sh", line, "```", ""]
    lines += [
        "Each line runs nbcli once when the shell starts (fish: at the first completion), about a tenth of a",
        "second; a completion imports click and nbcli's command line only, never numpy. To start faster,",
        "write the script to a file once and source that instead, e.g.",
        "`_NBCLI_COMPLETE=bash_source nbcli > ~/.nbcli-complete.bash` and `. ~/.nbcli-complete.bash` in",
        "~/.bashrc; write it again after upgrading nbcli.",
        "",
    ]
    for title, cmd, ctx in sections:
        lines += [f"## {title}", "", "```text", cmd.get_help(ctx), "```", ""]
    return "\n".join(lines)


# -- docs/man/nbcli.1 ---------------------------------------------------------------


def roff(text: str) -> str:
    """Text for a roff text line (or lines): escapes, and no control
    character at the start of a line."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    text = "".join(ch if ord(ch) < 128 else f"\\[u{ord(ch):04X}]" for ch in text)
    return "\n".join("\\&" + line if line.startswith((".", "'")) else line for line in text.split("\n"))


def option_tag(record: str) -> str:
    """'-o, --output PATH' as \\fB-o\\fR, \\fB--output\\fR \\fIPATH\\fR."""
    words = []
    for word in record.split(" "):
        comma = "," if word.endswith(",") else ""
        word = word.removesuffix(",")
        if word.startswith("-"):
            words.append(f"\\fB{roff(word)}\\fR{comma}")
        elif word in ("/", ""):
            words.append(word + comma)
        else:
            words.append(f"\\fI{roff(word)}\\fR{comma}")
    return roff_line(" ".join(words))


def roff_line(line: str) -> str:
    return "\\&" + line if line.startswith((".", "'")) else line


def paragraphs(cmd) -> list[str]:
    out = []
    for verbatim, text in help_paragraphs(cmd):
        if verbatim:
            out += [".PP", ".nf", ".RS 2", roff(text), ".RE", ".fi"]
        else:
            out += [".PP", roff(text)]
    return out


def options(cmd, ctx) -> list[str]:
    import click

    out = []
    for param in cmd.get_params(ctx):
        record = param.get_help_record(ctx)
        if record is None or not isinstance(param, click.Option):  # --help lists no arguments
            continue
        tag, text = record
        out += [".TP", option_tag(tag), roff(text) if text else "\\&"]
    return out


def definitions(items) -> list[str]:
    out = []
    for term, text in items:
        out += [".TP", f"\\fB{roff(term)}\\fR", roff(text)]
    return out


def manpage() -> str:
    from nbcli import __version__

    top, listed = commands()
    group_help = help_paragraphs(top.command)
    name_line = group_help[0][1].removeprefix("nbcli: ").rstrip(".")
    lines = [
        ".\\\" Generated by tools/reference.py from nbcli's click commands. Do not edit: run `make docs`.",
        f'.TH NBCLI 1 "" "nbcli {__version__}" "User Commands"',
        ".SH NAME",
        f"nbcli \\- {roff(name_line)}",
        ".SH SYNOPSIS",
        ".nf",
        f"\\fBnbcli\\fR {roff(usage(top.command, top))}",
    ]
    lines += [f"\\fBnbcli {name}\\fR {roff(usage(cmd, ctx))}" for name, cmd, ctx in listed]
    lines += [".fi", ".SH DESCRIPTION"]
    group = paragraphs(top.command)
    lines += group[2:]  # the first paragraph is the NAME line
    lines += [".SH OPTIONS", *options(top.command, top), ".SH COMMANDS"]
    for name, cmd, ctx in listed:
        lines += [f'.SS "nbcli {name}"', f"\\fBnbcli {name}\\fR {roff(usage(cmd, ctx))}", *paragraphs(cmd)]
        lines += [".PP", "Options:", *options(cmd, ctx)]
    lines += [".SH EXIT STATUS", *definitions(EXIT_STATUS), ".PP", roff(EXIT_FILTER)]
    lines += [".SH ENVIRONMENT", *definitions(ENVIRONMENT)]
    lines += [".SH FILES", *definitions(FILES)]
    lines += [".SH SHELL COMPLETION", "Add one line to the shell's start\\-up file:"]
    lines += definitions((f"{shell} ({where.replace('`', '')})", line) for shell, where, line in COMPLETION)
    refs = [re.fullmatch(r"(.+)\((\d)\)", ref).groups() for ref in SEE_ALSO]
    commas = [","] * (len(refs) - 1) + [""]
    lines += [".SH SEE ALSO"] + [f".BR {page} ({section}){comma}" for (page, section), comma in zip(refs, commas)]
    lines += [".PP", "The user guide and the command reference: docs/ in nbcli's source."]
    return "\n".join(lines) + "\n"


# -- writing and checking -----------------------------------------------------------


def generated() -> dict[Path, str]:
    return {REFERENCE: reference(), MANPAGE: manpage()}


def stale() -> list[str]:
    """A unified diff per file that differs from what would be written now."""
    diffs = []
    for path, text in generated().items():
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current != text:
            name = path.relative_to(REPO).as_posix() if path.is_relative_to(REPO) else str(path)
            diff = difflib.unified_diff(current.splitlines(True), text.splitlines(True), name, f"{name} (now)")
            diffs.append("".join(diff))
    return diffs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 and show a diff if a file is stale")
    check = parser.parse_args().check
    sys.path.insert(0, str(REPO))
    if check:
        diffs = stale()
        sys.stdout.writelines(diffs)
        if diffs:
            print("tools/reference.py: stale; run `make docs`", file=sys.stderr)
        return 1 if diffs else 0
    for path, text in generated().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"tools/reference.py: wrote {path.relative_to(REPO)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Output paths that would destroy an input.

`nbcli train corpus.jsonl -o corpus.jsonl` used to replace the corpus with
the model, and `-o` inside a class folder put the model into the corpus it
was trained on. Every command that writes a file checks its output against
its inputs here, before anything is read, and refuses with one line:

- an output that is an input, by name or through links (symbolic: the real
  paths are compared; hard: the device and inode are);
- an output inside an input folder;
- for `filter --split DIR`: DIR being, or lying inside, an input folder, or
  an input being an mbox directly in DIR (filter appends to DIR/<verdict>.mbox).

`-` (standard input) is never a path.
"""

from __future__ import annotations

import os

from nbcli.errors import NbcliError


def _real(path: str) -> str:
    return os.path.realpath(os.path.expanduser(path))


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def same_file(a: str, b: str) -> bool:
    """Whether paths a and b name the same file (through links too); False if either cannot be read."""
    try:
        sa, sb = os.stat(a), os.stat(b)
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def _real_inputs(inputs):
    """(as given, real path, is a folder) of each input that is a path."""
    for given in inputs:
        if given and given != "-":
            real = _real(given)
            yield given, real, os.path.isdir(real)


def check_output(output: str, inputs, option: str = "-o") -> None:
    """Refuse `output` (a file to be written) if it is one of `inputs` or
    lies inside one of them (see the module docstring)."""
    from nbcli.store.integrity import special_kind

    kind = special_kind(output)
    if kind is not None:  # writing renames a new file over it: over /dev/null, for every program
        raise NbcliError(f"{option} {output} is {kind}, not a file", hint="give a file name to write")
    if _is_journal(output):  # written over, the updates learned since the model's last compaction are lost
        raise NbcliError(
            f"{option} {output} is a model's journal (the updates learned into the model beside it)",
            hint="give another output path",
        )
    out = _real(output)
    for given, real, folder in _real_inputs(inputs):
        if folder and _inside(out, real):
            raise NbcliError(
                f"{option} {output} lies inside the input folder {given}",
                hint="write it somewhere outside the inputs, or it would be read back as a document",
            )
        if not folder and (out == real or same_file(output, given)):
            raise NbcliError(
                f"{option} {output} is the input {given}; writing it would destroy the input",
                hint="give another output path",
            )


def _is_journal(path: str) -> bool:
    """Whether `path` is a model's journal (`store.journal`), by its first bytes."""
    from nbcli.store import journal

    try:
        with open(path, "rb", opener=lambda p, flags: os.open(p, flags | os.O_NONBLOCK)) as fh:
            return os.path.isfile(path) and journal.is_header(fh.read(32))
    except OSError:
        return False


def check_split_folder(folder: str, inputs) -> None:
    """Refuse a `filter --split` folder that would write into an input: the
    folder is (or lies inside) an input folder, or an input is an mbox
    directly in it (filter appends to DIR/<verdict>.mbox)."""
    out = _real(folder)
    for given, real, is_folder in _real_inputs(inputs):
        if is_folder and _inside(out, real):
            raise NbcliError(
                f"--split {folder} lies inside the input folder {given}", hint="sort into a folder outside the inputs"
            )
        if not is_folder and os.path.dirname(real) == out and real.endswith(".mbox"):
            raise NbcliError(f"--split {folder} could append to the input {given}", hint="sort into another folder")

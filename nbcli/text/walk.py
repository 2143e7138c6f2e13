"""Which files a folder gives, and how skipped inputs are reported.

Walking a folder (for `predict`, `train`, `eval`, `filter`) lists only
what can be read safely: regular files and links to them, following linked
folders once; anything else is a warning saying why it was skipped.
The warnings' types (`Skipped`, `Unreadable`) are in `documents`, which
every reader imports; `InputReport` here turns them into the exit status.
"""

from __future__ import annotations

import os
import stat

from nbcli.errors import NbcliError, ParameterError
from nbcli.text.documents import Skipped, Unreadable, Warn, _no_warn


class InputReport:
    """ReadOptions.warn for the CLI: passes warnings on, counts the inputs
    that could not be read (`check` turns them into the exit status at the
    end of a command) and, with `strict`, stops at the first skipped one."""

    def __init__(self, warn: Warn, strict: bool = False):
        self._warn = warn
        self.strict = strict
        self.unreadable = 0
        self.first: str | None = None

    def __call__(self, message: str) -> None:
        if self.strict and isinstance(message, Skipped):
            raise ParameterError(
                "strict", "{input}", hint="{strict} makes every skipped input an error", input=message.as_error()
            )
        if isinstance(message, Unreadable):
            self.unreadable += 1
            self.first = self.first or message.as_error()
        self._warn(str(message))

    def check(self) -> None:
        """An error if some input could not be read (after the command did
        what it could with the rest)."""
        if self.unreadable:
            more = f" (the first: {self.first})" if self.unreadable > 1 else f": {self.first}"
            raise NbcliError(
                f"{self.unreadable} input(s) could not be read{more}",
                hint="the results are for the other inputs",
            )


# -- walking folders ------------------------------------------------------------


def _is_hidden(name: str) -> bool:
    return name.startswith(".")


def list_files(root: str, warn: Warn = _no_warn) -> list[str]:
    """Regular, non-hidden files below `root` (and links to them), sorted.

    Links to folders are followed, each real folder read once (by device
    and inode), which also ends loops. Everything else is left out with a
    warning (see "skipped inputs" above): a folder that cannot be listed
    or a dangling link (Unreadable), a FIFO, device or socket (reading one
    could block forever), or a folder reached a second time (Skipped).
    Hidden files and folders are left out silently. Iterative, so a deep
    tree cannot exhaust the recursion limit."""
    found: list[str] = []
    try:
        top = os.stat(root)
    except OSError as exc:
        warn(Unreadable(f"skipping the folder {root}: {exc.strerror}"))
        return found
    seen = {(top.st_dev, top.st_ino): root}
    stack = [root]
    while stack:
        folder = stack.pop()
        files, folders = _folder_entries(folder, warn)
        found += files
        for path, st in reversed(folders):
            key = (st.st_dev, st.st_ino)
            if key in seen:
                warn(Skipped(f"skipping {path}: the same folder as {seen[key]} (a link), which is read once"))
                continue
            seen[key] = path
            stack.append(path)
    found.sort()
    return found


def _folder_entries(folder: str, warn: Warn) -> tuple[list[str], list[tuple[str, os.stat_result]]]:
    """The regular files (or links to them) and the folders (or links to
    them, with their stat) directly in `folder`, hidden ones left out;
    anything else is a warning. A plain file or folder costs no system
    call beyond the listing (the directory entry's type says what it is);
    links and odd types are stat'ed."""
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda e: e.name)
    except OSError as exc:
        warn(Unreadable(f"skipping the folder {folder}: {exc.strerror}"))
        return [], []
    files, folders = [], []
    for entry in entries:
        if _is_hidden(entry.name):
            continue
        try:
            if entry.is_file(follow_symlinks=False):
                files.append(entry.path)
                continue
            st = os.stat(entry.path)  # follows links
        except OSError as exc:
            warn(Unreadable(f"skipping {entry.path}: {exc.strerror}"))
            continue
        if stat.S_ISREG(st.st_mode):
            files.append(entry.path)
        elif stat.S_ISDIR(st.st_mode):
            folders.append((entry.path, st))
        else:
            warn(Skipped(f"skipping {entry.path}: {file_kind(st.st_mode)}, not a regular file"))
    return files, folders


def file_kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a folder"),
    ):
        if test(mode):
            return name
    return "an unusual file"


def is_maildir(path: str) -> bool:
    return os.path.isdir(os.path.join(path, "cur")) and os.path.isdir(os.path.join(path, "new"))


def maildir_files(path: str, warn: Warn = _no_warn) -> list[str]:
    """The messages of a Maildir: the non-hidden regular files (or links to
    them) in cur/ and new/; anything else there is a warning, as in
    `list_files`."""
    files = []
    for sub in ("cur", "new"):
        found, folders = _folder_entries(os.path.join(path, sub), warn)
        files += found
        for folder, _ in folders:
            warn(Skipped(f"skipping {folder}: a folder inside a Maildir's {sub}/"))
    return files

"""Raw messages for `nbcli filter`: INPUT (a file, `-`, a FIFO or device,
a folder or a Maildir) as a stream of whole messages, never cut short.

Unlike `sources`, which reads documents for the other commands (capped at
--max-doc-bytes, tables recognised), this hands the filter every message
byte for byte, as it must write them back out; each input file is an mbox
(it starts with a From_ line, see `mbox`) or one message.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable, Iterator

from nbcli.errors import NbcliError
from nbcli.text.documents import Skipped, Unreadable, Warn, _no_warn
from nbcli.text.mbox import mbox_entries, partial_reader, read_first_line, starts_mbox
from nbcli.text.walk import is_maildir, list_files, maildir_files


def read_messages(path: str, warn: Warn = _no_warn, flush: bool = False) -> Iterator[bytes | None]:
    """Raw messages for `nbcli filter`, never cut short: INPUT (a file, `-`,
    a FIFO or device, a folder or a Maildir) as a stream of messages, each
    input file being an mbox (it starts with a From_ line: its entries) or
    one message (an empty file: none).

    INPUT itself is checked and opened before this returns, so a missing or
    unreadable INPUT is an NbcliError naming it (before anything is read or
    written); a file in a folder that cannot be read is passed to `warn`
    and skipped. With `flush`, None is yielded whenever reading a pipe
    would block, after everything complete has been yielded (see
    `mbox_entries`)."""
    if path == "-":
        return _messages_in(sys.stdin.buffer, "standard input", flush)
    if not os.path.lexists(path):
        raise NbcliError(
            f"{path}: no such file or folder", hint="give a message, an mbox, a folder or a Maildir, or - for stdin"
        )
    if os.path.isdir(path):
        try:
            os.listdir(path)  # a folder that cannot be listed is INPUT's error, not a warning
        except OSError as exc:
            raise NbcliError(f"cannot read the folder {path}: {exc.strerror or exc}") from None
        files = maildir_files(path, warn) if is_maildir(path) else list_files(path, warn)
        return _messages_in_files(files, warn)
    try:
        fh = open(path, "rb", buffering=0)
    except OSError as exc:
        raise NbcliError(f"cannot read {path}: {exc.strerror or exc}") from None
    return _closing(_messages_in(fh, path, flush), fh)


def _closing(messages: Iterator[bytes | None], fh) -> Iterator[bytes | None]:
    try:
        yield from messages
    finally:
        fh.close()


def _messages_in_files(files: list[str], warn: Warn) -> Iterator[bytes | None]:
    """The messages of a folder's files, each file a message or an mbox. A
    file that cannot be read is an `Unreadable` warning; one that is no
    longer a regular file (opened without blocking, so a FIFO put there
    meanwhile cannot hang the filter) a `Skipped` one."""
    for name in files:
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK)
        except OSError as exc:
            warn(Unreadable(f"skipping {name}: {exc.strerror or exc}"))
            continue
        with open(fd, "rb", buffering=0) as fh:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                warn(Skipped(f"skipping {name}: not a regular file"))
                continue
            try:
                yield from _messages_in(fh, name, False)
            except NbcliError as exc:
                warn(Unreadable(f"skipping the rest of {name}: {exc.message}"))


def _messages_in(fh, name: str, flush: bool) -> Iterator[bytes | None]:
    """The messages of one stream: an mbox's entries, or all of it as one
    message (none if it is empty). A read error is an NbcliError naming
    the stream."""
    try:
        read = partial_reader(fh)
        idle = _would_block(fh) if flush else None
        head = read_first_line(read)
        if starts_mbox(head):
            yield from mbox_entries(read, head, idle)
            return
        chunks = [head]
        while chunks[-1]:
            chunks.append(read())
        if len(head):
            yield b"".join(chunks)
    except IsADirectoryError:
        raise NbcliError(f"cannot read {name}: it is a folder") from None
    except OSError as exc:
        raise NbcliError(f"cannot read {name}: {exc.strerror or exc}") from None


def _would_block(fh) -> Callable[[], bool] | None:
    """idle() for mbox_entries: whether reading `fh` now would wait (pipes,
    sockets, terminals; a regular file never does)."""
    import select

    try:
        fd = fh.fileno()
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return None
    except (OSError, ValueError, AttributeError):
        return None

    def idle() -> bool:
        try:
            return not select.select([fd], [], [], 0)[0]
        except (OSError, ValueError):
            return False

    return idle

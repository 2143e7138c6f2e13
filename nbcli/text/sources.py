"""Where documents come from: paths, `-`, folders, mailboxes and tables.

Everything here turns command-line arguments into a lazy stream of
`Document`s; nothing is tokenised here, and nothing holds a whole corpus in
memory (a folder's file names are listed up front; files, mailbox messages
and table rows are read one at a time).

Documents in a path (for `predict`, `filter`, and `--label CLASS=PATH`):
- a Maildir (a folder with cur/ and new/): one message per file in them;
- any other folder: the documents of every non-hidden regular file below
  it (links followed, each real folder once; see `walk`; `documents` says
  how skipped inputs are reported);
- a .tsv/.tab, .csv or .jsonl/.ndjson file: one document per row (the label
  field, if any, is kept for `eval`; the rows are read by `table_sources`);
- a file that starts with an mbox From_ line: one message per mbox entry
  (see `mbox` for the rule);
- any other file: one document (an email message if it looks like one);
- `-`: standard input, read as a file is, or as a table if it starts like
  one (see `_stdin_docs`) or --input-format says so; for a table model
  (`ReadOptions.rows`) always a table, its format sniffed (`table_sources`).
`--input-format` forces one reading: text, eml (one message per file), mbox,
maildir, tsv, csv or jsonl.

Corpus layouts (for `train` and `eval`): a folder with one sub-folder per
class, whose documents are read as above (so a class folder may hold .eml
files, mbox files or be a Maildir); `--label CLASS=PATH`; or a table (a
file or `-`) with text and label fields.

`nbcli filter` reads its messages whole, never cut at --max-doc-bytes,
through `raw_messages` instead.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import os
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from nbcli.defaults import DEFAULT_MAX_DOC_BYTES, TABLE_FORMATS
from nbcli.errors import NbcliError, ParameterError
from nbcli.text.decode import decode_bytes
from nbcli.text.documents import Document, Row, Skipped, Unreadable, Warn, _no_warn, batches
from nbcli.text.mbox import mbox_entries, partial_reader, read_first_line, starts_mbox
from nbcli.text.table_sources import stdin_table_format, table_docs
from nbcli.text.walk import _is_hidden, file_kind, is_maildir, list_files, maildir_files

# Document, Row and batches are offered here too, where documents come from.
__all__ = [
    "Corpus",
    "Document",
    "FileList",
    "ReadOptions",
    "Row",
    "batches",
    "documents_in",
    "labeled_corpus",
    "parse_label_pair",
]

_EXTENSIONS = {
    ".tsv": "tsv",
    ".tab": "tsv",
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
}


@dataclass
class ReadOptions:
    """How to read inputs (shared by train, predict, eval and filter)."""

    input_format: str = "auto"
    text_field: str | None = None
    label_field: str | None = None
    id_field: str | None = None
    header: bool = True
    max_doc_bytes: int = DEFAULT_MAX_DOC_BYTES
    warn: Warn = _no_warn
    # tables read as rows of fields (table models, `tables.py`): a document's
    # data is {field: cell text} for every field but the label and id fields
    rows: bool = False
    # an id field to use when a table has it (a table model's own, given no --id-field)
    soft_id_field: str | None = None
    # with rows: the fields a table must have (a table model's columns). A
    # TSV/CSV header without one of them is an error naming it (JSON lines may
    # lack a field in any record: that cell is missing); none of them is taken
    # for the label or id unless --label-field/--id-field names it
    need_fields: tuple[str, ...] = ()
    # relative paths are opened under this folder (a cluster worker reading
    # the client's files, `FileList.shippable`), and still named as given
    base_dir: str | None = None


class Corpus:
    """A lazy stream of documents; `total` is the number of input files if
    known (None when tables or stdin are involved)."""

    def __init__(self, parts: list[tuple[Callable[[], Iterator[Document]], int | None]]):
        self._parts = parts
        counts = [n for _, n in parts]
        self.total: int | None = None if None in counts else sum(n or 0 for n in counts)

    def __iter__(self) -> Iterator[Document]:
        for make, _ in self._parts:
            yield from make()

    def progress(self, batch: list[Document] | int) -> int:
        """How far a batch moves a progress bar: files if the total is known,
        else documents. An int is a number of whole files read elsewhere
        (see `file_lists`)."""
        if isinstance(batch, int):
            return batch
        return len(batch) if self.total is None else sum(d.first for d in batch)

    def file_lists(self) -> list[FileList] | None:
        """The corpus as lists of files, each file readable on its own (by
        `FileList.read`, in any process), or None if some part is not a
        list of files (a table, an mbox given as a path, stdin). This is
        what lets training workers read the files themselves."""
        lists = [make for make, _ in self._parts if isinstance(make, FileList)]
        return lists if len(lists) == len(self._parts) else None


class FileList:
    """A corpus part that is a list of files (a folder, a Maildir), held as
    data only (paths, the class, the read options, whether the files are a
    Maildir's messages), so that it can be shipped to a worker on another
    machine: called, it gives the files' documents; `read(i)` gives file
    i's documents, with its warnings going to `opts.warn` or, if given, to
    `warn` (a worker collects them to send back with its results)."""

    def __init__(self, files: list[str], label: str | None, opts: ReadOptions, maildir: bool = False):
        self.files = files
        self.label = label
        self.opts = opts
        self.maildir = maildir

    def __call__(self) -> Iterator[Document]:
        for path in self.files:
            yield from self._read(path, self.opts)

    def read(self, i: int, warn: Warn | None = None) -> Iterator[Document]:
        opts = self.opts if warn is None else dataclasses.replace(self.opts, warn=warn)
        return self._read(self.files[i], opts)

    def _read(self, path: str, opts: ReadOptions) -> Iterator[Document]:
        if self.maildir:  # a Maildir's files are messages, whatever their names
            return (Document(path, self.label, d.data, "mail") for d in _file_docs(path, "eml", None, opts, True))
        return _file_docs(path, _format_of(path, opts), self.label, opts, True)

    def shippable(self, base_dir: str) -> FileList:
        """This list for a worker elsewhere: no callbacks in its options
        (the worker passes its own `warn`), relative paths opened under
        `base_dir` (the client's working folder) and still named as given."""
        opts = dataclasses.replace(self.opts, warn=_no_warn, base_dir=base_dir)
        return FileList(self.files, self.label, opts, self.maildir)

    def path(self, i: int) -> str:
        """Where file i is opened (see `ReadOptions.base_dir`)."""
        return os.path.join(self.opts.base_dir, self.files[i]) if self.opts.base_dir else self.files[i]


def _cap(data: bytes, name: str, opts: ReadOptions) -> bytes:
    if len(data) > opts.max_doc_bytes:
        opts.warn(
            f"{name}: larger than --max-doc-bytes ({opts.max_doc_bytes}); using its first {opts.max_doc_bytes} bytes"
        )
        return data[: opts.max_doc_bytes]
    return data


def _read_upto(fh, n: int) -> bytes:
    chunks, size = [], 0
    while size < n:
        chunk = fh.read(min(n - size, 1 << 24))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _file_docs(path: str, fmt: str, label: str | None, opts: ReadOptions, walked: bool = False) -> Iterator[Document]:
    """The documents of one non-table file (or '-'): one document, or the
    messages of an mbox. `fmt` is auto, text, eml or mbox.

    `walked`: the file was found in a folder, not named by the user. Then
    it is opened without blocking and read only if it is (still) a regular
    file, and it is skipped if it is an nbcli model file (one written into
    the corpus folder must not come back as a document). A FIFO or device
    named on the command line is read: that is what was asked. An nbcli
    model file named as a document is an error: read as one, it taught a
    model 16,000 terms of pickle (`learn m.nb --spam other.nb`); it is
    always a slip for the MODEL argument or a --model option."""
    if path == "-":
        if fmt == "auto":
            yield from _stdin_docs(label, opts)
        else:
            yield from _stream_docs(sys.stdin.buffer, path, fmt, label, opts)
        return
    fd = _open_input(path, opts, walked)
    if fd is None:
        return
    try:
        data = _read_regular(fd, opts.max_doc_bytes)
        if data is not None:
            head = data[:256]
        else:  # a large file's first bytes; a named FIFO or device is not looked into (it cannot be re-read)
            head = os.pread(fd, 256, 0) if walked or stat.S_ISREG(os.fstat(fd).st_mode) else b""
        kind = _nbcli_file(head)
        if kind is not None:
            os.close(fd)
            if not walked:
                raise NbcliError(
                    f"{path} is {kind}, not a document",
                    hint="name a model as the command's MODEL (or --model), and documents as the inputs",
                )
            opts.warn(Skipped(f"skipping {path}: {kind}"))
            return
    except OSError as exc:
        os.close(fd)
        opts.warn(Unreadable(f"skipping {path}: {exc.strerror}"))
        return
    if data is not None:
        os.close(fd)
        yield from _docs_in_bytes(data, path, fmt, label)
        return
    fh = open(fd, "rb", buffering=0)  # closes fd
    try:
        yield from _stream_docs(fh, path, fmt, label, opts)
    finally:
        fh.close()


def _open_input(path: str, opts: ReadOptions, walked: bool) -> int | None:
    """A descriptor for `path`, or None after a warning. A walked file is
    opened with O_NONBLOCK (a FIFO that replaced a file since the listing
    would block the open itself) and must be a regular file."""
    try:
        where = os.path.join(opts.base_dir, path) if opts.base_dir else path
        fd = os.open(where, os.O_RDONLY | (os.O_NONBLOCK if walked else 0))
    except OSError as exc:
        opts.warn(Unreadable(f"skipping {path}: {exc.strerror}"))
        return None
    if walked:
        try:
            mode = os.fstat(fd).st_mode
        except OSError as exc:
            os.close(fd)
            opts.warn(Unreadable(f"skipping {path}: {exc.strerror}"))
            return None
        if not stat.S_ISREG(mode):
            os.close(fd)
            opts.warn(Skipped(f"skipping {path}: {file_kind(mode)}, not a regular file"))
            return None
    return fd


_MODEL_MARK = b"nbcli-model"


_JOURNAL_MARK = b"nbcli-journal "  # store/journal.py's header: b"nbcli-journal 1 BASE\n" (2 once rolled)


def _nbcli_file(head: bytes) -> str | None:
    """What nbcli file one starting with `head` is ("an nbcli model file",
    "an nbcli model's journal"), or None. A model: joblib writes a pickle
    (first byte 0x80, the protocol opcode) of a dict whose first key is
    "format" with the value "nbcli-model" (see modelfile.py), within the
    first ~40 bytes; 200 leaves room for other pickle protocols. A journal
    (MODEL.journal, beside a model kept in the corpus folder) starts with
    its header's words."""
    if head[:1] == b"\x80" and _MODEL_MARK in head[:200]:
        return "an nbcli model file"
    if head.startswith(_JOURNAL_MARK):
        return "an nbcli model's journal"
    return None


def _read_regular(fd: int, limit: int) -> bytes | None:
    """The whole content of a regular file of at most `limit` bytes, read with
    one system call (most files: a mail folder holds thousands of small
    ones); None, with the position unchanged, for anything else (a bigger
    or growing file, a pipe, a device), which is then read as a stream."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
        return None
    data = os.read(fd, st.st_size + 1)  # a short read of a regular file means its end
    if len(data) <= st.st_size:
        return data
    os.lseek(fd, 0, os.SEEK_SET)  # it grew while being read
    return None


def _entry_docs(
    entries: Iterable[bytes | None], path: str, label: str | None, opts: ReadOptions | None
) -> Iterator[Document]:
    """Documents for the entries of one mbox: ids PATH:1, PATH:2, ..., or
    PATH when it holds a single entry (so one entry is held back until the
    next one, or the end, shows which)."""
    held, n = None, 0
    for entry in entries:
        if held is not None:
            yield _entry_doc(held, f"{path}:{n}", label, n == 1, opts)
        held, n = entry, n + 1
    if held is not None:
        yield _entry_doc(held, path if n == 1 else f"{path}:{n}", label, n == 1, opts)


def _entry_doc(data: bytes, doc_id: str, label: str | None, first: bool, opts: ReadOptions | None) -> Document:
    return Document(doc_id, label, data if opts is None else _cap(data, doc_id, opts), "mail", first)


def _docs_in_bytes(data: bytes, path: str, fmt: str, label: str | None) -> Iterator[Document]:
    """_stream_docs for a file already read whole (no --max-doc-bytes cut
    can be needed: the whole file is within it)."""
    if fmt == "mbox" or (fmt == "auto" and starts_mbox(data)):
        yield from _entry_docs(mbox_entries(lambda: b"", data), path, label, None)
        return
    yield Document(path, label, data, {"eml": "mail", "text": "text"}.get(fmt, "auto"))


def _stream_docs(fh, path: str, fmt: str, label: str | None, opts: ReadOptions) -> Iterator[Document]:
    name = "standard input" if path == "-" else path
    try:
        read = partial_reader(fh)
        head = b""
        if fmt in ("mbox", "auto"):
            head = read_first_line(read)
            if fmt == "mbox" or starts_mbox(head):
                yield from _entry_docs(mbox_entries(read, head), path, label, opts)
                return
        head += _read_upto(fh, max(0, opts.max_doc_bytes + 1 - len(head)))
        if len(head) > opts.max_doc_bytes:
            head = _cap(head, name, opts)
            while fh.read(1 << 20):  # drain stdin; files are simply closed
                if path != "-":
                    break
        yield Document(path, label, head, {"eml": "mail", "text": "text"}.get(fmt, "auto"))
    except OSError as exc:
        opts.warn(Unreadable(f"skipping {path}: {exc.strerror}"))


class _Replay(io.RawIOBase):
    """A stream that gives `head` and then the rest of `fh`: stdin with what
    was read to judge it put back."""

    def __init__(self, head: bytes, fh):
        self._head = memoryview(head)
        self._fh = fh

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = (getattr(self._fh, "read1", None) or self._fh.read)(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _stdin_docs(label: str | None, opts: ReadOptions) -> Iterator[Document]:
    """Standard input with --input-format auto: a table if its first
    non-blank line says so (`table_sources.stdin_table_format`), else one
    document or an mbox. Only that line is read to decide (at most
    --max-doc-bytes + 64K bytes)."""
    fh = sys.stdin.buffer
    limit = opts.max_doc_bytes + 65536
    head = bytearray()
    try:
        while len(head) < limit:
            line = fh.readline(limit - len(head))
            head += line
            if not line or line.strip():
                break
    except OSError as exc:
        opts.warn(Unreadable(f"skipping standard input: {exc.strerror}"))
        return
    first = bytes(head[head.rfind(b"\n", 0, len(head) - 1) + 1 :])
    stream = io.BufferedReader(_Replay(bytes(head), fh), buffer_size=1 << 16)
    fmt = stdin_table_format(decode_bytes(first), opts) if first.strip() else None
    if fmt is not None:
        yield from table_docs(stream, fmt, "<stdin>", label, False, opts)
    else:
        yield from _stream_docs(stream, "-", "auto", label, opts)


def _open_table(
    path: str, fmt: str, label: str | None, need_label: bool, opts: ReadOptions, walked: bool = False
) -> Iterator[Document]:
    """The rows of a table file (or '-'). A table named on the command line
    that cannot be opened is an error (it is the whole input); one found in
    a folder is skipped with a warning, as other files there are."""
    if path == "-":
        yield from table_docs(sys.stdin.buffer, fmt, "<stdin>", label, need_label, opts)
        return
    if walked:
        fd = _open_input(path, opts, walked)
        if fd is None:
            return
        fh = open(fd, "rb")
    else:
        try:
            fh = open(path, "rb")
        except OSError as exc:
            raise NbcliError(f"cannot read {path}: {exc.strerror}") from None
    with fh:
        yield from table_docs(fh, fmt, path, label, need_label, opts)


# -- public entry points -------------------------------------------------------


def _format_of(path: str, opts: ReadOptions) -> str:
    """The forced --input-format, or a table format from the file name, or
    'auto'."""
    if opts.input_format != "auto":
        return opts.input_format
    # os.path.splitext's rule (leading dots of a name are not an
    # extension), without its cost: this runs twice for every file read.
    name = path[path.rfind("/") + 1 :].lstrip(".")
    dot = name.rfind(".")
    return "auto" if dot < 0 else _EXTENSIONS.get(name[dot:].lower(), "auto")


def _check_exists(path: str) -> None:
    if path != "-" and not os.path.exists(path):
        if os.path.lexists(path):
            raise NbcliError(f"{path}: a link to {os.readlink(path)}, which does not exist", hint="check the link")
        raise NbcliError(f"{path}: no such file or folder", hint="check the path")


def _docs_of(
    path: str, opts: ReadOptions, label: str | None, need_label: bool, walked: bool = False
) -> Iterator[Document]:
    fmt = _format_of(path, opts)
    if path == "-" and fmt == "auto" and opts.rows:
        fmt = "sniff"  # a table model reads a table on stdin, whatever its header names
    if fmt in TABLE_FORMATS or fmt == "sniff":
        yield from _open_table(path, fmt, label, need_label, opts, walked)
    else:
        yield from _file_docs(path, fmt, label, opts, walked)


def documents_in(
    path: str, opts: ReadOptions, label: str | None = None
) -> tuple[Callable[[], Iterator[Document]], int | None]:
    """The documents in one path (see the module docstring) and the number of
    files they come from, if known."""
    _check_exists(path)
    fmt = opts.input_format
    if path == "-":
        return (lambda: _docs_of("-", opts, label, False)), (None if fmt in TABLE_FORMATS or fmt == "auto" else 1)
    if os.path.isdir(path):
        if fmt == "maildir" or (fmt == "auto" and is_maildir(path)):
            if not is_maildir(path):
                raise ParameterError(
                    "input_format",
                    "{path} is not a Maildir (it has no cur/ and new/ folders)",
                    hint="drop {input_format:maildir}",
                    path=path,
                )
            files = maildir_files(path, opts.warn)
            return FileList(files, label, opts, maildir=True), len(files)
        files = list_files(path, opts.warn)
        known = all(_format_of(f, opts) not in TABLE_FORMATS for f in files)
        if not known:
            return (lambda: (d for f in files for d in _docs_of(f, opts, label, False, True))), None
        return FileList(files, label, opts), len(files)
    if fmt == "maildir":
        raise ParameterError(
            "input_format", "{path} is not a Maildir (it is a file)", hint="drop {input_format:maildir}", path=path
        )
    known = _format_of(path, opts) not in TABLE_FORMATS
    return (lambda: _docs_of(path, opts, label, False)), (1 if known else None)


def labeled_corpus(corpora: Iterable[str], pairs: Iterable[tuple[str, str]], opts: ReadOptions) -> Corpus:
    """Labelled documents from CORPUS arguments and --label CLASS=PATH pairs."""
    parts: list[tuple[Callable[[], Iterator[Document]], int | None]] = []
    for path in corpora:
        _check_exists(path)
        if path == "-":
            fmt = opts.input_format if opts.input_format in TABLE_FORMATS else "sniff"
            parts.append((functools.partial(_open_table, "-", fmt, None, True, opts), None))
        elif os.path.isdir(path) and not is_maildir(path):
            parts.extend(_class_folders(path, opts))
        else:
            fmt = _format_of(path, opts)
            if fmt not in TABLE_FORMATS:
                raise ParameterError(
                    "pairs",
                    "{path} has no labels",
                    hint="give a folder with one sub-folder per class, a .tsv/.csv/.jsonl file, "
                    "or {pairs:CLASS={path}}",
                    path=path,
                )
            parts.append((functools.partial(_open_table, path, fmt, None, True, opts), None))
    for label, path in pairs:
        parts.append(documents_in(path, opts, label=label))
    return Corpus(parts)


def _class_folders(root: str, opts: ReadOptions):
    """The parts of a corpus folder: one per class sub-folder (or link to a
    folder). Anything else in it is not read, and a warning says so."""
    try:
        with os.scandir(root) as listing:
            names = sorted(e.name for e in listing if not _is_hidden(e.name))
    except OSError as exc:
        raise NbcliError(f"cannot read the folder {root}: {exc.strerror}") from None
    classes = [d for d in names if os.path.isdir(os.path.join(root, d))]
    if not classes:
        raise ParameterError(
            "pairs",
            "{root} has no class sub-folders",
            hint="put each class's documents in a sub-folder named after the class, or use {pairs:CLASS=PATH}",
            root=root,
        )
    loose = len(names) - len(classes)
    if loose:
        opts.warn(Skipped(f"{root}: ignoring {loose} file(s) outside the class sub-folders"))
    return [documents_in(os.path.join(root, cls), opts, label=cls) for cls in classes]


def parse_label_pair(value: str) -> tuple[str, str]:
    label, eq, path = value.partition("=")
    if not eq or not label.strip() or not path:
        bad = ParameterError(
            "pairs", "{pairs} {value!r} is not CLASS=PATH", hint="write it as {pairs:spam=path/to/spam}", value=value
        )
        bad.exit_code = 2  # a bad option value: a usage error (docs/guide/exit-codes.md)
        raise bad
    return label.strip(), os.path.expanduser(path)

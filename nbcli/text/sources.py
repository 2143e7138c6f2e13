"""Where documents come from: paths, `-`, folders, mailboxes and tables.

Everything here turns command-line arguments into a lazy stream of
`Document`s; nothing is tokenised here, and nothing holds a whole corpus in
memory (a folder's file names are listed up front; files, mailbox messages
and table rows are read one at a time).

Documents in a path (for `predict`, `filter`, and `--label CLASS=PATH`):
- a Maildir (a folder with cur/ and new/): one message per file in them;
- any other folder: the documents of every non-hidden regular file below
  it (links followed, each real folder once; see `walk`, which also says
  how skipped inputs are reported);
- a .tsv/.tab, .csv or .jsonl/.ndjson file: one document per row (the label
  field, if any, is kept for `eval`);
- a file that starts with an mbox From_ line: one message per mbox entry
  (see `mbox` for the rule);
- any other file: one document (an email message if it looks like one);
- `-`: standard input, read as a file is, or as a table if it starts like
  one (see `_stdin_docs`) or --input-format says so; for a table model
  (`ReadOptions.rows`) always a table, its format sniffed (`_sniff`).
`--input-format` forces one reading: text, eml (one message per file), mbox,
maildir, tsv, csv or jsonl.

Corpus layouts (for `train` and `eval`): a folder with one sub-folder per
class, whose documents are read as above (so a class folder may hold .eml
files, mbox files or be a Maildir); `--label CLASS=PATH`; or a table (a
file or `-`) with text and label fields.
"""

from __future__ import annotations

import dataclasses
import io
import itertools
import os
import re
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

from nbcli.defaults import DEFAULT_MAX_DOC_BYTES, TABLE_FORMATS
from nbcli.errors import NbcliError, listed
from nbcli.text.decode import decode_bytes
from nbcli.text.mbox import mbox_entries, read_first_line, starts_mbox
from nbcli.text.walk import (
    Skipped,
    Unreadable,
    Warn,
    _is_hidden,
    _no_warn,
    file_kind,
    is_maildir,
    list_files,
    maildir_files,
)

_EXTENSIONS = {
    ".tsv": "tsv",
    ".tab": "tsv",
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
}
_READ_CHUNK = 1 << 20


@dataclass
class Document:
    """One document: an id for output, a label (None if unknown) and its data.

    kind: "mail" (an RFC 822 message), "text" (never read as mail) or "auto"
    (the analyzer decides). first: True for the first document read from a
    file, which is how progress is counted.
    """

    id: str
    label: str | None
    data: bytes | str
    kind: str = "auto"
    first: bool = True


class Row(Mapping):
    """A row of a table's feature cells: a read-only mapping {field: cell}
    that shares its field names with the other rows of its table (one
    tuple of names for the whole table, one tuple of cells per row), so a
    million rows cost a million tuples, not a million dicts."""

    __slots__ = ("names", "values", "_index")

    def __init__(self, names: tuple, values: tuple, index: dict):
        self.names, self.values, self._index = names, values, index

    def __getitem__(self, name: str) -> str:
        return self.values[self._index[name]]

    def __iter__(self):
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


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
        self.total = None if any(n is None for n in counts) else sum(counts)

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
        lists = [make for make, _ in self._parts]
        return lists if all(isinstance(m, FileList) for m in lists) else None


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
    named on the command line is read: that is what was asked."""
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
        if walked and _is_model(os.pread(fd, 256, 0) if data is None else data[:256]):
            os.close(fd)
            opts.warn(Skipped(f"skipping {path}: an nbcli model file"))
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


def _is_model(head: bytes) -> bool:
    """Whether a file starting with `head` is an nbcli model: joblib writes
    a pickle (first byte 0x80, the protocol opcode) of a dict whose first
    key is "format" with the value "nbcli-model" (see modelfile.py), within
    the first ~40 bytes; 200 leaves room for other pickle protocols."""
    return head[:1] == b"\x80" and _MODEL_MARK in head[:200]


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


def _entry_docs(entries: Iterable[bytes], path: str, label: str | None, opts: ReadOptions | None) -> Iterator[Document]:
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


def _partial_reader(fh) -> Callable[[], bytes]:
    """read() for a stream: one system call's worth (read1 on a buffered
    stream; an unbuffered one reads once anyway)."""
    read = getattr(fh, "read1", None) or fh.read
    return lambda: read(_READ_CHUNK)


def _stream_docs(fh, path: str, fmt: str, label: str | None, opts: ReadOptions) -> Iterator[Document]:
    name = "standard input" if path == "-" else path
    try:
        read = _partial_reader(fh)
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


def _messages_in_files(files: list[str], warn: Warn) -> Iterator[bytes]:
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
        read = _partial_reader(fh)
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


# -- tables ----------------------------------------------------------------------
#
# Tables are read line by line, each line cut at --max-doc-bytes + 64K, so
# every path here is linear in the input and holds one row at a time.
# Malformed rows are skipped with a warning naming FILE:LINE (errors under
# --strict, see "skipped inputs"):
# - TSV/CSV: a row with more fields than the header row (a stray tab or
#   comma would shift the text into the wrong column), a row without the
#   text column, a CSV syntax error (e.g. `"a"b`);
# - CSV: a quoted field that is never closed swallows the rest of the file,
#   so it is reported as unreadable (exit status 1): the rows after it are
#   lost; a quoted field longer than the cap is skipped and reading resumes
#   on the next line;
# - JSON lines: a line that is not a JSON object; a text that is not a
#   string (null, a number, a list, ...); a label that is not a string or
#   an integer (a list, an object, true/false, 1.5). Integer labels (0/1,
#   common in data exported from CSV) are read as their decimal string.


def _lines(stream, opts: ReadOptions, name: str) -> Iterator[str]:
    """Decoded lines of a binary stream, each cut at --max-doc-bytes. A read
    error ends the stream with a warning."""
    limit = opts.max_doc_bytes + 65536
    number = 0
    try:
        while True:
            line = stream.readline(limit)
            if not line:
                return
            number += 1
            if len(line) == limit and not line.endswith(b"\n"):
                opts.warn(Skipped(f"{name}:{number}: line longer than {limit} bytes; skipping it"))
                while True:
                    rest = stream.readline(limit)
                    if not rest or rest.endswith(b"\n"):
                        break
                yield ""
                continue
            yield decode_bytes(line)
    except OSError as exc:
        opts.warn(Unreadable(f"skipping the rest of {name} (from line {number + 1}): {exc.strerror}"))


def _field_index(field: str, columns: list[str] | None, what: str, option: str, name: str) -> int:
    if field.isdigit() and int(field) >= 1:
        return int(field) - 1
    if columns is None:
        raise NbcliError(
            f"{what} field {field!r} is a name, but {name} has no header row (--no-header)",
            hint=f"give {option} as a column number, counting from 1",
        )
    if field not in columns:
        raise NbcliError(
            f"{name} has no column {field!r} (its columns: {listed(columns, 12)})",
            hint=f"name the {what} column with {option}",
        )
    return columns.index(field)


def _numbered_rows(lines, fmt: str, opts: ReadOptions, name: str) -> Iterator[tuple[int, list[str]]]:
    """(line where the row starts, fields) for TSV or CSV lines. TSV is one
    row per line split on tabs, with no quoting; CSV is RFC 4180, where a
    quoted field may span lines. The csv module's strict mode reports a
    syntax error for one row and carries on with the next line, and a
    quoted field that never ends as an error at the end of the input
    (without it, the field silently takes the rest of the file). Its field
    buffer grows by doubling, so a long quoted field costs linear time."""
    if fmt != "csv":
        for number, line in enumerate(lines, 1):
            yield number, line.rstrip("\r\n").split("\t")
        return
    import csv

    csv.field_size_limit(opts.max_doc_bytes + 65536)
    reader = csv.reader(lines, strict=True)
    start = 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            end = reader.line_num
            span = f"line {start}" if end <= start else f"lines {start}-{end}"
            if "unexpected end of data" in str(exc):
                opts.warn(
                    Unreadable(
                        f"{name}:{start}: a quoted field starts in this row and is never closed; skipping the "
                        f"rest of the file ({span})"
                    )
                )
                return
            if "field larger than field limit" in str(exc):
                opts.warn(
                    Skipped(f"{name}:{start}: a field longer than {opts.max_doc_bytes + 65536} bytes; skipping {span}")
                )
            else:
                why = "a carriage return in an unquoted field" if "new-line character" in str(exc) else str(exc)
                opts.warn(Skipped(f"{name}:{start}: not valid CSV ({why}); skipping {span}"))
            start = end + 1
            continue
        yield start, row
        start = reader.line_num + 1


def _table_docs(
    stream, fmt: str, name: str, label: str | None, need_label: bool, opts: ReadOptions
) -> Iterator[Document]:
    """Documents from the rows of a TSV, CSV or JSON-lines stream.

    `label` overrides the label field; with `need_label` rows without a label
    are skipped with a warning.
    """
    text_field = opts.text_field or ("text" if opts.header or fmt == "jsonl" else "2")
    label_field = opts.label_field or ("label" if opts.header or fmt == "jsonl" else "1")
    use_label = label is None
    if use_label and opts.label_field is None and label_field in opts.need_fields:
        use_label, label_field = False, None  # a feature column of the model, not a label
    lines = _lines(stream, opts, name)
    if fmt == "sniff":
        fmt, lines = _sniff(lines)
    if fmt == "jsonl":
        yield from _jsonl_docs(lines, name, text_field, label_field, label, need_label and use_label, opts)
        return
    if opts.rows and not opts.header:
        raise NbcliError(f"{name}: a table of features needs a header row naming its columns", hint="drop --no-header")
    rows = _numbered_rows(lines, fmt, opts, name)
    columns = None
    if opts.header:
        first = next((row for row in rows if row[1] and row[1] != [""]), None)  # blank lines before it
        if first is None:
            return
        columns = [c.strip() for c in first[1]]
    ti = None if opts.rows else _field_index(text_field, columns, "text", "--text-field", name)
    if use_label and not need_label and opts.label_field is None and columns is not None and label_field not in columns:
        use_label = False  # predict: a table of texts without labels (JSON lines may lack them too)
    li = _field_index(label_field, columns, "label", "--label-field", name) if use_label else None
    ii = None
    if opts.id_field:
        ii = _field_index(opts.id_field, columns, "id", "--id-field", name)
    elif columns is not None and opts.soft_id_field in columns and opts.soft_id_field not in opts.need_fields:
        ii = columns.index(opts.soft_id_field)
    elif columns is not None and "id" in columns and "id" not in opts.need_fields:
        ii = columns.index("id")
    if ti is None:  # rows of features: every field but the label and the id, picked in C (operator.itemgetter)
        import operator

        keep = [i for i in range(len(columns)) if i != li and i != ii]
        names = tuple(columns[i] for i in keep)
        lacking = [field for field in opts.need_fields if field not in names]
        if lacking:
            more = f" (nor {listed(lacking[1:], 12)})" if len(lacking) > 1 else ""
            raise NbcliError(
                f"{name} has no column {lacking[0]!r}{more}, which the model classifies by",
                hint="give a table whose header names the model's columns: " + listed(opts.need_fields, 12),
            )
        index = {n: i for i, n in enumerate(names)}
        pick = operator.itemgetter(*keep) if len(keep) > 1 else (lambda row, i=keep[0] if keep else 0: (row[i],))
    for row_no, row in rows:
        if not row or row == [""]:
            continue
        if columns is not None and len(row) > len(columns):
            sep = "tabs" if fmt == "tsv" else "commas"
            opts.warn(
                Skipped(
                    f"{name}:{row_no}: {len(row)} fields but the header has {len(columns)} (stray {sep} in the "
                    "text?); skipping it"
                )
            )
            continue
        if ti is not None and ti >= len(row):
            opts.warn(Skipped(f"{name}:{row_no}: row has no text column; skipping it"))
            continue
        doc_label = label
        if li is not None:
            doc_label = row[li].strip() if li < len(row) else ""
            if not doc_label:
                if need_label:
                    opts.warn(Skipped(f"{name}:{row_no}: row has no label; skipping it"))
                    continue
                doc_label = None
        doc_id = row[ii] if ii is not None and ii < len(row) and row[ii] else f"{name}:{row_no}"
        if ti is None:  # a row of features (a short row's missing fields: missing cells)
            if len(row) < len(columns):
                row = row + [""] * (len(columns) - len(row))
            yield Document(doc_id, doc_label, Row(names, pick(row) if keep else (), index), "row")
            continue
        yield Document(doc_id, doc_label, row[ti])


def _json_label(value) -> str | None:
    """A JSON label as a class name: a string, or an integer as its decimal
    string; None for anything else (booleans are not integers here)."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _jsonl_docs(lines, name, text_field, label_field, label, need_label, opts) -> Iterator[Document]:
    import json

    id_field = opts.id_field or opts.soft_id_field or "id"
    first = True
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            opts.warn(Skipped(f"{name}:{number}: not valid JSON ({getattr(exc, 'msg', exc)}); skipping it"))
            continue
        if not isinstance(record, dict):
            opts.warn(Skipped(f"{name}:{number}: not a JSON object; skipping it"))
            continue
        if opts.rows:
            doc = _jsonl_row(record, name, number, label_field, label, need_label, id_field, opts)
            if doc is not None:
                yield doc
            continue
        if text_field not in record:
            if first:
                keys = ", ".join(list(record)[:12])
                raise NbcliError(
                    f"{name}:{number}: record has no field {text_field!r} (its fields: {keys})",
                    hint="name the text field with --text-field",
                )
            opts.warn(Skipped(f"{name}:{number}: record has no field {text_field!r}; skipping it"))
            continue
        first = False
        text = record[text_field]
        if not isinstance(text, str):
            opts.warn(Skipped(f"{name}:{number}: {text_field!r} is {_json_kind(text)}, not a string; skipping it"))
            continue
        doc_label = label
        if label is None:
            value = record.get(label_field)
            doc_label = None if value is None or value == "" else _json_label(value)
            if doc_label is None and value not in (None, ""):
                opts.warn(
                    Skipped(
                        f"{name}:{number}: label {label_field!r} is {_json_kind(value)}, not a string or an "
                        "integer; skipping it"
                    )
                )
                continue
            if doc_label is None and need_label:
                opts.warn(Skipped(f"{name}:{number}: record has no {label_field!r}; skipping it"))
                continue
        doc_id = record.get(id_field)
        doc_id = str(doc_id) if doc_id not in (None, "") else f"{name}:{number}"
        yield Document(doc_id, doc_label, text)


def _jsonl_row(record: dict, name, number, label_field, label, need_label, id_field, opts) -> Document | None:
    """A JSON-lines record as a row of features: every field but the label
    and id, numbers and strings as their text, null as a missing cell; a
    field holding a list, an object or a boolean is a missing cell too
    (with one warning per record)."""
    import json

    doc_label = label
    if label is None:
        value = record.get(label_field)
        doc_label = None if value is None or value == "" else _json_label(value)
        if doc_label is None and need_label:
            opts.warn(Skipped(f"{name}:{number}: record has no {label_field!r}; skipping it"))
            return None
    fields, odd = {}, []
    for key, value in record.items():
        if key in (label_field, id_field):
            continue
        if value is None:
            fields[key] = ""
        elif isinstance(value, str):
            fields[key] = value
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            fields[key] = json.dumps(value)
        else:
            fields[key] = ""
            odd.append(key)
    if odd:
        opts.warn(Skipped(f"{name}:{number}: {', '.join(odd)} not a string or a number; read as missing"))
    doc_id = record.get(id_field)
    doc_id = str(doc_id) if doc_id not in (None, "") else f"{name}:{number}"
    return Document(doc_id, doc_label, fields, "row")


def _json_kind(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    kinds = ((str, "a string"), (int, "a number"), (float, "a number"), (list, "a list"), (dict, "an object"))
    return next((kind for t, kind in kinds if isinstance(value, t)), "not a string")


def _open_table(
    path: str, fmt: str, label: str | None, need_label: bool, opts: ReadOptions, walked: bool = False
) -> Iterator[Document]:
    """The rows of a table file (or '-'). A table named on the command line
    that cannot be opened is an error (it is the whole input); one found in
    a folder is skipped with a warning, as other files there are."""
    if path == "-":
        yield from _table_docs(sys.stdin.buffer, fmt, "<stdin>", label, need_label, opts)
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
        yield from _table_docs(fh, fmt, path, label, need_label, opts)


def _sniff(lines: Iterator[str]) -> tuple[str, Iterator[str]]:
    """Guess a table's format from its first non-blank line: '{' starts
    JSON lines, a tab means TSV, anything else is CSV."""
    ahead = []
    for line in lines:
        ahead.append(line)
        if line.strip():
            break
    first = ahead[-1].lstrip() if ahead else ""
    fmt = "jsonl" if first.startswith("{") else "tsv" if "\t" in first else "csv"
    return fmt, itertools.chain(ahead, lines)


# -- standard input for predict and tokens -------------------------------------
#
# `-` with --input-format auto is one document (a message, an mbox, plain
# text) unless it is unambiguously a table: its first non-blank line is a
# JSON object with the text field (JSON lines), or a header row of bare
# names (letters, digits, _ . -), at least two, split by tabs (TSV) or
# commas (CSV), one of which is the text field ("text" or --text-field).
# A mail's first line ("From ...", "Received: ...") or a sentence is never
# such a row. With --no-header or a column number as --text-field, only
# JSON lines are recognised; --input-format tsv/csv/jsonl forces a table.
# (`train -` and `eval -` always read a table: there it is the only choice.)

_HEADER_NAME = re.compile(r"[\w.-]{1,100}")


def _stdin_table_format(line: str, opts: ReadOptions) -> str | None:
    """The table format that the first non-blank line of stdin shows, or
    None (see the rule above)."""
    import json

    text_field = opts.text_field or "text"
    line = line.strip()
    if line.startswith("{"):
        try:
            record = json.loads(line)
        except ValueError:
            return None
        return "jsonl" if isinstance(record, dict) and text_field in record else None
    if not opts.header or text_field.isdigit():
        return None
    fmt, sep = ("tsv", "\t") if "\t" in line else ("csv", ",")
    cells = [c.strip('"') for c in line.split(sep)]  # "a, b" (a space) is a sentence, not a header
    if len(cells) >= 2 and text_field in cells and all(_HEADER_NAME.fullmatch(c) for c in cells):
        return fmt
    return None


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
    non-blank line says so, else one document or an mbox (see above). Only
    that line is read to decide (at most --max-doc-bytes + 64K bytes)."""
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
    fmt = _stdin_table_format(decode_bytes(first), opts) if first.strip() else None
    if fmt is not None:
        yield from _table_docs(stream, fmt, "<stdin>", label, False, opts)
    else:
        yield from _stream_docs(stream, "-", "auto", label, opts)


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
                raise NbcliError(
                    f"{path} is not a Maildir (it has no cur/ and new/ folders)", hint="drop --input-format maildir"
                )
            files = maildir_files(path, opts.warn)
            return FileList(files, label, opts, maildir=True), len(files)
        files = list_files(path, opts.warn)
        known = all(_format_of(f, opts) not in TABLE_FORMATS for f in files)
        if not known:
            return (lambda: (d for f in files for d in _docs_of(f, opts, label, False, True))), None
        return FileList(files, label, opts), len(files)
    if fmt == "maildir":
        raise NbcliError(f"{path} is not a Maildir (it is a file)", hint="drop --input-format maildir")
    known = _format_of(path, opts) not in TABLE_FORMATS
    return (lambda: _docs_of(path, opts, label, False)), (1 if known else None)


def labeled_corpus(corpora: Iterable[str], pairs: Iterable[tuple[str, str]], opts: ReadOptions) -> Corpus:
    """Labelled documents from CORPUS arguments and --label CLASS=PATH pairs."""
    parts = []
    for path in corpora:
        _check_exists(path)
        if path == "-":
            fmt = opts.input_format if opts.input_format in TABLE_FORMATS else "sniff"
            parts.append(((lambda fmt=fmt: _open_table("-", fmt, None, True, opts)), None))
        elif os.path.isdir(path) and not is_maildir(path):
            parts.extend(_class_folders(path, opts))
        else:
            fmt = _format_of(path, opts)
            if fmt not in TABLE_FORMATS:
                raise NbcliError(
                    f"{path} has no labels",
                    hint="give a folder with one sub-folder per class, a .tsv/.csv/.jsonl file, "
                    f"or --label CLASS={path}",
                )
            parts.append(((lambda p=path, f=fmt: _open_table(p, f, None, True, opts)), None))
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
        raise NbcliError(
            f"{root} has no class sub-folders",
            hint="put each class's documents in a sub-folder named after the class, or use --label CLASS=PATH",
        )
    loose = len(names) - len(classes)
    if loose:
        opts.warn(Skipped(f"{root}: ignoring {loose} file(s) outside the class sub-folders"))
    return [documents_in(os.path.join(root, cls), opts, label=cls) for cls in classes]


def parse_label_pair(value: str) -> tuple[str, str]:
    label, eq, path = value.partition("=")
    if not eq or not label.strip() or not path:
        raise NbcliError(
            f"--label {value!r} is not CLASS=PATH",
            hint="write it as --label spam=path/to/spam",
        )
    return label.strip(), os.path.expanduser(path)


def batches(
    docs: Iterable[Document | None], max_docs: int = 2048, max_chars: int = 1 << 21, first: int = 1
) -> Iterator[list[Document]]:
    """Group documents into lists, starting with `first` and doubling up to
    `max_docs` documents or about `max_chars` characters, so the first result
    of a stream comes out at once and long streams still run in big batches.

    A None among the documents says the input went quiet (see
    `mbox.mbox_entries`): the batch so far is yielded at once, then an empty
    batch that passes the news on (`pipeline.classify` then hands back every
    result it holds), and batches start small again."""
    limit = min(first, max_docs)
    batch: list[Document] = []
    size = 0
    for doc in docs:
        if doc is None:
            if batch:
                yield batch
            yield []
            batch, size, limit = [], 0, min(first, max_docs)
            continue
        batch.append(doc)
        size += len(doc.data)
        if len(batch) >= limit or size >= max_chars:
            yield batch
            batch, size = [], 0
            limit = min(limit * 2, max_docs)
    if batch:
        yield batch

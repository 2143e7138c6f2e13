"""Where documents come from: paths, `-`, folders, mailboxes and tables.

Everything here turns command-line arguments into a lazy stream of
`Document`s; nothing is tokenised here, and nothing holds a whole corpus in
memory (a folder's file names are listed up front; files, mailbox messages
and table rows are read one at a time).

Documents in a path (for `predict`, `filter`, and `--label CLASS=PATH`):
- a Maildir (a folder with cur/ and new/): one message per file in them;
- any other folder: the documents of every non-hidden file below it;
- a .tsv/.tab, .csv or .jsonl/.ndjson file: one document per row (the label
  field, if any, is kept for `eval`);
- a file that starts with an mbox "From " line: one message per mbox entry;
- any other file: one document (an email message if it looks like one);
- `-`: standard input, read as a file is (or a table with --input-format).
`--input-format` forces one reading: text, eml (one message per file), mbox,
maildir, tsv, csv or jsonl.

Corpus layouts (for `train` and `eval`): a folder with one sub-folder per
class, whose documents are read as above (so a class folder may hold .eml
files, mbox files or be a Maildir); `--label CLASS=PATH`; or a table (a
file or `-`) with text and label fields.
"""

from __future__ import annotations

import itertools
import os
import stat
import sys
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from nbcli.decode import decode_bytes
from nbcli.defaults import DEFAULT_MAX_DOC_BYTES, INPUT_FORMATS, MAIL_FORMATS, TABLE_FORMATS  # noqa: F401
from nbcli.errors import NbcliError

_EXTENSIONS = {
    ".tsv": "tsv",
    ".tab": "tsv",
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
}
_READ_CHUNK = 1 << 20

Warn = Callable[[str], None]


def _no_warn(message: str) -> None:
    pass


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

    def file_lists(self) -> list["FileList"] | None:
        """The corpus as lists of files, each file readable on its own (by
        `FileList.read`, in any process), or None if some part is not a
        list of files (a table, an mbox given as a path, stdin). This is
        what lets training workers read the files themselves."""
        lists = [make for make, _ in self._parts]
        return lists if all(isinstance(m, FileList) for m in lists) else None


class FileList:
    """A corpus part that is a list of files (a folder, a Maildir): called,
    it gives their documents; `read(i)` gives file i's documents. Warnings
    go to `opts.warn`, which a worker process may point elsewhere."""

    def __init__(self, files: list[str], read: Callable[[str], Iterator[Document]], opts: ReadOptions):
        self.files = files
        self._read = read
        self.opts = opts

    def __call__(self) -> Iterator[Document]:
        for path in self.files:
            yield from self._read(path)

    def read(self, i: int) -> Iterator[Document]:
        return self._read(self.files[i])


# -- files and mailboxes -------------------------------------------------------


def _is_hidden(name: str) -> bool:
    return name.startswith(".")


def list_files(root: str) -> list[str]:
    """Regular, non-hidden files below `root`, sorted; hidden folders skipped."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root, onerror=None):
        dirnames[:] = sorted(d for d in dirnames if not _is_hidden(d))
        for name in filenames:
            if not _is_hidden(name):
                found.append(os.path.join(dirpath, name))
    found.sort()
    return found


def is_maildir(path: str) -> bool:
    return os.path.isdir(os.path.join(path, "cur")) and os.path.isdir(os.path.join(path, "new"))


def maildir_files(path: str) -> list[str]:
    """The messages of a Maildir: the non-hidden files in cur/ and new/."""
    files = []
    for sub in ("cur", "new"):
        folder = os.path.join(path, sub)
        files += [os.path.join(folder, n) for n in sorted(os.listdir(folder)) if not _is_hidden(n)]
    return files


def split_mbox(first: bytes, read: Callable[[int], bytes]) -> Iterator[bytes]:
    """The entries of an mbox stream, exactly as stored: each runs from a line
    starting with "From " up to the next such line, so the entries joined
    together give back the stream byte for byte. `first` is what was already
    read of the stream; `read(n)` reads more."""
    buf = bytearray(first)
    start = scan = 0  # the current entry starts at buf[start]
    while True:
        cut = buf.find(b"\nFrom ", scan)
        if cut >= 0:
            yield bytes(buf[start : cut + 1])
            start = scan = cut + 1
            continue
        more = read(_READ_CHUNK)
        if not more:
            if start < len(buf):
                yield bytes(buf[start:])
            return
        if start > len(buf) // 2:  # drop what was yielded, now and then
            del buf[:start]
            start = 0
        scan = max(start, len(buf) - 6)
        buf += more


def _cap(data: bytes, name: str, opts: ReadOptions) -> bytes:
    if len(data) > opts.max_doc_bytes:
        opts.warn(f"{name}: larger than --max-doc-bytes ({opts.max_doc_bytes}); using its first {opts.max_doc_bytes} bytes")
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


def _file_docs(path: str, fmt: str, label: str | None, opts: ReadOptions) -> Iterator[Document]:
    """The documents of one non-table file (or '-'): one document, or the
    messages of an mbox. `fmt` is auto, text, eml or mbox."""
    if path == "-":
        yield from _stream_docs(sys.stdin.buffer, path, fmt, label, opts)
        return
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        opts.warn(f"skipping {path}: {exc.strerror}")
        return
    try:
        data = _read_regular(fd, opts.max_doc_bytes)
    except OSError as exc:
        os.close(fd)
        opts.warn(f"skipping {path}: {exc.strerror}")
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


def _docs_in_bytes(data: bytes, path: str, fmt: str, label: str | None) -> Iterator[Document]:
    """_stream_docs for a file already read whole (no --max-doc-bytes cut
    can be needed: the whole file is within it)."""
    if fmt == "mbox" or (fmt == "auto" and data.startswith(b"From ")):
        start, n = 0, 0
        while start < len(data):  # the entries as split_mbox cuts them
            cut = data.find(b"\nFrom ", start)
            end = len(data) if cut < 0 else cut + 1
            n += 1
            yield Document(f"{path}:{n}", label, data[start:end], "mail", n == 1)
            start = end
        return
    yield Document(path, label, data, {"eml": "mail", "text": "text"}.get(fmt, "auto"))


def _stream_docs(fh, path: str, fmt: str, label: str | None, opts: ReadOptions) -> Iterator[Document]:
    name = "standard input" if path == "-" else path
    try:
        head = _read_upto(fh, opts.max_doc_bytes + 1)
        if fmt == "mbox" or (fmt == "auto" and head.startswith(b"From ")):
            for n, message in enumerate(split_mbox(head, fh.read), 1):
                yield Document(f"{path}:{n}", label, _cap(message, f"{path}:{n}", opts), "mail", n == 1)
            return
        if len(head) > opts.max_doc_bytes:
            head = _cap(head, name, opts)
            while fh.read(1 << 20):  # drain stdin; files are simply closed
                if path != "-":
                    break
        yield Document(path, label, head, {"eml": "mail", "text": "text"}.get(fmt, "auto"))
    except OSError as exc:
        opts.warn(f"skipping {path}: {exc.strerror}")


def read_messages(path: str) -> Iterator[bytes]:
    """Raw messages for `nbcli filter`, never cut: an mbox's entries, or the
    whole file (or stdin) as one message."""
    fh = sys.stdin.buffer if path == "-" else open(path, "rb", buffering=0)
    try:
        head = _read_upto(fh, 5)
        if head.startswith(b"From "):
            yield from split_mbox(head, fh.read)
        else:
            rest = [head]
            while True:
                chunk = fh.read(_READ_CHUNK)
                if not chunk:
                    break
                rest.append(chunk)
            yield b"".join(rest)
    finally:
        if path != "-":
            fh.close()


# -- tables ----------------------------------------------------------------------


def _lines(stream, opts: ReadOptions, name: str) -> Iterator[str]:
    """Decoded lines of a binary stream, each cut at --max-doc-bytes."""
    limit = opts.max_doc_bytes + 65536
    number = 0
    while True:
        line = stream.readline(limit)
        if not line:
            return
        number += 1
        if len(line) == limit and not line.endswith(b"\n"):
            opts.warn(f"{name}:{number}: line longer than {limit} bytes; skipping it")
            while True:
                rest = stream.readline(limit)
                if not rest or rest.endswith(b"\n"):
                    break
            yield ""
            continue
        yield decode_bytes(line)


def _field_index(field: str, columns: list[str] | None, what: str, option: str, name: str) -> int:
    if field.isdigit() and int(field) >= 1:
        return int(field) - 1
    if columns is None:
        raise NbcliError(
            f"{what} field {field!r} is a name, but {name} has no header row (--no-header)",
            hint=f"give {option} as a column number, counting from 1",
        )
    if field not in columns:
        shown = ", ".join(columns[:12]) + (", ..." if len(columns) > 12 else "")
        raise NbcliError(
            f"{name} has no column {field!r} (its columns: {shown})",
            hint=f"name the {what} column with {option}",
        )
    return columns.index(field)


def _numbered_rows(lines, fmt: str, opts: ReadOptions) -> Iterator[tuple[int, list[str]]]:
    """(line where the row starts, fields) for TSV or CSV lines. TSV is one
    row per line split on tabs, with no quoting; CSV is RFC 4180, where a
    quoted field may span lines."""
    if fmt == "csv":
        import csv

        csv.field_size_limit(opts.max_doc_bytes + 65536)
        reader = csv.reader(lines, strict=False)
        start = 1
        for row in reader:
            yield start, row
            start = reader.line_num + 1
    else:
        for number, line in enumerate(lines, 1):
            yield number, line.rstrip("\r\n").split("\t")


def _table_docs(stream, fmt: str, name: str, label: str | None, need_label: bool, opts: ReadOptions) -> Iterator[Document]:
    """Documents from the rows of a TSV, CSV or JSON-lines stream.

    `label` overrides the label field; with `need_label` rows without a label
    are skipped with a warning.
    """
    text_field = opts.text_field or ("text" if opts.header or fmt == "jsonl" else "2")
    label_field = opts.label_field or ("label" if opts.header or fmt == "jsonl" else "1")
    use_label = label is None
    lines = _lines(stream, opts, name)
    if fmt == "sniff":
        fmt, lines = _sniff(lines)
    if fmt == "jsonl":
        yield from _jsonl_docs(lines, name, text_field, label_field, label, need_label and use_label, opts)
        return
    rows = _numbered_rows(lines, fmt, opts)
    columns = None
    if opts.header:
        first = next(rows, None)
        if first is None:
            return
        columns = [c.strip() for c in first[1]]
    ti = _field_index(text_field, columns, "text", "--text-field", name)
    li = _field_index(label_field, columns, "label", "--label-field", name) if use_label else None
    ii = None
    if opts.id_field:
        ii = _field_index(opts.id_field, columns, "id", "--id-field", name)
    elif columns is not None and "id" in columns:
        ii = columns.index("id")
    for row_no, row in rows:
        if not row or row == [""]:
            continue
        if ti >= len(row):
            opts.warn(f"{name}:{row_no}: row has no text column; skipping it")
            continue
        doc_label = label
        if li is not None:
            doc_label = row[li].strip() if li < len(row) else ""
            if not doc_label:
                if need_label:
                    opts.warn(f"{name}:{row_no}: row has no label; skipping it")
                    continue
                doc_label = None
        doc_id = row[ii] if ii is not None and ii < len(row) and row[ii] else f"{name}:{row_no}"
        yield Document(doc_id, doc_label, row[ti])


def _jsonl_docs(lines, name, text_field, label_field, label, need_label, opts) -> Iterator[Document]:
    import json

    id_field = opts.id_field or "id"
    first = True
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            opts.warn(f"{name}:{number}: not valid JSON ({exc.msg}); skipping it")
            continue
        if not isinstance(record, dict):
            opts.warn(f"{name}:{number}: not a JSON object; skipping it")
            continue
        if text_field not in record:
            if first:
                keys = ", ".join(list(record)[:12])
                raise NbcliError(
                    f"{name}:{number}: record has no field {text_field!r} (its fields: {keys})",
                    hint="name the text field with --text-field",
                )
            opts.warn(f"{name}:{number}: record has no field {text_field!r}; skipping it")
            continue
        first = False
        text = record[text_field]
        if not isinstance(text, str):
            text = "" if text is None else json.dumps(text) if isinstance(text, (list, dict)) else str(text)
        doc_label = label
        if label is None:
            value = record.get(label_field)
            doc_label = None if value is None or value == "" else str(value)
            if doc_label is None and need_label:
                opts.warn(f"{name}:{number}: record has no {label_field!r}; skipping it")
                continue
        doc_id = record.get(id_field)
        doc_id = str(doc_id) if doc_id not in (None, "") else f"{name}:{number}"
        yield Document(doc_id, doc_label, text)


def _open_table(path: str, fmt: str, label: str | None, need_label: bool, opts: ReadOptions) -> Iterator[Document]:
    if path == "-":
        yield from _table_docs(sys.stdin.buffer, fmt, "<stdin>", label, need_label, opts)
        return
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
        raise NbcliError(f"{path}: no such file or folder", hint="check the path")


def _docs_of(path: str, opts: ReadOptions, label: str | None, need_label: bool) -> Iterator[Document]:
    fmt = _format_of(path, opts)
    if fmt in TABLE_FORMATS:
        yield from _open_table(path, fmt, label, need_label, opts)
    else:
        yield from _file_docs(path, fmt, label, opts)


def documents_in(path: str, opts: ReadOptions, label: str | None = None) -> tuple[Callable[[], Iterator[Document]], int | None]:
    """The documents in one path (see the module docstring) and the number of
    files they come from, if known."""
    _check_exists(path)
    fmt = opts.input_format
    if path == "-":
        return (lambda: _docs_of("-", opts, label, False)), (None if fmt in TABLE_FORMATS else 1)
    if os.path.isdir(path):
        if fmt == "maildir" or (fmt == "auto" and is_maildir(path)):
            if not is_maildir(path):
                raise NbcliError(f"{path} is not a Maildir (it has no cur/ and new/ folders)", hint="drop --input-format maildir")
            files = maildir_files(path)
            return FileList(files, lambda f: (Document(f, label, d.data, "mail") for d in _file_docs(f, "eml", None, opts)), opts), len(files)
        files = list_files(path)
        known = all(_format_of(f, opts) not in TABLE_FORMATS for f in files)
        if not known:
            return (lambda: (d for f in files for d in _docs_of(f, opts, label, False))), None
        return FileList(files, lambda f: _file_docs(f, _format_of(f, opts), label, opts), opts), len(files)
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
    classes = sorted(
        d for d in os.listdir(root) if not _is_hidden(d) and os.path.isdir(os.path.join(root, d))
    )
    if not classes:
        raise NbcliError(
            f"{root} has no class sub-folders",
            hint="put each class's documents in a sub-folder named after the class, or use --label CLASS=PATH",
        )
    loose = [f for f in os.listdir(root) if not _is_hidden(f) and os.path.isfile(os.path.join(root, f))]
    if loose:
        opts.warn(f"{root}: ignoring {len(loose)} file(s) outside the class sub-folders")
    return [documents_in(os.path.join(root, cls), opts, label=cls) for cls in classes]


def parse_label_pair(value: str) -> tuple[str, str]:
    label, eq, path = value.partition("=")
    if not eq or not label.strip() or not path:
        raise NbcliError(
            f"--label {value!r} is not CLASS=PATH",
            hint="write it as --label spam=path/to/spam",
        )
    return label.strip(), os.path.expanduser(path)


def batches(docs: Iterable[Document], max_docs: int = 2048, max_chars: int = 1 << 21, first: int = 1) -> Iterator[list[Document]]:
    """Group documents into lists, starting with `first` and doubling up to
    `max_docs` documents or about `max_chars` characters, so the first result
    of a stream comes out at once and long streams still run in big batches."""
    limit = min(first, max_docs)
    batch: list[Document] = []
    size = 0
    for doc in docs:
        batch.append(doc)
        size += len(doc.data)
        if len(batch) >= limit or size >= max_chars:
            yield batch
            batch, size = [], 0
            limit = min(limit * 2, max_docs)
    if batch:
        yield batch

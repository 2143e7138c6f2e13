"""Where documents come from: paths, `-`, class folders and tables.

Everything here turns command-line arguments into a lazy stream of
`Document`s; nothing is tokenised here, and nothing holds a whole corpus in
memory (a folder's file names are listed up front, the files themselves are
read one at a time).

Corpus layouts (for `train` and `eval`):
- a folder with one sub-folder per class: the label is the sub-folder's
  name, files are found recursively, hidden files and folders are skipped;
- `--label CLASS=PATH`: every document in PATH gets the label CLASS;
- a TSV, CSV or JSON-lines file (or `-`) with a text field and a label field.

Documents in a path (for `predict`, and for `--label`):
- a folder: every non-hidden file below it, one document each;
- a .tsv/.csv/.jsonl file: one document per row (the label field, if any,
  is kept for `eval`);
- any other file: one document;
- `-`: standard input, one document (or a table with --input-format).
"""

from __future__ import annotations

import csv
import itertools
import json
import os
import sys
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from nbcli.decode import decode_bytes
from nbcli.errors import NbcliError

DEFAULT_MAX_DOC_BYTES = 16 * 1024 * 1024
TABLE_FORMATS = ("tsv", "csv", "jsonl")
INPUT_FORMATS = ("auto", "text") + TABLE_FORMATS
_EXTENSIONS = {
    ".tsv": "tsv",
    ".tab": "tsv",
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
}

Warn = Callable[[str], None]


def _no_warn(message: str) -> None:
    pass


@dataclass
class Document:
    """One document: an id for output, a label (None if unknown) and its data."""

    id: str
    label: str | None
    data: bytes | str


@dataclass
class ReadOptions:
    """How to read inputs (shared by train, predict and eval)."""

    input_format: str = "auto"
    text_field: str | None = None
    label_field: str | None = None
    id_field: str | None = None
    header: bool = True
    max_doc_bytes: int = DEFAULT_MAX_DOC_BYTES
    warn: Warn = _no_warn


class Corpus:
    """A lazy stream of documents, with the number of documents if known."""

    def __init__(self, parts: list[tuple[Callable[[], Iterator[Document]], int | None]]):
        self._parts = parts
        counts = [n for _, n in parts]
        self.total = None if any(n is None for n in counts) else sum(counts)

    def __iter__(self) -> Iterator[Document]:
        for make, _ in self._parts:
            yield from make()


# -- files -----------------------------------------------------------------------


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


def read_capped(path: str, max_bytes: int, warn: Warn) -> bytes | None:
    """The first `max_bytes` bytes of a file (with a warning if cut), or None
    with a warning if the file cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        warn(f"skipping {path}: {exc.strerror}")
        return None
    try:
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, max_bytes + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        warn(f"skipping {path}: {exc.strerror}")
        return None
    finally:
        os.close(fd)
    data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    if len(data) > max_bytes:
        warn(f"{path}: larger than --max-doc-bytes ({max_bytes}); using its first {max_bytes} bytes")
        data = data[:max_bytes]
    return data


def _read_stdin(max_bytes: int, warn: Warn) -> bytes:
    data = sys.stdin.buffer.read(max_bytes + 1)
    if len(data) > max_bytes:
        warn(f"standard input is larger than --max-doc-bytes ({max_bytes}); using its first {max_bytes} bytes")
        data = data[:max_bytes]
        while sys.stdin.buffer.read(1 << 20):
            pass
    return data


def _file_docs(paths: list[str], label: str | None, opts: ReadOptions) -> Iterator[Document]:
    for path in paths:
        data = read_capped(path, opts.max_doc_bytes, opts.warn)
        if data is not None:
            yield Document(path, label, data)


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


def _format_of(path: str, opts: ReadOptions) -> str:
    """'text' or a table format, from --input-format or the file name."""
    if opts.input_format != "auto":
        return opts.input_format
    return _EXTENSIONS.get(os.path.splitext(path)[1].lower(), "text")


def _check_exists(path: str) -> None:
    if path != "-" and not os.path.exists(path):
        raise NbcliError(f"{path}: no such file or folder", hint="check the path")


# -- public entry points -------------------------------------------------------


def documents_in(path: str, opts: ReadOptions, label: str | None = None) -> tuple[Callable[[], Iterator[Document]], int | None]:
    """The documents in one path (file, folder, table or '-') and their count."""
    _check_exists(path)
    if path == "-":
        fmt = opts.input_format if opts.input_format != "auto" else "text"
        if fmt == "text":
            return (lambda: iter([Document("-", label, _read_stdin(opts.max_doc_bytes, opts.warn))])), 1
        return (lambda: _open_table("-", fmt, label, False, opts)), None
    if os.path.isdir(path):
        files = list_files(path)
        tables = [f for f in files if _format_of(f, opts) != "text"]
        if tables:
            def gen():
                for f in files:
                    fmt = _format_of(f, opts)
                    if fmt == "text":
                        yield from _file_docs([f], label, opts)
                    else:
                        yield from _open_table(f, fmt, label, False, opts)
            return gen, None
        return (lambda: _file_docs(files, label, opts)), len(files)
    fmt = _format_of(path, opts)
    if fmt == "text":
        return (lambda: _file_docs([path], label, opts)), 1
    return (lambda: _open_table(path, fmt, label, False, opts)), None


def labeled_corpus(corpora: Iterable[str], pairs: Iterable[tuple[str, str]], opts: ReadOptions) -> Corpus:
    """Labelled documents from CORPUS arguments and --label CLASS=PATH pairs."""
    parts = []
    for path in corpora:
        _check_exists(path)
        if path == "-":
            fmt = opts.input_format if opts.input_format not in ("auto", "text") else "sniff"
            parts.append(((lambda fmt=fmt: _open_table("-", fmt, None, True, opts)), None))
        elif os.path.isdir(path):
            parts.extend(_class_folders(path, opts))
        else:
            fmt = _format_of(path, opts)
            if fmt == "text":
                raise NbcliError(
                    f"{path} is a single file, so it has no labels",
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
    parts = []
    for cls in classes:
        files = list_files(os.path.join(root, cls))
        parts.append(((lambda files=files, cls=cls: _file_docs(files, cls, opts)), len(files)))
    return parts


def parse_label_pair(value: str) -> tuple[str, str]:
    label, eq, path = value.partition("=")
    if not eq or not label.strip() or not path:
        raise NbcliError(
            f"--label {value!r} is not CLASS=PATH",
            hint="write it as --label spam=path/to/spam",
        )
    return label.strip(), os.path.expanduser(path)


def batches(docs: Iterable[Document], max_docs: int = 2048, max_chars: int = 1 << 21) -> Iterator[list[Document]]:
    """Group documents into lists, starting with one and doubling up to
    `max_docs` documents or about `max_chars` characters, so the first result
    of a stream comes out at once and long streams still run in big batches."""
    limit = 1
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

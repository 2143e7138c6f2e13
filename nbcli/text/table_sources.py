"""Tables in: the rows of TSV, CSV and JSON-lines streams as documents.

A table gives one document per row: its text field (or, for a table model,
`ReadOptions.rows`, a `Row` of every feature cell), its label if it has a
label field, and its id field or FILE:LINE as the id. `sources` opens the
files and standard input and hands the streams here; `stdin_table_format`
is the rule by which `-` is recognised as a table.

Reading a table needs only some of `sources.ReadOptions`, spelt out as the
`TableOptions` protocol, so that this module does not import `sources`
(which imports it): the text package stays at most 3 imports high (issue 26).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import Protocol

from nbcli.errors import NbcliError, ParameterError, listed
from nbcli.text.decode import decode_bytes
from nbcli.text.documents import Document, Row, Skipped, Unreadable, Warn


class TableOptions(Protocol):
    """What reading a table takes from `sources.ReadOptions` (see there)."""

    text_field: str | None
    label_field: str | None
    id_field: str | None
    header: bool
    max_doc_bytes: int
    rows: bool
    soft_id_field: str | None
    need_fields: tuple[str, ...]

    @property
    def warn(self) -> Warn: ...  # read only: a dataclass field holding a function


# -- tables ----------------------------------------------------------------------
#
# Tables are read line by line, each line cut at --max-doc-bytes + 64K, so
# every path here is linear in the input and holds one row at a time.
# Malformed rows are skipped with a warning naming FILE:LINE (errors under
# --strict, see "skipped inputs" in `documents`):
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


def _lines(stream, opts: TableOptions, name: str) -> Iterator[str]:
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


def _field_index(field: str, columns: list[str] | None, what: str, parameter: str, name: str) -> int:
    """The column of `field` (a name, or a number from 1), given by
    `parameter` (text_field, label_field, id_field)."""
    # a column number: ASCII digits ('²' passes isdigit() and fails int()), short enough for int() (4,300 digits)
    if field.isascii() and field.isdigit() and len(field) <= 100 and int(field) >= 1:
        if columns is not None and int(field) > len(columns):
            raise ParameterError(
                parameter,
                "{name} has {n} columns ({columns}), not {field}",
                hint=f"name the {{what}} column with {{{parameter}}}",
                name=name,
                n=len(columns),
                columns=listed(columns, 12),
                field=field,
                what=what,
            )
        return int(field) - 1
    if columns is None:
        raise ParameterError(
            parameter,
            "{what} field {field!r} is a name, but {name} has no header row (--no-header)",
            hint=f"give {{{parameter}}} as a column number, counting from 1",
            what=what,
            field=field,
            name=name,
        )
    if field not in columns:
        raise ParameterError(
            parameter,
            "{name} has no column {field!r} (its columns: {columns})",
            hint=f"name the {{what}} column with {{{parameter}}}",
            name=name,
            field=field,
            columns=listed(columns, 12),
            what=what,
        )
    if columns.count(field) > 1:
        raise ParameterError(
            parameter,
            "{name} has {n} columns named {field!r} (columns {at})",
            hint=f"rename one in the header, or give {{{parameter}}} as a column number",
            name=name,
            n=columns.count(field),
            field=field,
            at=", ".join(str(i + 1) for i, c in enumerate(columns) if c == field),
        )
    return columns.index(field)


def _duplicated(names) -> str | None:
    """The first name that `names` holds twice, or None."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            return name
        seen.add(name)
    return None


def _numbered_rows(lines, fmt: str, opts: TableOptions, name: str) -> Iterator[tuple[int, list[str]]]:
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


def table_docs(
    stream, fmt: str, name: str, label: str | None, need_label: bool, opts: TableOptions
) -> Iterator[Document]:
    """Documents from the rows of a TSV, CSV or JSON-lines stream.

    `label` overrides the label field; with `need_label` rows without a label
    are skipped with a warning.
    """
    # a field given empty is a field given (no column or field has that name), not the default
    default_text, default_label = ("text", "label") if opts.header or fmt == "jsonl" else ("2", "1")
    text_field = opts.text_field if opts.text_field is not None else default_text
    label_field: str | None = opts.label_field if opts.label_field is not None else default_label
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
    ti = None if opts.rows else _field_index(text_field, columns, "text", "text_field", name)
    if use_label and not need_label and opts.label_field is None and columns is not None and label_field not in columns:
        use_label = False  # predict: a table of texts without labels (JSON lines may lack them too)
    li = None
    if use_label and label_field is not None:  # (None only where use_label is False)
        li = _field_index(label_field, columns, "label", "label_field", name)
    ii = None
    if opts.id_field is not None:
        ii = _field_index(opts.id_field, columns, "id", "id_field", name)
    elif columns is not None and opts.soft_id_field in columns and opts.soft_id_field not in opts.need_fields:
        ii = columns.index(opts.soft_id_field)
    elif columns is not None and "id" in columns and "id" not in opts.need_fields:
        ii = columns.index("id")
    if ti is None:  # rows of features: every field but the label and the id, picked in C (operator.itemgetter)
        import operator

        assert columns is not None  # a table of features has a header row (refused above without one)
        width = len(columns)
        keep = [i for i in range(width) if i != li and i != ii]
        names = tuple(columns[i] for i in keep)
        twice = _duplicated(names)
        if twice is not None:  # a model keeps a column by its name: one of the two would silently go
            at = ", ".join(str(i + 1) for i in keep if columns[i] == twice)
            raise NbcliError(
                f"{name} has {names.count(twice)} columns named {twice!r} (columns {at})",
                hint="rename one in the header",
            )
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
            if len(row) < width:
                row = row + [""] * (width - len(row))
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

    id_field = opts.id_field if opts.id_field is not None else (opts.soft_id_field or "id")
    first = True
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested deeper than the parser goes
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
                raise ParameterError(
                    "text_field",
                    "{name}:{number}: record has no field {field!r} (its fields: {keys})",
                    hint="name the text field with {text_field}",
                    name=name,
                    number=number,
                    field=text_field,
                    keys=keys,
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


def stdin_table_format(line: str, opts: TableOptions) -> str | None:
    """The table format that the first non-blank line of stdin shows, or
    None (see the rule above)."""
    import json

    text_field = opts.text_field if opts.text_field is not None else "text"
    line = line.strip()
    if line.startswith("{"):
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            return None
        return "jsonl" if isinstance(record, dict) and text_field in record else None
    if not opts.header or text_field.isdigit():
        return None
    fmt, sep = ("tsv", "\t") if "\t" in line else ("csv", ",")
    cells = [c.strip('"') for c in line.split(sep)]  # "a, b" (a space) is a sentence, not a header
    if len(cells) >= 2 and text_field in cells and all(_HEADER_NAME.fullmatch(c) for c in cells):
        return fmt
    return None

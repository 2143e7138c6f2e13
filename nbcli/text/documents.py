"""What reading inputs gives: documents, table rows, batches of them, and
warnings about the inputs that were not read.

These are the small data types every reader shares (`sources` for paths,
folders and stdin, `table_sources` for tables, `raw_messages` for `nbcli
filter`, `walk` for folders), and what the models and the pipeline take in.
They import nothing of nbcli, so each reader stays low in the import graph
(issue 26: the text package is at most 3 imports high); `sources` still
offers Document, Row and batches under their old names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass


@dataclass
class Document:
    """One document: an id for output, a label (None if unknown) and its data.

    kind: "mail" (an RFC 822 message), "text" (never read as mail) or "auto"
    (the analyzer decides). first: True for the first document read from a
    file, which is how progress is counted.
    """

    id: str
    label: str | None
    data: bytes | str | Mapping[str, str]  # a Row (or a dict of cells) for a table model
    kind: str = "auto"
    first: bool = True


class Row(Mapping):
    """A row of a table's feature cells: a read-only mapping {field: cell}
    that shares its field names with the other rows of its table (one
    tuple of names for the whole table, one tuple of cells per row), so a
    million rows cost a million tuples, not a million dicts."""

    __slots__ = ("names", "values", "_index")
    names: tuple[str, ...]
    # The cells, in the order of `names`. The name hides Mapping.values()
    # (nb.table_classifier reads this tuple as `row.values`; renaming it is
    # for the owner of that module), so `row.values()` is not available.
    values: tuple[str, ...]  # type: ignore[assignment]

    def __init__(self, names: tuple, values: tuple, index: dict):
        self.names, self.values, self._index = names, values, index

    def __getitem__(self, name: str) -> str:
        return self.values[self._index[name]]

    def __iter__(self):
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


Warn = Callable[[str], None]


def _no_warn(message: str) -> None:
    pass


# -- skipped inputs ----------------------------------------------------------------
#
# Every input that is not read is a warning (through ReadOptions.warn); the
# warning's type says why, and the CLI (`InputReport`) decides the exit status:
# - `Unreadable`: an input that could not be read: permission denied, an I/O
#   error, a folder that cannot be listed, a dangling link, the rest of a CSV
#   after a quoted field that is never closed. The command still finishes
#   (train still writes its model) and then exits 1, as grep does;
# - `Skipped`: an input skipped by rule: a FIFO, device or socket inside a
#   folder, nbcli's own model files, a folder reached twice through links,
#   files outside the class sub-folders, malformed or unlabelled table rows,
#   empty documents. A warning only, unless --strict;
# - --strict makes every Skipped (and Unreadable) input an error at once:
#   one line naming it, exit 1, before a model is written.
# Hidden files and folders (names starting with ".") are not inputs at all
# (like `ls`): they are left out without a word, under --strict too, so a
# corpus in a git checkout or a Maildir with dot-files can be read strictly.
# Other warnings (a document cut at --max-doc-bytes) are plain str.
#
# These are str subclasses so that they travel like any warning, including
# from training workers, which send their warnings back pickled for the
# parent to say (see pipeline.py).


class Skipped(str):
    """A warning about an input skipped by rule (see above)."""

    def as_error(self) -> str:
        """The warning as an error line: what was skipped and why."""
        text = str(self)
        text = text[len("skipping ") :] if text.startswith("skipping ") else text
        return text[: -len("; skipping it")] if text.endswith("; skipping it") else text


class Unreadable(Skipped):
    """A warning about an input that could not be read (see above)."""


def batches(
    docs: Iterable[Document | None], max_docs: int = 2048, max_chars: int = 1 << 21, first: int = 1
) -> Iterator[list[Document]]:
    """Group documents into lists, starting with `first` and doubling up to
    `max_docs` documents or about `max_chars` characters, so the first result
    of a stream comes out at once and long streams still run in big batches.

    A None among the documents says the input went quiet (see
    `mbox.mbox_entries`): the batch so far is yielded at once, then an empty
    batch that passes the news on (`parallel.classify` then hands back every
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


MAX_LABEL_CHARS = 200  # a header line of a class name and its verdict stays far below RFC 5322's 998


def label_problem(label) -> str | None:
    """Why `label` cannot name a class, or None.

    A class name is written into mail headers (`X-NB-Class: NAME; p=...`),
    TSV rows and terminals, so it must be a non-empty string without control
    characters: a CR or LF would end the header and start another
    (header injection), a tab would shift TSV columns, an ESC would drive
    the terminal. Unicode's line and paragraph separators count as line
    breaks too. And at most MAX_LABEL_CHARS long: a header line may not be
    longer than 998 characters (RFC 5322, 2.1.1), and a name without spaces
    cannot be folded (a 1,200-character class made a 1,236-character line)."""
    import unicodedata

    if not isinstance(label, str):
        return f"class label {label!r} is not a string"
    if not label:
        return "a class label is empty"
    if len(label) > MAX_LABEL_CHARS:
        return f"class label {label[:20]!r}... is {len(label):,} characters long, more than {MAX_LABEL_CHARS}"
    bad = next((ch for ch in label if unicodedata.category(ch) in ("Cc", "Zl", "Zp")), None)
    if bad is not None:
        return f"class label {label!r} contains the control character {bad!r}"
    return None

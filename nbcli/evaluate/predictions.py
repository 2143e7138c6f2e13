"""Reading `nbcli predict --json` lines back, for `nbcli eval --predictions`.

Each line is {"id", "label", "probability", "probabilities", "log_probabilities"}
(lines without "log_probabilities", from older versions, fall back to the
log of "probabilities"; a line that has them must name every class in them:
a class missing there is an edited or damaged line, not a probability of 0;
null there is the log of a probability of 0, as predict writes it).
The true class of a document comes from a truth table (id -> label) or,
failing that, from its id: the nearest folder in the id's path that is
named after one of the classes, as in
`corpus/spam/0001.eml` or `corpus/spam/box.mbox:3`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable

import numpy as np

from nbcli.errors import NbcliError, ParameterError


def read_truth(lines: Iterable[str], name: str) -> dict[str, str]:
    """A TSV truth table, id<TAB>label per line (blank lines skipped)."""
    truth = {}
    for n, line in enumerate(lines, 1):
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        doc_id, tab, label = line.rpartition("\t")
        if not tab or not label:
            raise NbcliError(
                f"{name}:{n}: not id<TAB>label", hint="the truth file has one id<TAB>label line per document"
            )
        truth[doc_id] = label
    return truth


def label_from_id(doc_id: str, classes: list[str]) -> str | None:
    """The nearest enclosing folder of the id's path named after a class."""
    parts = doc_id.replace("\\", "/").split("/")[:-1]
    for part in reversed(parts):
        if part in classes:
            return part
    return None


def _log_row(record: dict, classes: list[str], where: str) -> list[float]:
    logs = record.get("log_probabilities")
    probs = record.get("probabilities")
    if not isinstance(probs, dict) or sorted(probs) != sorted(classes):
        raise NbcliError(f"{where}: its classes differ from the first line's ({', '.join(classes)})")
    if logs is not None:  # written by predict: it must name every class (a missing one is no probability 0)
        if not isinstance(logs, dict) or sorted(logs) != sorted(classes):
            raise NbcliError(
                f'{where}: its "log_probabilities" name other classes than its "probabilities" ({", ".join(classes)})',
                hint="give the lines 'nbcli predict --json' wrote, unedited",
            )
        row = [-math.inf if logs[c] is None else float(logs[c]) for c in classes]  # null: p = 0 (predict --json)
    else:
        row = [math.log(p) if p > 0 else -math.inf if p == 0 else math.nan for p in (float(probs[c]) for c in classes)]
    if not all(v <= 0 for v in row) or max(row) == -math.inf:
        raise NbcliError(f"{where}: probabilities must lie between 0 and 1, not all 0")
    return row


def read_predictions(
    lines: Iterable[str], name: str, truth: dict[str, str] | None = None
) -> tuple[list[str], np.ndarray, list[str]]:
    """(true labels, log-posteriors (n_docs, n_classes), classes) from
    prediction lines; classes are sorted by name, as a model's are."""
    classes: list[str] | None = None
    labels, rows = [], []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{name}:{n}"
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):  # nested too deep for the parser: not a prediction either
            record = None
        if not isinstance(record, dict) or "id" not in record:
            raise NbcliError(f"{where}: not a prediction line", hint="give the output of 'nbcli predict --json'")
        if classes is None:
            if not isinstance(record.get("probabilities"), dict) or len(record["probabilities"]) < 2:
                raise NbcliError(
                    f'{where}: no "probabilities" of two or more classes',
                    hint="give the output of 'nbcli predict --json'",
                )
            classes = sorted(record["probabilities"])
        try:
            rows.append(_log_row(record, classes, where))
        except (TypeError, ValueError):
            raise NbcliError(f"{where}: probabilities must be numbers") from None
        doc_id = str(record["id"])
        label = truth.get(doc_id) if truth is not None else label_from_id(doc_id, classes)
        if label is None:
            how = "is not in the truth file" if truth is not None else "has no folder named after a class"
            raise ParameterError(
                "truth",
                "{where}: the true class of {doc_id!r} is unknown: the id {how}",
                hint="give {truth} FILE with id<TAB>label lines",
                where=where,
                doc_id=doc_id,
                how=how,
            )
        labels.append(label)
    if classes is None:
        raise NbcliError(f"{name}: no prediction lines", hint="give the output of 'nbcli predict --json'")
    return labels, np.array(rows, dtype=np.float64), classes


def _text_lines(path: str):
    """The lines of a UTF-8 text file, or of stdin for -."""
    import os
    import sys

    if path == "-":
        return sys.stdin
    if os.path.isdir(path):
        raise NbcliError(f"{path}: a folder, not a file")
    try:  # a file, a pipe (<(nbcli predict ...), a FIFO) or a device: whatever can be read
        return open(path, encoding="utf-8", errors="replace")
    except FileNotFoundError:
        raise NbcliError(f"{path}: no such file", hint="check the path") from None
    except OSError as exc:
        raise NbcliError(f"{path}: cannot be read ({exc.strerror or exc})") from None


def read_files(path: str, truth_path: str | None = None) -> tuple[list[str], np.ndarray, list[str]]:
    """`read_predictions` of the file `path` (- for stdin), with the true
    labels of `truth_path` if given."""
    truth = None
    if truth_path:
        with _text_lines(truth_path) as lines:
            truth = read_truth(lines, truth_path)
    lines = _text_lines(path)
    try:
        return read_predictions(lines, "stdin" if path == "-" else path, truth)
    finally:
        if path != "-":
            lines.close()

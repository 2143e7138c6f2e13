"""Result writers: TSV and JSON lines for machines, rich tables for people.

Formats (stable; documented in the README):
- predict TSV: `id<TAB>label<TAB>probability`, one line per document (with
  --explain, three more columns per term: term, count, contribution). Tabs,
  newlines and backslashes in ids are escaped as \\t, \\n, \\r and \\\\.
- predict JSON lines: {"id", "label", "probability", "probabilities",
  "log_probabilities"} (and "explanation" with --explain).
Probabilities are printed as Python/JSON floats (shortest repr that reads
back exactly).
"""

from __future__ import annotations

import json

_TSV_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def tsv_field(value: str) -> str:
    return value.translate(_TSV_ESCAPES)


def prediction_tsv(doc_id: str, label: str, probability: float, terms=()) -> str:
    """terms: explanation terms, written as three more columns each:
    term, count, contribution."""
    line = f"{tsv_field(doc_id)}\t{tsv_field(label)}\t{probability!r}"
    for t in terms:
        line += f"\t{tsv_field(t['term'])}\t{t['count']}\t{t['contribution']:+.4f}"
    return line


def prediction_json(doc_id: str, label: str, probabilities: dict[str, float], log_probabilities: dict[str, float], **extra) -> str:
    record = {
        "id": doc_id,
        "label": label,
        "probability": probabilities[label],
        "probabilities": probabilities,
        "log_probabilities": log_probabilities,
        **extra,
    }
    return json.dumps(record, ensure_ascii=False)


def _fmt(x) -> str:
    return "-" if x is None else f"{x:.4f}"


def render_eval(report: dict, file, source: str) -> None:
    """The eval report as rich tables (plain text when not a terminal)."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = Console(file=file, highlight=False, soft_wrap=True)
    console.print(
        f"{source}: {report['documents']} documents, accuracy {_fmt(report['accuracy'])}, "
        f"log loss {_fmt(report['log_loss'])}"
    )
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("class")
    for name in ("precision", "recall", "f1", "support"):
        table.add_column(name, justify="right")
    for row in report["classes"]:
        table.add_row(row["class"], _fmt(row["precision"]), _fmt(row["recall"]), _fmt(row["f1"]), str(row["support"]))
    table.add_section()
    for key, name in (("macro_avg", "macro avg"), ("weighted_avg", "weighted avg")):
        row = report[key]
        table.add_row(name, _fmt(row["precision"]), _fmt(row["recall"]), _fmt(row["f1"]), str(row["support"]))
    console.print(table)
    cm = report["confusion_matrix"]
    console.print("confusion matrix (rows: true class, columns: predicted class)")
    matrix = Table(box=box.SIMPLE_HEAD)
    matrix.add_column("")
    for lab in cm["labels"]:
        matrix.add_column(lab, justify="right")
    for lab, row in zip(cm["labels"], cm["matrix"]):
        matrix.add_row(lab, *map(str, row))
    console.print(matrix)
    if report.get("unknown_classes"):
        console.print(f"classes the model does not know: {', '.join(report['unknown_classes'])}")
    if report.get("spam_filter"):
        for line in spam_filter_lines(report["spam_filter"]):
            console.print(line)


def spam_filter_lines(sf: dict) -> list[str]:
    """The spam-filter figures of an eval report, for people."""
    lines = [
        f"spam filter ({sf['spam_class']} against {sf['ham_class']}): ROC AUC {_fmt(sf['auc'])}",
        f"  at cut-offs spam >= {sf['spam_cutoff']:g}, ham <= {sf['ham_cutoff']:g}: ham false-positive rate "
        f"{_fmt(sf['ham_fpr'])}, spam recall {_fmt(sf['spam_recall'])}, unsure {_fmt(sf['unsure'])}",
    ]
    t = sf.get("target_fpr")
    if t:
        where = (
            "every document is spam"
            if t["log_odds_cutoff"] is None
            else f"spam when log-odds > {t['log_odds_cutoff']:.4g} (P(spam) > {t['spam_cutoff']!r})"
        )
        lines.append(
            f"  for ham false-positive rate <= {t['target']:g}: {where}: ham false-positive rate "
            f"{_fmt(t['ham_fpr'])}, spam recall {_fmt(t['spam_recall'])}"
        )
    return lines


def render_info(info: dict, file) -> None:
    """`nbcli info` for people."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = Console(file=file, highlight=False, soft_wrap=True)
    console.print(f"model:       {info['model']}")
    transforms = f" ({', '.join(info['transforms'])})" if info.get("transforms") else ""
    console.print(f"event model: {info['kind']}{transforms}")
    console.print(f"trained:     {info['documents']} documents, {info['created']}, nbcli {info['nbcli_version']}")
    console.print(f"vocabulary:  {info['vocabulary_size']} terms")
    options = " ".join(f"{k}={v}" for k, v in info["options"].items())
    console.print(f"options:     {options}")
    classes = Table(box=box.SIMPLE_HEAD)
    for name, justify in (("class", "left"), ("documents", "right"), ("tokens", "right"), ("prior", "right")):
        classes.add_column(name, justify=justify)
    for row in info["classes"]:
        classes.add_row(row["class"], str(row["documents"]), str(row["tokens"]), f"{row['prior']:.4f}")
    console.print(classes)
    if not any(info["top_terms"].values()):
        return
    console.print("most indicative terms (log-odds against the other classes)")
    top = Table(box=box.SIMPLE_HEAD)
    for cls in info["top_terms"]:
        top.add_column(cls)
    columns = list(info["top_terms"].values())
    for i in range(max(map(len, columns), default=0)):
        top.add_row(*(f"{col[i]['term']} {col[i]['log_odds']:+.2f}" if i < len(col) else "" for col in columns))
    console.print(top)


def render_cv(report: dict, file) -> None:
    """A cross-validation report for people: each metric's mean and
    standard deviation over the folds, and the figure of each fold."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = Console(file=file, highlight=False, soft_wrap=True)
    console.print(f"{report['folds']}-fold stratified cross-validation of {report['documents']} documents (seed {report['seed']})")
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("metric")
    table.add_column("mean ± std", justify="right")
    table.add_column("folds", justify="left")
    from nbcli.evaluation import flat_metrics

    flats = [flat_metrics(r) for r in report["fold_reports"]]
    for name, m in report["metrics"].items():
        folds = " ".join(_fmt(flat.get(name)) for flat in flats)
        table.add_row(name, f"{m['mean']:.4f} ± {m['std']:.4f}", folds)
    console.print(table)


def render_tune(result: dict, file) -> None:
    """`nbcli tune` for people; the last line is the train command alone."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = Console(file=file, highlight=False, soft_wrap=True)
    console.print(
        f"{result['folds']}-fold stratified cross-validation of {result['documents']} documents (seed {result['seed']}), "
        f"by {result['metric']}"
    )
    names = list(result["best"])
    table = Table(box=box.SIMPLE_HEAD)
    for name in names:
        table.add_column(name, justify="right")
    table.add_column(f"{result['metric']} mean ± std", justify="right")
    table.add_column("")
    for row in result["results"]:
        mark = "best" if row["settings"] == result["best"] else ""
        table.add_row(*(f"{row['settings'][n]:g}" if isinstance(row["settings"][n], float) else str(row["settings"][n]) for n in names), f"{row['mean']:.4f} ± {row['std']:.4f}", mark)
    console.print(table)
    console.print("train the best with:")
    console.print(result["command"])

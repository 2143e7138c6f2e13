"""Result writers: TSV and JSON lines for machines, plain aligned tables for people.

Formats (stable; documented in docs/guide/):
- predict TSV: `id<TAB>label<TAB>probability`, one line per document (with
  --explain, three more columns per term: term, count, contribution, then
  one column with the unit of those contributions); for a spam model (see
  `binary.spam_index`) one more column at the very end, the verdict
  (spam, unsure or ham: what filter and serve decide). New columns only
  ever go at the end, so consumers of the older columns keep working. Tabs,
  newlines and backslashes in ids are escaped as \\t, \\n, \\r and \\\\.
- predict JSON lines: {"id", "label", "probability", "probabilities",
  "log_probabilities"}, "verdict" for a spam model, and "explanation" with
  --explain (its "unit" says what its numbers are in).
Probabilities are printed as Python/JSON floats (shortest repr that reads
back exactly). JSON is strict: a number that is not finite (the log-probability
of a class the model rules out, -inf) is written as null, never as the
`-Infinity` of Python's json, which jq and most parsers refuse.
"""

from __future__ import annotations

import json
import math

_TSV_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def tsv_field(value: str) -> str:
    return value.translate(_TSV_ESCAPES)


def display_text(value: str) -> str:
    """Text as it is written out: file names that are not valid UTF-8 come
    in with their bad bytes as surrogates (Python's surrogateescape), which
    no UTF-8 output can carry; each such byte is written as the four
    characters \\xNN instead (so the TSV and the JSON output of an id
    agree, and both stay valid UTF-8)."""
    if value.isascii():
        return value
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


UNKNOWN_TERM = "(unknown)"


def _contribution(x: float) -> str:
    """A term's contribution, 4 decimals; one past 1e15 (a table's value far
    out in a column, scored as floats without a limit would) in exponent
    form: its 4 decimals printed every digit of a 200-digit number."""
    return f"{x:+.4f}" if abs(x) < 1e15 or x != x else f"{x:+.4e}"


def prediction_tsv(
    doc_id: str, label: str, probability: float, explanation: dict | None = None, verdict: str | None = None
) -> str:
    """With an explanation, three more columns per term: term, count,
    contribution; then, if unknown terms contribute (--unknown-terms
    smooth), one more triple for them all: (unknown), their count, their
    contribution; then the unit of the contributions. The verdict, if
    given, is the last column."""
    line = f"{tsv_field(display_text(doc_id))}\t{tsv_field(label)}\t{probability!r}"
    if explanation is not None:
        for t in explanation["terms"]:
            line += f"\t{tsv_field(t['term'])}\t{t['count']}\t{_contribution(t['contribution'])}"
        unknown = explanation["unknown"]
        if unknown["contribution"]:
            line += f"\t{UNKNOWN_TERM}\t{unknown['count']}\t{_contribution(unknown['contribution'])}"
        line += f"\t{explanation['unit']}"
    if verdict is not None:
        line += f"\t{verdict}"
    return line


def prediction_lines(
    ids,
    classes,
    log_proba,
    explanations,
    as_json: bool,
    ascii_only: bool = False,
    verdicts: list[str] | None = None,
    rule: tuple[int, float] | None = None,
) -> list[str]:
    """predict's output lines for a batch: one per document, TSV or JSON
    (`explanations`: one per document, or None; `verdicts`: one per
    document (`filtering.Verdicts.names`), or None for a model that is not
    a spam model); rule: the model's decision threshold
    (`BaseClassifier.decision_rule`; None: the argmax). The probability
    column is the decided class's."""
    import numpy as np

    from nbcli.evaluate.decision import decided

    best = decided(log_proba, rule)
    proba = np.exp(log_proba)
    lines = []
    for i, doc_id in enumerate(ids):
        label = classes[best[i]]
        why = explanations[i] if explanations else None
        verdict = verdicts[i] if verdicts is not None else None
        if as_json:
            extra = {"verdict": verdict} if verdict is not None else {}
            if why:
                extra["explanation"] = why
            probabilities = dict(zip(classes, proba[i].tolist()))
            logs = dict(zip(classes, log_proba[i].tolist()))
            lines.append(prediction_json(doc_id, label, probabilities, logs, ascii_only, **extra))
        else:
            lines.append(prediction_tsv(doc_id, label, float(proba[i, best[i]]), why, verdict))
    return lines


def _displayed(value):
    if isinstance(value, str):
        return display_text(value)
    if isinstance(value, dict):
        return {display_text(k) if isinstance(k, str) else k: _displayed(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_displayed(v) for v in value]
    return value


def _finite(value):
    """`value` with every float that is not finite as None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def json_text(record, ascii_only: bool = False) -> str:
    """One JSON value on one line, always valid UTF-8 JSON: non-ASCII text
    is written as it is, or escaped with ascii_only (for an output encoding
    that is not UTF-8); undecodable bytes of file names as `display_text`
    says."""
    try:
        text = json.dumps(record, ensure_ascii=False, allow_nan=False)
    except ValueError:  # an infinity or NaN: null (see the module docstring)
        record = _finite(record)
        text = json.dumps(record, ensure_ascii=False, allow_nan=False)
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        record = _displayed(record)
        text = json.dumps(record, ensure_ascii=False)
    return json.dumps(record, ensure_ascii=True) if ascii_only else text


def prediction_json(
    doc_id: str,
    label: str,
    probabilities: dict[str, float],
    log_probabilities: dict[str, float],
    ascii_only: bool = False,
    **extra,
) -> str:
    record = {
        "id": doc_id,
        "label": label,
        "probability": probabilities[label],
        "probabilities": probabilities,
        "log_probabilities": log_probabilities,
        **extra,
    }
    return json_text(record, ascii_only)


def _fmt(x) -> str:
    return "-" if x is None else f"{x:.4f}"


class _Table:
    """Plain aligned text: a header row, then the rows; columns two spaces
    apart, each left- or right-justified, no trailing spaces and no
    box-drawing characters, so that a report reads the same in a terminal,
    a pipe or a cron mail, and `awk`/`cut -c` can take it apart."""

    def __init__(self):
        self.columns: list[tuple[str, str]] = []
        self.rows: list[list[str]] = []

    def add_column(self, name: str, justify: str = "left") -> None:
        self.columns.append((name, justify))

    def add_row(self, *cells: str) -> None:
        self.rows.append([str(c) for c in cells])

    def lines(self) -> list[str]:
        rows = [[name for name, _ in self.columns], *self.rows]
        widths = [max(len(r[i]) for r in rows) for i in range(len(self.columns))]
        out = []
        for row in rows:
            cells = [c.rjust(w) if j == "right" else c.ljust(w) for c, w, (_, j) in zip(row, widths, self.columns)]
            out.append(("  " + "  ".join(cells)).rstrip())
        return out


# Control characters shown as "?" in reports for people: text from a model
# file (its options, its metadata) must not drive the terminal.
_CONTROLS = {c: "?" for c in [*range(0x20), *range(0x7F, 0xA0)]}


def _print(file, *lines: str) -> None:
    for line in lines:
        file.write(line.translate(_CONTROLS) + "\n")


def render_eval(report: dict, file, source: str) -> None:
    """The eval report for people: plain aligned tables."""
    _print(
        file,
        f"{source}: {report['documents']} documents, accuracy {_fmt(report['accuracy'])}, "
        f"log loss {_fmt(report['log_loss'])}",
    )
    table = _Table()
    table.add_column("class")
    for name in ("precision", "recall", "f1", "support"):
        table.add_column(name, justify="right")
    for row in report["classes"]:
        table.add_row(row["class"], _fmt(row["precision"]), _fmt(row["recall"]), _fmt(row["f1"]), str(row["support"]))
    for key, name in (("macro_avg", "macro avg"), ("weighted_avg", "weighted avg")):
        row = report[key]
        table.add_row(name, _fmt(row["precision"]), _fmt(row["recall"]), _fmt(row["f1"]), str(row["support"]))
    _print(file, *table.lines())
    cm = report["confusion_matrix"]
    _print(file, "confusion matrix (rows: true class, columns: predicted class)")
    matrix = _Table()
    matrix.add_column("")
    for lab in cm["labels"]:
        matrix.add_column(lab, justify="right")
    for lab, row in zip(cm["labels"], cm["matrix"]):
        matrix.add_row(lab, *map(str, row))
    _print(file, *matrix.lines())
    if report.get("unknown_classes"):
        _print(file, f"classes the model does not know: {', '.join(report['unknown_classes'])}")
    if report.get("spam_filter"):
        _print(file, *spam_filter_lines(report["spam_filter"]))
    if report.get("calibration"):
        _print(file, *calibration_lines(report["calibration"]))
    if report.get("decision"):
        d = report["decision"]
        _print(
            file,
            f"decision: {d['positive']} when P({d['positive']}) >= {d['threshold']:.4g} (--decide {d['objective']}): "
            f"{d['positive']} precision {_fmt(d['precision'])}, recall {_fmt(d['recall'])}, F1 {_fmt(d['f1'])}",
        )


def render_clusters(report: dict, file, source: str) -> None:
    """`eval --clusters` for people: the figures, then the contingency
    table (a row per label, a column per cluster)."""
    _print(
        file,
        f"{source}: {report['documents']} documents, {report['labels']} labels, {report['clusters']} clusters: "
        f"adjusted Rand index {_fmt(report['adjusted_rand_index'])}, normalised mutual information "
        f"{_fmt(report['normalized_mutual_info'])}, purity {_fmt(report['purity'])}",
        "contingency table (rows: label, columns: cluster)",
    )
    table = _Table()
    table.add_column("")
    contingency = report["contingency"]
    for cluster in contingency["clusters"]:
        table.add_column(cluster, justify="right")
    for label, row in zip(contingency["labels"], contingency["matrix"]):
        table.add_row(label, *map(str, row))
    _print(file, *table.lines())
    if report["empty_clusters"]:
        _print(file, f"clusters no document fell in: {', '.join(report['empty_clusters'])}")


def decision_text(decision: dict) -> str:
    """info's decision line (see `store.describe`)."""
    positive = decision["positive"]
    stale = ", stale: refit it with nbcli calibrate MODEL HELDOUT" if decision.get("stale") else ""
    return (
        f"{positive} when P({positive}) >= {decision['probability']:.4g} (log-odds {decision['threshold']:.4g}), "
        f"chosen for --decide {decision['objective']} on {decision['documents']} held-out documents "
        f"({decision['source']}){stale}"
    )


def calibration_text(cal: dict) -> str:
    """`info`'s calibration line (see `store.describe`)."""
    if cal.get("method") is None:
        return f"none ({cal['reason']})" if cal.get("reason") else "none (raw event-model posteriors)"
    text = f"{cal['map']}, fitted on {cal['documents']} held-out documents"
    if cal.get("source") == "cross-validation":
        text += " (cross-validation of the training corpus)"
    elif cal.get("source"):
        text += f" ({cal['source']})"
    text += f"; {cal['effect']}"
    if cal.get("stale"):
        text += f"; STALE: fitted at {cal['model_documents']} documents"
    return text


def calibration_lines(cal: dict) -> list[str]:
    """The calibration figures of an eval report, for people."""
    lines = [
        f"calibration: Brier score {_fmt(cal['brier'])}, expected calibration error {_fmt(cal['ece'])} "
        f"({cal['bins']} bins of the predicted class's probability)"
    ]
    before = cal.get("uncalibrated")
    if before:
        lines.append(
            f"  before the model's calibration map: Brier score {_fmt(before['brier'])}, expected calibration "
            f"error {_fmt(before['ece'])}, log loss {_fmt(before['log_loss'])}"
        )
    table = _Table()
    for name in ("confidence bin", "documents", "mean confidence", "accuracy", "gap"):
        table.add_column(name, justify="right")
    for row in cal["reliability"]:
        table.add_row(
            f"{row['low']:.3f}-{row['high']:.3f}",
            str(row["count"]),
            _fmt(row["confidence"]),
            _fmt(row["accuracy"]),
            f"{row['gap']:+.4f}",
        )
    return lines + ["  " + line for line in table.lines()]


def verdict_table(counts: dict) -> _Table:
    """{true class: {verdict: n}} (`binary.verdict_counts`) as a
    table: a row per true class, a column per verdict, ham to spam."""
    from nbcli.evaluate.binary import VERDICTS

    table = _Table()
    table.add_column("")
    for verdict in VERDICTS:
        table.add_column(verdict, justify="right")
    for cls, row in counts.items():
        table.add_row(cls, *(str(row[v]) for v in VERDICTS))
    return table


def spam_filter_lines(sf: dict) -> list[str]:
    """The spam-filter figures of an eval report, for people."""
    lines = [
        f"spam filter ({sf['spam_class']} against {sf['ham_class']}): ROC AUC {_fmt(sf['auc'])}",
        f"  at cut-offs spam >= {sf['spam_cutoff']:g}, ham <= {sf['ham_cutoff']:g}: ham false-positive rate "
        f"{_fmt(sf['ham_fpr'])}, spam recall {_fmt(sf['spam_recall'])}, unsure {_fmt(sf['unsure'])}, "
        f"accuracy on the decided {_fmt(sf['decided_accuracy'])}",
    ]
    if sf.get("verdicts"):
        lines += ["  verdicts at the cut-offs, as filter, serve and predict give them (rows: true class)"]
        lines += ["  " + line for line in verdict_table(sf["verdicts"]).lines()]
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
    u = sf.get("target_unsure")
    if u:
        lines.append(
            f"  for at most {u['target']:g} unsure: ham <= {u['ham_cutoff']!r}, spam >= {u['spam_cutoff']!r} "
            f"(|log-odds| >= {u['threshold_log_odds']:.4g}): unsure {_fmt(u['unsure'])}, accuracy on the "
            f"{u['decided']} decided {_fmt(u['decided_accuracy'])}"
        )
    return lines


def _summary_text(value) -> str:
    """A column summary (`TableModel.summary`) in one line."""
    if isinstance(value, dict):
        return ", ".join(f"{k} {_summary_text(v)}" for k, v in value.items())
    if isinstance(value, list):
        return "[" + ", ".join(_summary_text(v) for v in value[:8]) + (", ..." if len(value) > 8 else "") + "]"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def clusters_line(clusters: dict, measure: str) -> str:
    """info's line about a clustering (its k, restarts, seed and fit), and
    for a clustering of documents a second line: how many of the documents
    each cluster took (their most responsible cluster)."""
    line = (
        f"clusters:    {clusters['k']} (best of {clusters['restarts']} restarts, seed {clusters['seed']}), "
        f"{measure} {clusters['objective']:.6g}"
    )
    sizes = clusters.get("sizes")
    if isinstance(sizes, list):
        pinned = clusters.get("pinned") or 0
        held = f" ({pinned} re-seeded into emptied clusters)" if pinned else ""
        line += "\nsizes:       " + ", ".join(f"cluster{i + 1} {n}" for i, n in enumerate(sizes))
        line += f" (the documents most likely in each; the table's documents: expected counts){held}"
    return line


def render_table_info(info: dict, file) -> None:
    """`nbcli info` of a table model, for people."""
    columns = info["columns"]
    kinds = ", ".join(f"{sum(c['kind'] == k for c in columns)} {k}" for k in dict.fromkeys(c["kind"] for c in columns))
    _print(file, f"model:       {info['model']}")
    _print(file, f"event model: table ({len(columns)} columns: {kinds})")
    _print(file, f"trained:     {info['documents']} rows, {info['created']}, nbcli {info['nbcli_version']}")
    _print(file, f"model id:    {info['model_id']}")
    _print(file, f"calibration: {calibration_text(info['calibration'])}")
    if info.get("decision"):
        _print(file, f"decision:    {decision_text(info['decision'])}")
    _print(file, f"settings:    {' '.join(f'{k}={v}' for k, v in info['settings'].items())}")
    if info.get("clusters"):
        for line in clusters_line(info["clusters"], "objective (log prior + log-likelihood)").splitlines():
            _print(file, line)
    table = _Table()
    for name in ("class", "rows", "prior"):
        table.add_column(name, justify="left" if name == "class" else "right")
    for c in info["classes"]:
        table.add_row(c["class"], str(c["documents"]), f"{c['prior']:.4f}")
    _print(file, *["  " + line for line in table.lines()])
    _print(file, "columns, per class")
    for column in columns:
        _print(file, f"  {column['name']} ({column['kind']})")
        for cls, columns_of_class in info["summary"]["classes"].items():
            _print(file, f"    {cls}: {_summary_text(columns_of_class.get(column['name'], {}))}")


def render_info(info: dict, file) -> None:
    """`nbcli info` for people."""
    if info.get("kind") == "table":
        render_table_info(info, file)
        return
    _print(file, f"model:       {info['model']}")
    transforms = f" ({', '.join(info['transforms'])})" if info.get("transforms") else ""
    _print(file, f"event model: {info['kind']}{transforms}")
    _print(file, f"trained:     {info['documents']} documents, {info['created']}, nbcli {info['nbcli_version']}")
    _print(file, f"vocabulary:  {info['vocabulary_size']} terms")
    _print(file, f"model id:    {info['model_id']}")
    record = info.get("record")
    if record is not None:
        per_class = ", ".join(f"{c} {n}" for c, n in record["per_class"].items())
        total = sum(record["per_class"].values())
        # an entry is a document in a class, its copies counted once: say so when the class counts hold copies
        entries = f": {record['entries']} distinct (copies counted once);" if total != record["entries"] else ","
        _print(file, f"record:      {total} learned documents ({per_class}){entries} {record['bytes']} bytes")
    cal = info.get("calibration")
    if cal is not None:
        _print(file, f"calibration: {calibration_text(cal)}")
    decision = info.get("decision")
    if decision:
        _print(file, f"decision:    {decision_text(decision)}")
    em = info.get("em")
    if em:
        _print(
            file,
            f"EM:          {em['unlabelled_documents']} unlabelled documents, weight {em['weight']:g}, "
            f"{em['iterations']} iterations ({'converged' if em['converged'] else 'stopped at --em-iter'}), "
            f"objective {em['objective_first']:.6g} -> {em['objective_last']:.6g}",
        )
    components = info.get("components")
    if components:
        _print(
            file,
            f"components:  {components['per_class']} per class of {', '.join(components['classes'])} "
            "(a class's probability is its components')",
        )
    if info.get("clusters"):
        for line in clusters_line(info["clusters"], "objective").splitlines():
            _print(file, line)
    if info.get("updated"):
        _print(file, f"updated:     {info['updated']}")
    if info.get("pruned"):
        _print(file, f"pruned:      {' '.join(f'{k}={v}' for k, v in info['pruned'].items())}")
    options = " ".join(f"{k}={v}" for k, v in info["options"].items())
    _print(file, f"options:     {options}")
    classes = _Table()
    for name, justify in (("class", "left"), ("documents", "right"), ("tokens", "right"), ("prior", "right")):
        classes.add_column(name, justify=justify)
    for row in info["classes"]:
        classes.add_row(row["class"], str(row["documents"]), str(row["tokens"]), f"{row['prior']:.4f}")
    _print(file, *classes.lines())
    if not any(info["top_terms"].values()):
        return
    _print(file, "most indicative terms (log-odds against the other classes)")
    top = _Table()
    for cls in info["top_terms"]:
        top.add_column(cls)
    columns = list(info["top_terms"].values())
    for i in range(max(map(len, columns), default=0)):
        top.add_row(*(f"{col[i]['term']} {col[i]['log_odds']:+.2f}" if i < len(col) else "" for col in columns))
    _print(file, *top.lines())


def render_cv(report: dict, file) -> None:
    """A cross-validation report for people: each metric's mean and
    standard deviation over the folds, and the figure of each fold."""
    _print(
        file,
        (
            f"{report['folds']}-fold stratified cross-validation of {report['documents']} documents (seed "
            f"{report['seed']})"
        ),
    )
    table = _Table()
    table.add_column("metric")
    table.add_column("mean ± std", justify="right")
    table.add_column("folds", justify="left")
    from nbcli.evaluate.report import flat_metrics

    flats = [flat_metrics(r) for r in report["fold_reports"]]
    for name, m in report["metrics"].items():
        folds = " ".join(_fmt(flat.get(name)) for flat in flats)
        table.add_row(name, f"{m['mean']:.4f} ± {m['std']:.4f}", folds)
    _print(file, *table.lines())


def render_tune(result: dict, file) -> None:
    """`nbcli tune` for people; the last line is the train command alone."""
    _print(
        file,
        f"{result['folds']}-fold stratified cross-validation of {result['documents']} documents (seed "
        f"{result['seed']}), "
        f"by {result['metric']}",
    )
    names = list(result["best"])
    table = _Table()
    for name in names:
        table.add_column(name, justify="right")
    table.add_column(f"{result['metric']} mean ± std", justify="right")
    table.add_column("")
    for row in result["results"]:
        mark = "best" if row["settings"] == result["best"] else ""
        table.add_row(
            *(
                f"{row['settings'][n]:g}" if isinstance(row["settings"][n], float) else str(row["settings"][n])
                for n in names
            ),
            f"{row['mean']:.4f} ± {row['std']:.4f}",
            mark,
        )
    _print(file, *table.lines(), "train the best with:", result["command"])


def online_text(r: dict) -> str:
    """The report of `eval --online` for people (TREC's figures)."""

    def pct(v, digits=2):
        return "n/a" if v is None else f"{v:.{digits}f}"

    lines = [
        f"online evaluation (TREC spam-track protocol): {r['messages']} messages in {r['order']} order, "
        f"train {r['train']}" + (f", {r['warmup']} warm-up messages learned first" if r["warmup"] else ""),
        f"  messages learned   {r['learned']}",
        f"  errors             {r['errors']} (accuracy {pct(r['accuracy_pct'])}%)",
        f"  ham misclassified  {pct(r['hm_pct'])}%  (hm%, of {r['ham']} ham)",
        f"  spam misclassified {pct(r['sm_pct'])}%  (sm%, of {r['spam']} spam)",
        f"  lam%               {pct(r['lam_pct'])}",
        f"  (1-ROCA)%          {pct(r['one_minus_roca_pct'], 3)}",
    ]
    return "\n".join(lines)


def model_counts(classifier) -> str:
    """ "now ham 12, spam 8; 340 terms": what a model holds after learn,
    forget, merge, load or prune (for an EM model, the documents learned,
    not its unlabelled ones' expected share)."""
    learned = classifier.model.class_count
    expected = getattr(classifier, "expected", None)
    if expected is not None:  # an EM model: the documents learned, not its unlabelled ones' expected share
        learned = learned - expected[1]
    counts = ", ".join(f"{c} {round(float(n))}" for c, n in zip(classifier.classes, learned))
    return f"now {counts}; {len(classifier.vocabulary)} terms"

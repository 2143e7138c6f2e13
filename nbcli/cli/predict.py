"""`nbcli predict`: classify documents, one line per document on stdout
(the lines are output.prediction_lines'; verdicts as filter and serve give
them, spam.filtering.Verdicts).
"""

from __future__ import annotations

import sys

import click

from nbcli.cli.option_bundles import (
    cluster_option,
    cutoff_options,
    explain_option,
    jobs_option,
    json_option,
    message_cap_option,
    quiet_option,
    read_options,
)
from nbcli.cli.options import (
    check_cutoffs,
    check_inputs,
    cutoffs_given,
    is_given,
    load_model,
    make_diagnostics,
    model_read_opts,
    pipeline_workers,
)
from nbcli.cli.stdio import stdout_is_utf8
from nbcli.errors import NbcliError


@click.command()
@click.argument("model")
@click.argument("inputs", nargs=-1, metavar="[INPUT]...")
@json_option
@explain_option
@cutoff_options
@message_cap_option
@read_options
@jobs_option
@cluster_option
@quiet_option
def predict(model, inputs, as_json, explain, spam_cutoff, ham_cutoff, spam_class, max_message_bytes, **kw):
    """Classify documents: one line per document on stdout.

    INPUT is a file (one document), a folder (every file below it), a
    .tsv/.csv/.jsonl table (one document per row), or - for stdin (one
    document or an mbox; a table if its first non-blank line is a JSON
    object with the text field, or a header row of bare names split by tabs
    or commas that names the text field; or as --input-format says).
    Without INPUT, stdin is read. Empty documents are skipped with a
    warning. Inputs that could not be read make the exit status 1 at the
    end (--strict: any skipped input is an error at once).

    TSV output: id<TAB>label<TAB>probability of that label (the most
    probable class). With --json: {"id", "label", "probability",
    "probabilities": {class: p, ...}, "log_probabilities": {class: log p,
    ...}} (log p is null where p is 0: JSON has no -Infinity). For a spam
    model (two classes, one named by --spam-class) each line also ends with
    the verdict, spam, unsure or ham, from P(spam) and the cut-offs, as
    filter and serve decide it (TSV: the last column; JSON: "verdict").

    --explain N adds the N terms with the largest contributions to the
    log-odds of the chosen class against the runner-up: in TSV, three more
    columns per term (term, count, contribution), then the unit of the
    contributions; in JSON, "explanation": {"versus", "log_odds", "prior",
    "unknown": {"count", "contribution"}, "terms": [{"term", "count",
    "contribution"}, ...], "unit"}, where the contributions of all terms,
    the prior and the unknown terms add up to log_odds. They are the event
    model's own log-odds: for a calibrated model the unit is "raw log-odds,
    before calibration", not the log-odds of the probability shown.

    \b
    Example:
      nbcli predict mail.nb sample_corpora/mail/test/spam/0001.eml
      nbcli predict mail.nb --json - < message.eml
      nbcli predict mail.nb --explain 5 message.eml
      nbcli predict topics.nb sample_corpora/topics/test.jsonl | cut -f2 | sort | uniq -c
    """
    from nbcli.cli.output import prediction_lines
    from nbcli.spam.filtering import Verdicts

    diagnostics = make_diagnostics(kw["quiet"])
    check_cutoffs(spam_cutoff, ham_cutoff)
    workers = pipeline_workers(kw)
    if not inputs:
        if sys.stdin.isatty():
            raise click.UsageError("no INPUT given and stdin is a terminal; give files, folders, or - for stdin")
        inputs = ("-",)
    from nbcli.run.parallel import classify_docs
    from nbcli.text.documents import Skipped
    from nbcli.text.sources import Corpus, documents_in

    classifier = load_model(model, max_message_bytes)
    classes = classifier.classes
    rule = classifier.decision_rule()
    verdicts = Verdicts(classes, spam_class, spam_cutoff, ham_cutoff, rule, cutoffs_given())
    _check_verdict_options(verdicts, model)
    opts = model_read_opts(classifier, kw, diagnostics, labels=False)
    docs = Corpus([documents_in(path, opts) for path in inputs])
    written = 0
    ascii_json = not stdout_is_utf8()

    def nonempty(stream):
        for doc in stream:
            if len(doc.data) == 0:
                opts.warn(Skipped(f"skipping {doc.id}: empty document"))
                continue
            yield doc

    cells = _unreadable_cells(classifier)
    with diagnostics.progress("classifying", docs.total) as advance:
        for batch, result in classify_docs(classifier, nonempty(docs), workers, explain or 0):
            log_proba, why = result if explain else (result, None)
            if cells is not None:
                cells.add(batch, log_proba)
            lines = prediction_lines(
                [doc.id for doc in batch],
                classes,
                log_proba,
                why,
                as_json,
                ascii_json,
                verdicts.names(log_proba),
                rule,
            )
            sys.stdout.write("\n".join(lines) + "\n")
            sys.stdout.flush()
            written += len(batch)
            advance(docs.progress(batch))
    if written == 0:
        raise NbcliError(
            f"nothing to classify: {' '.join(inputs)} held no non-empty documents",
            hint="check the input paths",
        )
    if cells is not None and cells.message():
        diagnostics.warn(cells.message())
    diagnostics.finish()
    check_inputs()


def _check_verdict_options(verdicts, model: str) -> None:
    """predict's --spam-class/--spam-cutoff/--ham-cutoff decide the verdict
    of a spam model; for any other model they would do nothing: say so."""
    ctx = click.get_current_context()
    given = [f"--{n.replace('_', '-')}" for n in ("spam_class", "spam_cutoff", "ham_cutoff") if is_given(ctx, n)]
    if given and not verdicts.binary:
        raise NbcliError(
            (
                f"{'/'.join(given)}: {model} has classes {', '.join(verdicts.classes)}; a verdict needs a two-class "
                f"model with a {verdicts.spam_class!r} class"
            ),
            hint="name the spam class with --spam-class, or drop the option",
        )


def _unreadable_cells(classifier):
    """A table model's tally of numeric cells that are not numbers, said
    once at the end of predict (table_classifier.UnreadableCells); None for
    a text model."""
    if getattr(classifier.model, "kind", None) != "table":
        return None
    from nbcli.nb.table_classifier import UnreadableCells

    return UnreadableCells()

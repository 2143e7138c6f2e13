"""The commands that rewrite model files without documents: merge, dump,
load and prune (the work is in fit.learning, store.dump and
store.modelfile). Registered on the `nbcli` group by cli/main.py.
"""

from __future__ import annotations

import os

import click

from nbcli.cli.option_bundles import json_option, quiet_option
from nbcli.cli.options import make_diagnostics
from nbcli.cli.stdio import write, write_json
from nbcli.errors import NbcliError


@click.command()
@click.argument("models", nargs=-1, required=True, metavar="MODEL...")
@click.option("-o", "--output", required=True, metavar="MODEL", help="The merged model (replaced atomically).")
@quiet_option
def merge(models, output, quiet):
    """Add up the counts of models trained with the same options.

    The merged model is the one training on all their documents would give
    (the records of learned documents are united). Models with different
    analyzer or smoothing options, event models or classes are refused,
    with the difference named, and so is one model file given twice.
    Documents that more than one model learned count once per model (a
    warning says how many).

    \b
    Example:
      nbcli merge alice.nb bob.nb -o team.nb
    """
    from nbcli.cli.output import model_counts
    from nbcli.cli.paths import check_output
    from nbcli.fit import learning
    from nbcli.store import modelfile

    diagnostics = make_diagnostics(quiet)
    _refuse_a_model_given_twice(models)
    check_output(output, [])  # (an input may be the output: merging into team.nb reads it first)
    loaded = [modelfile.load(path) for path in models]
    merged = learning.merge(loaded, list(models))
    shared = learning.shared_documents(loaded)
    modelfile.save(merged, output)
    diagnostics.info(f"wrote {output}: {len(models)} models merged ({model_counts(merged)})")
    if shared:  # a warning, not a refusal: models trained on overlapping corpora are merged as asked
        diagnostics.warn(
            f"{shared} document(s) are in the records of more than one of the models: each counts once per "
            "model, as training on all their corpora would; merge models of different documents to count "
            "each once"
        )
    if merged.meta.get("calibration", {}).get("dropped"):
        diagnostics.info(f"{output} is not calibrated; fit one on held-out documents: nbcli calibrate {output} HELDOUT")


def _refuse_a_model_given_twice(models) -> None:
    """The same file named twice (or through a link) would count its every
    document twice: always a slip, never a merge."""
    from nbcli.cli.paths import same_file

    for i, path in enumerate(models):
        first = next((other for other in models[:i] if same_file(other, path)), None)  # (a missing file: the loader's)
        if first is not None:
            same = f"{path} is given twice" if first == path else f"{first} and {path} are the same file"
            raise NbcliError(
                f"{same}: merging a model with itself counts every document twice", hint="give each model once"
            )


@click.command()
@click.argument("model")
@click.option("-o", "--output", default="-", metavar="FILE", help="Where to write the text (default: stdout).")
def dump(model, output):
    """Write a model as text: options, classes, per-term counts, the record.

    The format (JSON lines, documented in docs/guide/learning.md, "The dump format")
    is made to be read by people and diff, and 'nbcli load' turns it back
    into the identical model.

    \b
    Example:
      nbcli dump mail.nb > mail.dump
      nbcli dump mail.nb | grep '^\\["subject:viagra"'
    """
    from nbcli.store import modelfile
    from nbcli.store.dumped import dump_lines

    classifier = modelfile.load(model)
    if output == "-":
        for line in dump_lines(classifier):
            write(line)
        return
    from nbcli.cli.paths import check_output

    check_output(output, [model])
    tmp = f"{output}.tmp-{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
            for line in dump_lines(classifier):
                fh.write(line + "\n")
        os.replace(tmp, output)
    except OSError as exc:
        raise NbcliError(f"cannot write {output}: {exc.strerror}") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


@click.command("load")
@click.argument("source", metavar="FILE")
@click.option("-o", "--output", required=True, metavar="MODEL", help="The model file to write (replaced atomically).")
@quiet_option
def load_(source, output, quiet):
    """Turn the text 'nbcli dump' wrote (FILE, or - for stdin) back into a model.

    \b
    Example:
      nbcli dump old.nb | nbcli load - -o new.nb
    """
    import sys

    from nbcli.cli.output import model_counts
    from nbcli.cli.paths import check_output
    from nbcli.store import modelfile
    from nbcli.store.dumped import load_lines

    diagnostics = make_diagnostics(quiet)
    if source != "-":
        check_output(output, [source])
    try:
        fh = sys.stdin if source == "-" else open(source, encoding="utf-8", errors="strict", newline="")
    except OSError as exc:
        raise NbcliError(f"cannot read {source}: {exc.strerror}") from None
    with fh:
        try:
            classifier = load_lines(fh, "<stdin>" if source == "-" else source)
        except UnicodeDecodeError:
            raise NbcliError(f"{source} is not UTF-8 text", hint="give a file written by 'nbcli dump'") from None
    modelfile.save(classifier, output)
    diagnostics.info(f"wrote {output} ({model_counts(classifier)})")


@click.command()
@click.argument("model")
@click.option("--min-count", type=click.IntRange(min=1), metavar="N", help="Drop terms seen fewer than N times.")
@click.option("--max-terms", type=click.IntRange(min=1), metavar="K", help="Keep at most the K most frequent terms.")
@click.option(
    "--unseen-since",
    metavar="DATE",
    help="Drop terms not seen since DATE (YYYY-MM-DD): last seen in the Date header of the newest message "
    "that has them, or when it was learned.",
)
@click.option("-o", "--output", metavar="MODEL", help="Write the pruned model here (default: replace MODEL).")
@click.option("-n", "--dry-run", is_flag=True, help="Say what would be dropped; change nothing.")
@json_option
@quiet_option
def prune(model, min_count, max_terms, unseen_since, output, dry_run, as_json, quiet):
    """Drop rarely seen or long unseen terms, to keep a learning model small.

    A pruned model forgets the counts of the terms it drops: it classifies
    as a model that never saw them would, and forgetting a document learned
    before the pruning takes away only the counts that remain.

    \b
    Example:
      nbcli prune mail.nb --min-count 2 --unseen-since 2025-01-01
    """
    from nbcli.cli.output import model_counts
    from nbcli.fit import learning
    from nbcli.store import modelfile

    if min_count is None and max_terms is None and unseen_since is None:
        raise click.UsageError("give --min-count, --max-terms or --unseen-since")
    day = learning.parse_day(unseen_since) if unseen_since is not None else None
    diagnostics = make_diagnostics(quiet)
    target = output or model
    if output:
        from nbcli.cli.paths import check_output

        check_output(output, [model])
    with modelfile.locked(model):
        current = modelfile.load(model)
        pruned, report = learning.prune(current, min_count=min_count, max_terms=max_terms, unseen_since=day)
        if not dry_run:
            modelfile.save(pruned, target)
    verb = "would drop" if dry_run else "dropped"
    diagnostics.info(
        f"{target}: {verb} {report['dropped']} of {report['terms']} terms, keeping {report['kept']}"
        + ("" if dry_run else f" ({model_counts(pruned)})")
    )
    if as_json:
        write_json({"model": target, "dry_run": dry_run, **report})


@click.command()
@click.argument("model")
@click.option(
    "--drop-bad-tail",
    is_flag=True,
    help="If the journal is corrupt, keep the updates before the damage and drop the rest.",
)
@quiet_option
def compact(model, drop_bad_tail, quiet):
    """Write a model's journal of learned updates into the model file.

    learn, forget and serve's TELL append each update to MODEL.journal
    beside the model instead of writing the whole model; every command
    reads the model through it. compact writes the model with the updates
    in it and empties the journal, in one locked, atomic step (learning
    does this by itself once the journal passes three quarters of the
    model's size or 16 MB, or once its last checkpoint does for a journal
    with checkpoints). Compact before copying a model, or copy both files.

    \b
    Example:
      nbcli compact mail.nb
      nbcli compact mail.nb --drop-bad-tail   # a damaged journal: keep what is good
    """
    from nbcli.store import modelfile

    diagnostics = make_diagnostics(quiet)
    applied, size = modelfile.compact(model, drop_bad_tail=drop_bad_tail)
    if applied:
        diagnostics.info(f"{model}: compacted {applied} update(s) ({size} bytes of journal) into the model")
    else:
        diagnostics.info(f"{model}: no updates to compact")
    diagnostics.finish()

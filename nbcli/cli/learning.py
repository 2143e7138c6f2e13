"""The learning-loop commands: learn and forget.

Registered on the `nbcli` group by cli/main.py; commands only (the work is
in fit.learning and store.modelfile). Every command that changes
a model reads its inputs first, then takes the model's lock, reads the
model as it is now, changes it and replaces it atomically (see
`modelfile.locked` and docs/guide/learning.md, "Learning, and what updates
guarantee").
"""

from __future__ import annotations

import os

import click

from nbcli.cli.option_bundles import (
    cluster_option,
    jobs_option,
    json_option,
    quiet_option,
    read_options,
    training_options,
)
from nbcli.cli.options import (
    TRAINING_PARAM_NAMES,
    check_inputs,
    given_options,
    make_diagnostics,
    pipeline_workers,
    read_opts,
    training_setup,
)
from nbcli.cli.stdio import write_json
from nbcli.errors import NbcliError

_WITHOUT_CLASS = "the inputs are read as 'nbcli train' reads a corpus: class folders or labelled tables."


def _class_options(f, without: str = _WITHOUT_CLASS):
    f = click.option("--ham", "as_ham", is_flag=True, help="Short for --class ham (a spam model's classes).")(f)
    f = click.option("--spam", "as_spam", is_flag=True, help="Short for --class spam (a spam model's classes).")(f)
    f = click.option(
        "-c",
        "--class",
        "label",
        metavar="CLASS",
        help=f"The class of every document in the inputs. Without it (and without --spam or --ham), {without}",
    )(f)
    return f


def _forget_class_options(f):
    return _class_options(f, "each document is forgotten from the class the model's record holds it in.")


def _label(label, as_spam, as_ham) -> str | None:
    if label is not None and not label.strip():  # else taken as no --class: "has no labels; give a folder ..."
        raise click.UsageError("--class needs a class name, such as --class spam")
    chosen = [x for x in (label, "spam" if as_spam else None, "ham" if as_ham else None) if x]
    if len(chosen) > 1:
        raise click.UsageError("give one of --class, --spam and --ham")
    return chosen[0] if chosen else None


def _documents(inputs, label, kw, diagnostics):
    """The documents to learn or forget: with a class, every input's
    documents have it (no input: standard input, say one message from a
    mail hook); without, the inputs are a labelled corpus."""
    from nbcli.text.sources import labeled_corpus

    opts = read_opts(kw, diagnostics)
    if label is not None:
        return labeled_corpus([], [(label, path) for path in inputs or ("-",)], opts)
    if not inputs:
        raise click.UsageError("give --class CLASS (or --spam, --ham), or a labelled CORPUS to read the classes from")
    return labeled_corpus(inputs, [], opts)


def _analysed(analyzer, docs, workers, diagnostics):
    """The documents analysed (on the workers when there are many), before
    the model's lock is taken. workers: --jobs, or `pipeline_workers`."""
    from nbcli.run.pipeline import analyse_to_learn as analyse

    with diagnostics.progress("reading", docs.total) as advance:
        return analyse(analyzer, docs, jobs=workers, progress=lambda batch: advance(docs.progress(batch)))


def _spam_shortcut(classifier, label, as_spam, as_ham, path) -> None:
    if (as_spam or as_ham) and classifier is not None and label not in classifier.classes:
        raise NbcliError(
            f"--{label} is for a model with classes ham and spam; {path} has {', '.join(classifier.classes)}",
            hint="use --class CLASS",
        )


def _summary(outcome, label, path) -> str:
    parts = []
    what = f"as {label}" if label else ""
    if outcome.learned:
        parts.append(f"learned {outcome.learned} document(s) {what}".rstrip())
    for old, n in sorted(outcome.moved.items()):
        parts.append(f"moved {n} document(s) from {old}" + (f" to {label}" if label else ""))
    if outcome.already:
        parts.append(f"{outcome.already} document(s) already learned {what}; not counted again".rstrip())
    if outcome.forgotten:
        parts.append(f"forgot {outcome.forgotten} document(s) {what}".rstrip())
    if not parts:
        parts.append("nothing to do: no documents in the input")
    return f"{path}: " + "; ".join(parts)


@click.command()
@click.argument("model")
@click.argument("inputs", nargs=-1, metavar="[INPUT]...")
@_class_options
@click.option("--create", is_flag=True, help="Start a new model if MODEL does not exist (with the training options).")
@click.option(
    "--classes",
    metavar="A,B,...",
    help="With --create: the new model's classes (default with --spam or --ham: ham,spam).",
)
@click.option(
    "--new-class",
    is_flag=True,
    help="Let the documents add a class MODEL does not have (without it, such a class is refused as a typo).",
)
@json_option
@read_options
@training_options
@jobs_option
@cluster_option
@quiet_option
@click.pass_context
def learn(ctx, model, inputs, label, as_spam, as_ham, create, classes, new_class, as_json, **kw):
    """Add documents to a model, exactly as if it had been trained with them.

    INPUT: files, folders, mboxes, Maildirs or tables, as 'nbcli train'
    reads; none, or -, reads standard input (one message from a mail hook,
    or an mbox). The model's record of learned documents makes a repeat
    harmless: a document learned in the same class again changes nothing,
    and one learned in another class is moved (its counts leave that
    class). A class MODEL does not have is refused unless --new-class is
    given. The update is locked and atomic: concurrent learners take
    turns, and a crash leaves the old model or the new one. A MODEL that
    is a symbolic link changes the file it points to.

    \b
    Example:
      nbcli learn mail.nb --spam < message          # a procmail/Dovecot hook
      nbcli learn mail.nb --ham ~/Mail/misfiled/
      nbcli learn --create mail.nb --spam spam.mbox   # start from nothing
    """
    from nbcli.cli.paths import check_output
    from nbcli.fit import learning
    from nbcli.run.updating import learn_into
    from nbcli.store import modelfile
    from nbcli.store.modelfile import file_stamp

    label = _label(label, as_spam, as_ham)
    diagnostics = make_diagnostics(kw["quiet"])
    check_output(model, list(inputs), option="MODEL")
    workers = pipeline_workers(kw)
    exists = os.path.exists(model)
    trained_with = [name for name, _ in given_options(ctx, TRAINING_PARAM_NAMES)]
    if exists:
        stamp = file_stamp(model)  # before reading: a file replaced meanwhile then differs
        current = modelfile.load_view(model)
        _spam_shortcut(current, label, as_spam, as_ham, model)
        learning.check_learnable(current, model)
        if label is not None and not new_class:
            _check_classes(current, [label], model, "learned")
        if trained_with and not create:
            raise click.UsageError(
                f"{trained_with[0]} is a training option; {model} keeps the options it was made with"
            )
        if trained_with:  # --create on a model that exists: a hook may say it every time
            diagnostics.warn(f"{model} exists, so {', '.join(trained_with)} (for --create) are ignored")
        analyzer_options = current.analyzer_options
    elif not create:
        raise NbcliError(f"{model}: no such model file", hint="add --create to start a new model")
    else:
        analyzer_options, options = training_setup(kw)
        names = _new_classes(classes, label, as_spam or as_ham)
    docs = _documents(inputs, label, kw, diagnostics)
    from nbcli.text.analyzer import Analyzer

    analysed = _analysed(Analyzer(analyzer_options), docs, workers, diagnostics)

    def check(current):
        if not new_class:
            _check_classes(current, learning.new_classes(current, analysed), model, "learned")

    def start_afresh():
        if not create:
            raise NbcliError(f"{model}: no such model file (it was removed meanwhile)", hint="add --create")
        if exists:  # removed meanwhile: start afresh with the training options
            fresh, fresh_options = training_setup(kw)
            return learning.create(fresh, fresh_options, _new_classes(classes, label, as_spam or as_ham), analysed)
        return learning.create(analyzer_options, options, names, analysed)

    updated, outcome = learn_into(
        model, analysed, analyzer_options, (current, stamp) if exists else None, check, start_afresh
    )
    _said(outcome, label, model, updated, as_json, diagnostics)


def _check_classes(classifier, labels, path: str, done: str) -> None:
    """Refuse classes the model does not have (a typo in --class would
    otherwise add a class for good)."""
    foreign = sorted(set(labels) - set(classifier.classes))
    if foreign:
        raise NbcliError(
            f"{path} has no class {', '.join(foreign)} (its classes: {', '.join(classifier.classes)}); "
            f"nothing was {done}",
            hint="check the spelling"
            + (", or add --new-class to add it" if done == "learned" else ", or give no --class"),
        )


def _new_classes(classes, label, spam_pair) -> list[str]:
    names = [c.strip() for c in classes.split(",") if c.strip()] if classes else []
    if spam_pair:
        names = names or ["ham", "spam"]
    if label is not None and names and label not in names:
        raise NbcliError(f"--classes {classes} does not name the class {label}")
    return names + ([label] if label is not None else [])


def _said(outcome, label, model, updated, as_json, diagnostics) -> None:
    """What learn and forget did: a line on stderr, and with --json on stdout."""
    from nbcli.cli.output import model_counts
    from nbcli.nb.calibrators import calibration_note, decision_note

    diagnostics.info(f"{_summary(outcome, label, model)} ({model_counts(updated)})")
    for note in (calibration_note(updated, model), decision_note(updated, model)):
        if note:
            diagnostics.info(note)
    if as_json:
        write_json({"model": model, **outcome.as_dict(), "classes": _class_counts(updated)})
    diagnostics.finish()
    check_inputs()


def _class_counts(classifier) -> dict:
    return {c: int(n) for c, n in zip(classifier.classes, classifier.model.class_count)}


@click.command()
@click.argument("model")
@click.argument("inputs", nargs=-1, metavar="[INPUT]...")
@_forget_class_options
@json_option
@read_options
@jobs_option
@quiet_option
def forget(model, inputs, label, as_spam, as_ham, as_json, **kw):
    """Take documents a model learned out of it again, exactly.

    INPUT: files, folders, mboxes, Maildirs or tables; none, or -, reads
    standard input. With --class (--spam, --ham) each document must be in
    the model's record of learned documents in that class; without, each
    is forgotten from the class the record holds it in. If any is not in
    the record, nothing changes and the command says which (exit 1).

    \b
    Example:
      nbcli forget mail.nb --spam < message
      nbcli forget mail.nb < message       # from whichever class it was learned in
    """
    from nbcli.fit import learning
    from nbcli.run.updating import change_locked
    from nbcli.store import modelfile
    from nbcli.text.sources import labeled_corpus

    label = _label(label, as_spam, as_ham)
    diagnostics = make_diagnostics(kw["quiet"])
    current = modelfile.load_view(model)
    learning.check_learnable(current, model)  # a table model, a model pruned by --min-df: as learn refuses them
    _spam_shortcut(current, label, as_spam, as_ham, model)
    if label is not None:
        _check_classes(current, [label], model, "forgotten")
    docs = labeled_corpus([], [(label, path) for path in inputs or ("-",)], read_opts(kw, diagnostics))
    analysed = _analysed(current.analyzer, docs, kw["jobs"], diagnostics)
    with modelfile.locked(model):
        updated, outcome, _ = change_locked(model, modelfile.load_view(model), analysed, forgetting=True)
    _said(outcome, label, model, updated, as_json, diagnostics)

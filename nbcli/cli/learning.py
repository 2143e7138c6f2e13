"""The learning-loop commands: learn, forget, merge, dump, load, prune.

Registered on the `nbcli` group by cli.py; like cli.py, commands only (the
work is in `learning`, `dump` and `modelfile`). Every command that changes
a model reads its inputs first, then takes the model's lock, reads the
model as it is now, changes it and replaces it atomically (see
`modelfile.locked` and the README's "Learning, and what updates
guarantee").
"""

from __future__ import annotations

import os

import click

from nbcli.cli.options import (
    TRAINING_PARAM_NAMES,
    check_inputs,
    cluster_jobs,
    cluster_option,
    given_options,
    jobs_option,
    json_option,
    make_diagnostics,
    model_read_opts,
    quiet_option,
    read_options,
    read_opts,
    training_options,
    training_setup,
    true_label_option,
)
from nbcli.cli.stdio import write, write_json
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


def _analysed(analyzer, docs, kw, diagnostics):
    """The documents analysed (on --jobs workers when there are many),
    before the model's lock is taken."""
    from nbcli.run.pipeline import analyse_to_learn as analyse

    with diagnostics.progress("reading", docs.total) as advance:
        return analyse(analyzer, docs, jobs=kw["jobs"], progress=lambda batch: advance(docs.progress(batch)))


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


def _after(classifier) -> str:
    learned = classifier.model.class_count
    expected = getattr(classifier, "expected", None)
    if expected is not None:  # an EM model: the documents learned, not its unlabelled ones' expected share
        learned = learned - expected[1]
    counts = ", ".join(f"{c} {round(float(n))}" for c, n in zip(classifier.classes, learned))
    return f"now {counts}; {len(classifier.vocabulary)} terms"


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
    from nbcli.store import modelfile

    label = _label(label, as_spam, as_ham)
    diagnostics = make_diagnostics(kw["quiet"])
    check_output(model, list(inputs), option="MODEL")
    kw["jobs"] = cluster_jobs(kw)
    exists = os.path.exists(model)
    trained_with = [name for name, _ in given_options(ctx, TRAINING_PARAM_NAMES)]
    if exists:
        stamp = _stamp(model)  # before reading: a file replaced meanwhile then differs
        current = modelfile.load(model)
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

    analysed = _analysed(Analyzer(analyzer_options), docs, kw, diagnostics)
    with modelfile.locked(model):
        if os.path.exists(model):
            if not exists or _stamp(model) != stamp:  # changed since it was read: read it as it is now
                current = modelfile.load(model)
            learning.check_learnable(current, model)
            if not new_class:
                _check_classes(current, learning.new_classes(current, analysed), model, "learned")
            if current.analyzer_options != analyzer_options:  # replaced meanwhile by another kind of model
                raise NbcliError(
                    f"{model} was replaced by a model with other analyzer options while the input was read; "
                    "nothing was learned",
                    hint="run the command again",
                )
            updated, outcome = learning.learn(current, analysed)
            changed = updated is not current
        elif create:
            if exists:  # removed meanwhile: start afresh with the training options
                analyzer_options, options = training_setup(kw)
                names = _new_classes(classes, label, as_spam or as_ham)
            updated, outcome = learning.create(analyzer_options, options, names, analysed)
            changed = True
        else:
            raise NbcliError(f"{model}: no such model file (it was removed meanwhile)", hint="add --create")
        if changed:
            modelfile.save(updated, model)
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


def _stamp(path: str) -> tuple:
    """What changes when a model file is replaced (writers rename a new file
    over it, so its inode changes)."""
    st = os.stat(path)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _new_classes(classes, label, spam_pair) -> list[str]:
    names = [c.strip() for c in classes.split(",") if c.strip()] if classes else []
    if spam_pair:
        names = names or ["ham", "spam"]
    if label is not None and names and label not in names:
        raise NbcliError(f"--classes {classes} does not name the class {label}")
    return names + ([label] if label is not None else [])


def _said(outcome, label, model, updated, as_json, diagnostics) -> None:
    """What learn and forget did: a line on stderr, and with --json on stdout."""
    from nbcli.nb.calibrators import calibration_note

    diagnostics.info(f"{_summary(outcome, label, model)} ({_after(updated)})")
    note = calibration_note(updated, model)
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
    from nbcli.store import modelfile
    from nbcli.text.sources import labeled_corpus

    label = _label(label, as_spam, as_ham)
    diagnostics = make_diagnostics(kw["quiet"])
    current = modelfile.load(model)
    _spam_shortcut(current, label, as_spam, as_ham, model)
    if label is not None:
        _check_classes(current, [label], model, "forgotten")
    docs = labeled_corpus([], [(label, path) for path in inputs or ("-",)], read_opts(kw, diagnostics))
    analysed = _analysed(current.analyzer, docs, kw, diagnostics)
    with modelfile.locked(model):
        current = modelfile.load(model)
        updated, outcome = learning.forget(current, analysed)
        if outcome.forgotten:
            modelfile.save(updated, model)
    _said(outcome, label, model, updated, as_json, diagnostics)


@click.command()
@click.argument("models", nargs=-1, required=True, metavar="MODEL...")
@click.option("-o", "--output", required=True, metavar="MODEL", help="The merged model (replaced atomically).")
@quiet_option
def merge(models, output, quiet):
    """Add up the counts of models trained with the same options.

    The merged model is the one training on all their documents would give
    (the records of learned documents are united). Models with different
    analyzer or smoothing options, event models or classes are refused,
    with the difference named.

    \b
    Example:
      nbcli merge alice.nb bob.nb -o team.nb
    """
    from nbcli.fit import learning
    from nbcli.store import modelfile

    diagnostics = make_diagnostics(quiet)
    loaded = [modelfile.load(path) for path in models]
    merged = learning.merge(loaded, list(models))
    modelfile.save(merged, output)
    diagnostics.info(f"wrote {output}: {len(models)} models merged ({_after(merged)})")
    if merged.meta.get("calibration", {}).get("dropped"):
        diagnostics.info(f"{output} is not calibrated; fit one on held-out documents: nbcli calibrate {output} HELDOUT")


@click.command()
@click.argument("model")
@click.option("-o", "--output", default="-", metavar="FILE", help="Where to write the text (default: stdout).")
def dump(model, output):
    """Write a model as text: options, classes, per-term counts, the record.

    The format (JSON lines, documented in the README's "The dump format")
    is made to be read by people and diff, and 'nbcli load' turns it back
    into the identical model.

    \b
    Example:
      nbcli dump mail.nb > mail.dump
      nbcli dump mail.nb | grep '^\\["subject:viagra"'
    """
    from nbcli.store import modelfile
    from nbcli.store.modelfile import dump_lines

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

    from nbcli.cli.paths import check_output
    from nbcli.store import modelfile
    from nbcli.store.modelfile import load_lines

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
    diagnostics.info(f"wrote {output} ({_after(classifier)})")


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
        + ("" if dry_run else f" ({_after(pruned)})")
    )
    if as_json:
        write_json({"model": target, "dry_run": dry_run, **report})


def _online_cutoffs(kw) -> tuple[float, float]:
    """The online protocol's unsure band: as given, else the raw band (its
    models are uncalibrated; see defaults.ONLINE_SPAM_CUTOFF)."""
    from nbcli.cli.options import is_given
    from nbcli.defaults import ONLINE_HAM_CUTOFF, ONLINE_SPAM_CUTOFF

    ctx = click.get_current_context()
    return (
        kw["spam_cutoff"] if is_given(ctx, "spam_cutoff") else ONLINE_SPAM_CUTOFF,
        kw["ham_cutoff"] if is_given(ctx, "ham_cutoff") else ONLINE_HAM_CUTOFF,
    )


def online_eval(corpus, label_pairs, order, train_rule, warmup, plot, as_json, kw, diagnostics):
    """`nbcli eval --online`: see `online`."""
    from nbcli.fit import online
    from nbcli.fit.settings import described_options, resolved
    from nbcli.text.analyzer import Analyzer
    from nbcli.text.sources import labeled_corpus, parse_label_pair

    if not corpus and not label_pairs:
        raise click.UsageError("give a CORPUS or at least one --label CLASS=PATH to run the online protocol on")
    analyzer_options, options = training_setup(kw)
    if options.min_df != 1 or options.max_df != 1.0 or options.max_features is not None or options.select:
        raise NbcliError(
            "eval --online learns message by message, which cannot prune (--min-df, --max-df, "
            "--max-features, --select)",
            hint="drop them",
        )
    pairs = [parse_label_pair(p) for p in label_pairs]
    docs = labeled_corpus(corpus, pairs, read_opts(kw, diagnostics))
    with diagnostics.progress("reading", docs.total) as advance:
        stream = online.analyse_stream(
            docs, Analyzer(analyzer_options), progress=lambda batch: advance(docs.progress(batch))
        )
    if not len(stream.y):
        raise NbcliError("the corpus has no documents", hint="check the paths")
    options, alpha, unknown = resolved(options, 2 * stream.mail_docs > len(stream.y))
    settings = online.settings_for(options, alpha, unknown, stream.classes)
    result = online.run(
        stream,
        options.kind,
        settings,
        online.order_of(stream, order),
        train_rule,
        warmup,
        kw["spam_class"],
        *_online_cutoffs(kw),
    )
    report = online.report(result, train_rule, order)
    report["options"] = described_options(options, alpha, unknown)
    if plot:
        from nbcli.cli.plot import write as write_plot

        title = f"online learning curve ({report['messages']} messages, train on {train_rule})"
        write_plot(online.curve_figure(result, title), plot)
    if as_json:
        write_json(report)
    else:
        write(online_text(report))
    diagnostics.finish()
    check_inputs()


def online_text(r: dict) -> str:
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


@click.command()
@click.argument("model")
@click.argument("heldout", nargs=-1, metavar="[HELDOUT]...")
@true_label_option
@click.option(
    "--method",
    type=click.Choice(["platt", "temperature", "isotonic", "none"]),
    default=None,
    show_default="platt for two classes, temperature for more",
    help="The calibration map to fit; none removes the model's calibration.",
)
@click.option("-o", "--output", metavar="MODEL", help="Write the calibrated model here instead of replacing MODEL.")
@json_option
@read_options
@jobs_option
@quiet_option
def calibrate(model, heldout, label_pairs, method, output, as_json, **kw):
    """Fit a model's calibration map on labelled documents it was not trained on.

    HELDOUT is read as 'nbcli eval' reads a corpus (class folders, labelled
    tables, --label CLASS=PATH). The map replaces the one 'nbcli train'
    fitted by cross-validation: refit it when 'nbcli learn' says the
    calibration is stale, or after 'train --from-model' or 'merge'. MODEL is
    replaced atomically (or -o writes a new file). The figures said are on
    the documents the map was fitted to, so they flatter it: judge it with
    'nbcli eval --calibration' on other documents. A map needs at least 20
    documents of every class, left out are those the model's record shows
    it was trained on, and a map that would reverse the model's ranking
    (fitted on its mistakes) is refused.

    \b
    Example:
      nbcli calibrate mail.nb --label ham=~/Mail/ham-2026-10 --label spam=~/Mail/spam-2026-10
      nbcli calibrate topics.nb sample_corpora/topics/test.jsonl --method isotonic
    """
    import numpy as np

    from nbcli.cli.paths import check_output
    from nbcli.evaluate.calibration import summary
    from nbcli.run.parallel import score_labelled
    from nbcli.store import modelfile
    from nbcli.text.sources import labeled_corpus, parse_label_pair

    diagnostics = make_diagnostics(kw["quiet"])
    target = output or model
    pairs = [parse_label_pair(p) for p in label_pairs]
    if not heldout and not pairs:
        raise click.UsageError("give the HELDOUT documents: a labelled corpus, or --label CLASS=PATH")
    check_output(target, [*heldout, *(path for _, path in pairs)], option="-o" if output else "MODEL")
    if not os.path.exists(model):
        modelfile.load(model)  # its one-line error: no such model file
    stamp = _stamp(model)  # before reading: a file replaced meanwhile then differs
    current = modelfile.load(model)
    current.check_ready(model)
    if method is None:
        from nbcli.defaults import default_calibration

        method = default_calibration(len(current.classes))
    scores = None
    if method != "none":
        docs = labeled_corpus(heldout, pairs, model_read_opts(current, kw, diagnostics))
        learned: list[bool] = []  # per document: the model's record holds it
        with diagnostics.progress("scoring", docs.total) as advance:
            labels, scores = score_labelled(
                current.uncalibrated(),
                _marking_learned(current, docs, learned),
                progress=lambda batch: advance(docs.progress(batch)),
                jobs=kw["jobs"],
            )
        index = {c: i for i, c in enumerate(current.classes)}
        foreign = sorted({lab for lab in labels if lab not in index})
        if foreign:
            diagnostics.warn(f"skipped the documents of classes {model} does not have: {', '.join(foreign)}")
        known = np.array([lab in index for lab in labels], dtype=bool)
        trained_on = np.array(learned, dtype=bool) if learned else np.zeros(len(labels), dtype=bool)
        left_out = int((known & trained_on).sum())
        known &= ~trained_on
        truth = np.array([index[lab] for lab, k in zip(labels, known) if k], dtype=np.int64)
        scores = scores[known]
        _check_heldout(current.classes, truth, left_out, model)
        if left_out:
            diagnostics.warn(
                f"left out {left_out} held-out document{'s' if left_out != 1 else ''} {model} was trained on "
                "(its record holds them): its scores of them flatter it"
            )
    with modelfile.locked(target):
        if _stamp(model) != stamp:
            raise NbcliError(
                f"{model} changed while the held-out documents were scored; nothing was written",
                hint="run the command again",
            )
        updated = current.uncalibrated()
        meta = {k: v for k, v in current.meta.items() if k != "calibration"}
        result = {"model": target, "method": None}
        if scores is not None:
            from nbcli.fit.training import calibration_meta
            from nbcli.nb.calibrators import fit_increasing

            updated.calibration = fit_increasing(method, scores, truth, updated.classes)
            updated.meta = {**meta, "calibration": {}}
            updated.meta["calibration"] = calibration_meta(updated, f"held-out: {' '.join([*heldout, *label_pairs])}")
            before, after = summary(scores, truth), summary(updated.calibration.apply(scores), truth)
            rows = np.arange(len(truth))
            loss = [float(-scores[rows, truth].mean()), float(-updated.calibration.apply(scores)[rows, truth].mean())]
            result.update(
                method=method,
                map=updated.calibration.describe(),
                documents=int(len(truth)),
                before={"log_loss": loss[0], "brier": before["brier"], "ece": before["ece"]},
                after={"log_loss": loss[1], "brier": after["brier"], "ece": after["ece"]},
            )
        else:
            updated.meta = meta
        modelfile.save(updated, target)
    if result["method"] is None:
        diagnostics.info(f"wrote {target}: not calibrated (raw event-model posteriors)")
    else:
        b, a = result["before"], result["after"]
        diagnostics.info(
            f"wrote {target}: {result['map']}, fitted on {result['documents']} held-out documents; on them, "
            f"log loss {b['log_loss']:.4g} -> {a['log_loss']:.4g}, ECE {b['ece']:.4g} -> {a['ece']:.4g}"
        )
    if as_json:
        write_json(result)
    diagnostics.finish()
    check_inputs()


def _marking_learned(classifier, docs, learned: list):
    """The documents, as they pass, appending to `learned` whether the
    classifier's record holds each (its content digest, in any class). An
    extra analysis of each document, only for a model with a record."""
    from nbcli.text.identity import digests
    from nbcli.text.sources import batches

    record = classifier.record
    if record is None or not len(record):
        yield from docs
        return
    for batch in batches(docs):
        if batch:
            tokens = classifier.analyzer.analyze([d.data for d in batch], [d.kind for d in batch])
            learned.extend(len(record.find(digest)) > 0 for digest in digests(tokens.hashes, tokens.doc_ptr))
        yield from batch


def _check_heldout(classes: list[str], truth, left_out: int, model: str) -> None:
    """Refuse held-out documents too few to fit a map on: fewer than
    MIN_CALIBRATION_PER_CLASS of some class (none at all, as /dev/null
    gives, is one-sided)."""
    import numpy as np

    from nbcli.defaults import MIN_CALIBRATION_PER_CLASS

    per_class = np.bincount(truth, minlength=len(classes))
    if per_class.min() >= MIN_CALIBRATION_PER_CLASS:
        return
    c = int(per_class.argmin())
    besides = f", after leaving out the {left_out} {model} was trained on" if left_out else ""
    raise NbcliError(
        f"the held-out documents have {int(per_class[c]) or 'none'} of class {classes[c]}{besides}: "
        f"a calibration map needs at least {MIN_CALIBRATION_PER_CLASS} of every class",
        hint="give more labelled documents of every class that the model was not trained on",
    )


COMMANDS = (learn, forget, merge, dump, load_, prune, calibrate)

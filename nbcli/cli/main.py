"""The command line: click commands wired to the library.

With options.py (the option types and bundles, and their conversion to
the library's option objects), the only module that imports click. It
keeps start-up light (numpy, scipy, joblib and rich are imported inside
the commands that need them, so `nbcli --help` starts fast) and turns every library error into one line on
stderr and an exit code:

    0  success
    1  an error (bad input, bad model file, ...): `nbcli: error: ...`
    2  a usage error (unknown option, bad option value)
  130  interrupted (Ctrl-C)
  141  stdout closed early (e.g. `nbcli predict ... | head`)
"""

from __future__ import annotations

import os
import sys

# numpy's BLAS would start a thread pool at import (~40 ms) that nbcli never
# uses: its arithmetic is elementwise and bincount, and parallelism is by
# processes (see pipeline.py).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import click  # noqa: E402

from nbcli import __version__  # noqa: E402
from nbcli.cli.options import (  # noqa: E402
    READ_PARAM_NAMES,
    TABLE_PARAMS,
    TRAINING_PARAM_NAMES,
    Limit,
    calibration_options,
    check_cutoffs,
    check_inputs,
    cluster_jobs,
    cluster_option,
    cutoff_options,
    eval_options,
    explain_option,
    given_options,
    in_flag_terms,
    is_given,
    jobs_option,
    json_option,
    make_diagnostics,
    message_cap_option,
    model_read_opts,
    quiet_option,
    read_options,
    read_opts,
    refuse_cluster,
    refuse_corpus_options,
    refuse_options,
    refuse_training_options,
    seed_option,
    table_options,
    table_setup,
    target_fpr_option,
    train_command,
    training_options,
    training_setup,
    true_label_option,
    unfixed,
)
from nbcli.cli.stdio import err, guard_standard_streams, stdout_is_utf8, write, write_json  # noqa: E402
from nbcli.errors import NbcliError  # noqa: E402

# train --em-weight's default: measured by make bench-em (README, "Unlabelled documents")
EM_WEIGHT = 1.0
# train --em-tokens's default: the E step's evidence cap, measured by make bench-em (em.posterior, em.labelled_start)
EM_TOKENS = 4.0

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class _StdoutGone(Exception):
    """The reader of stdout went away (EPIPE). Not an OSError, so that click's
    own EPIPE handling (exit 1) does not swallow it: nbcli exits 141, as a
    process killed by SIGPIPE would."""


class NbcliGroup(click.Group):
    """A click group whose errors are one line each, never a traceback."""

    def invoke(self, ctx):
        try:
            rv = super().invoke(ctx)
            sys.stdout.flush()  # here, not at exit, where a closed pipe could only be ignored
            return rv
        except BrokenPipeError:
            raise _StdoutGone() from None

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        try:
            rv = super().main(
                args=args, prog_name=prog_name or "nbcli", complete_var=complete_var, standalone_mode=False, **extra
            )
        except click.UsageError as exc:
            where = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
            err(f"nbcli: error: {exc.format_message()}{where}")
            sys.exit(2)
        except click.ClickException as exc:
            err(f"nbcli: error: {exc.format_message()}")
            sys.exit(exc.exit_code)
        except NbcliError as exc:
            err(f"nbcli: error: {in_flag_terms(exc)}")  # the library names parameters; say their flags
            sys.exit(exc.exit_code)
        except (click.Abort, KeyboardInterrupt):
            err("nbcli: interrupted")
            sys.exit(130)
        except (BrokenPipeError, _StdoutGone):
            # The reader went away: stop quietly, like other Unix tools (and
            # let nothing flush into the closed pipe at exit).
            try:
                os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            except OSError:
                pass
            sys.exit(141)
        except OSError as exc:
            err(f"nbcli: error: {exc.strerror or exc}")
            sys.exit(1)
        except Exception as exc:  # a bug: still one line, unless debugging
            if os.environ.get("NBCLI_DEBUG"):
                raise
            err(
                f"nbcli: internal error: {type(exc).__name__}: {exc} (please report it; NBCLI_DEBUG=1 shows the "
                "traceback)"
            )
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


# -- commands --------------------------------------------------------------------


@click.group(name="nbcli", cls=NbcliGroup, context_settings=CONTEXT)
@click.version_option(__version__, "--version", prog_name="nbcli", message="%(prog)s %(version)s")
def cli():
    """nbcli: a Naive Bayes text and spam classifier for the command line.

    Train a model on labelled documents, then classify new ones. Results go
    to stdout, one line per document; progress and diagnostics to stderr.

    \b
    Example:
      nbcli train sample_corpora/mail/train -o mail.nb
      nbcli predict mail.nb message.eml
      nbcli eval mail.nb sample_corpora/mail/test
      nbcli eval --cv 5 sample_corpora/mail/train
      nbcli tune sample_corpora/mail/train
      nbcli info mail.nb
      nbcli learn mail.nb --spam < misfiled-message.eml
      nbcli eval --online sample_corpora/mail/train
    """


@cli.command()
@click.argument("corpus", nargs=-1)
@click.option("-o", "--output", required=True, metavar="MODEL", help="Model file to write (replaced atomically).")
@click.option(
    "--label",
    "label_pairs",
    multiple=True,
    metavar="CLASS=PATH",
    help="Documents in PATH (a file or folder) have class CLASS. Repeatable.",
)
@click.option(
    "--from-model",
    metavar="MODEL",
    help="Re-derive the tables of MODEL from its stored counts with other smoothing, prior, event model "
    "(where the counts allow) or pruning options, without the corpus. Options not given keep MODEL's values.",
)
@click.option(
    "--calibrate",
    type=click.Choice(["platt", "temperature", "isotonic", "none"]),
    default=None,
    show_default="platt for two classes, temperature for more",
    help="Fit a map from the model's scores to probabilities that mean what they say, on held-out scores from "
    "5-fold cross-validation of the corpus (up to 2,500 documents per class are held out). platt and "
    "temperature keep the ranking of two classes; none gives the event model's raw posteriors.",
)
@click.option(
    "--unlabeled",
    multiple=True,
    metavar="PATH",
    help="Also learn from these unlabelled documents by EM (Nigam et al. 2000): their expected counts, weighted by "
    "--em-weight, join the labelled counts. Repeatable; --model multinomial or bernoulli. A document also in "
    "the labelled corpus is skipped (a warning counts them).",
)
@click.option(
    "--em-weight",
    type=click.FloatRange(0, 1),
    default=EM_WEIGHT,
    show_default=True,
    metavar="LAMBDA",
    help="Weight of an unlabelled document against a labelled one (0: the labelled-only model).",
)
@click.option("--em-iter", type=click.IntRange(1, 1000), default=20, show_default=True, help="EM iterations at most.")
@click.option(
    "--em-tokens",
    type=click.FloatRange(min=0),
    default=EM_TOKENS,
    show_default=True,
    metavar="N",
    help="E step: weigh a longer document's evidence as N tokens' (its log-likelihoods times N / length), so "
    "long messages do not pull EM into one class; 0: the plain E step.",
)
@click.option(
    "--em-components",
    type=click.IntRange(1, 99),
    default=1,
    show_default=True,
    metavar="K",
    help="Mixture components per class (Nigam et al. section 5): a class that is several topics gets several.",
)
@click.option(
    "--em-tol",
    type=click.FloatRange(min=0),
    default=1e-6,
    show_default=True,
    help="Stop when the objective's relative change is under this.",
)
@read_options
@training_options
@table_options
@jobs_option
@cluster_option
@quiet_option
def train(
    corpus,
    output,
    label_pairs,
    from_model,
    calibrate,
    unlabeled,
    em_weight,
    em_iter,
    em_tokens,
    em_tol,
    em_components,
    **kw,
):
    """Train a model on labelled documents.

    CORPUS is a folder with one sub-folder per class (the sub-folder's name
    is the label; files are found recursively, hidden files are skipped), a
    TSV/CSV/JSON-lines file with text and label fields, or - for such a
    table on stdin. --label CLASS=PATH adds the documents in PATH with class
    CLASS. Bytes are decoded as UTF-8, or as Windows-1252 where they are not
    valid UTF-8.

    \b
    Example:
      nbcli train sample_corpora/mail/train -o mail.nb
      nbcli train --label spam=spam/ --label ham=ham/ -o mail.nb
      nbcli train sample_corpora/topics/train.jsonl --ngrams 2 -o topics.nb
      nbcli train sample_corpora/topics/train.jsonl --model complement --tf-log --idf --length-norm -o c.nb
      nbcli train --from-model mail.nb --alpha 0.1 -o mail-0.1.nb
    """
    from nbcli.cli.paths import check_output
    from nbcli.run.pipeline import train as train_model
    from nbcli.store import modelfile
    from nbcli.text.sources import labeled_corpus, parse_label_pair

    diagnostics = make_diagnostics(kw["quiet"])
    if any(is_given(click.get_current_context(), name) for name in TABLE_PARAMS):
        refuse_cluster(kw, "a table model (it trains in this process)")
    kw["jobs"] = cluster_jobs(kw)
    check_output(output, [*corpus, *(parse_label_pair(p)[1] for p in label_pairs)])
    modelfile.check_writable(output)
    ctx = click.get_current_context()
    if not unlabeled:
        refuse_options(ctx, ["em_weight", "em_iter", "em_tokens", "em_tol", "em_components"], "--unlabeled")
    else:
        if from_model or any(is_given(ctx, name) for name in TABLE_PARAMS):
            raise click.UsageError("--unlabeled trains a text model from a corpus (no --from-model, no --features)")
        classifier = _train_em(
            corpus,
            label_pairs,
            unlabeled,
            calibrate,
            em_weight,
            em_iter,
            em_tol,
            em_components,
            kw,
            diagnostics,
            em_tokens,
        )
        modelfile.save(classifier, output)
        em = classifier.meta["em"]
        diagnostics.info(
            f"wrote {output}: {classifier.meta['n_documents']} labelled documents and {em['unlabelled_documents']} "
            f"unlabelled (weight {em_weight:g}, {em['iterations']} EM iterations), {len(classifier.vocabulary)} terms"
        )
        diagnostics.finish()
        check_inputs()
        return
    if any(is_given(ctx, name) for name in TABLE_PARAMS):
        if from_model:
            raise click.UsageError("--from-model re-derives text models; train a table model from its table")
        classifier = _train_table(corpus, label_pairs, calibrate, kw, diagnostics)
        modelfile.save(classifier, output)
        counts = ", ".join(f"{c} {int(n)}" for c, n in zip(classifier.classes, classifier.model.class_count))
        diagnostics.info(
            f"wrote {output}: {classifier.meta['n_documents']} rows ({counts}), {len(classifier.names)} columns "
            f"({_kinds_text(classifier)})"
        )
        diagnostics.finish()
        check_inputs()
        return
    if from_model:
        if calibrate is not None:
            raise click.UsageError(
                "--calibrate needs the corpus; calibrate the new model on held-out mail: nbcli calibrate MODEL HELDOUT"
            )
        classifier = _retrain(from_model, corpus, label_pairs, kw, diagnostics)
    else:
        if not corpus and not label_pairs:
            raise click.UsageError("give a CORPUS or at least one --label CLASS=PATH")
        pairs = [parse_label_pair(p) for p in label_pairs]
        analyzer_options, options = training_setup(kw)
        if options.needs_second_pass and ("-" in corpus or any(path == "-" for _, path in pairs)):
            raise NbcliError(
                "--tf-log and --length-norm read the corpus twice, so it cannot come from stdin",
                hint="save it to a file first",
            )
        from nbcli.fit.training import calibration_choice

        method, strict, note = calibration_choice(calibrate, options)
        if note:
            diagnostics.info(note)
        docs = labeled_corpus(corpus, pairs, read_opts(kw, diagnostics))
        with diagnostics.progress("training", docs.total) as advance:
            classifier = train_model(
                docs,
                analyzer_options,
                options,
                progress=lambda batch: advance(docs.progress(batch)),
                jobs=kw["jobs"],
                calibrate=method,
                strict=strict,
                bar=advance,
            )
    modelfile.save(classifier, output)
    counts = ", ".join(f"{c} {int(n)}" for c, n in zip(classifier.classes, classifier.model.class_count))
    diagnostics.info(
        f"wrote {output}: {classifier.meta['n_documents']} documents ({counts}), {len(classifier.vocabulary)} terms"
    )
    skipped = (classifier.meta.get("calibration") or {}).get("skipped")
    if skipped:  # what was written, then why it has no map
        diagnostics.info(f"not calibrated: {skipped}")
    diagnostics.finish()
    check_inputs()


def _train_em(corpus, label_pairs, unlabeled, calibrate, weight, max_iter, tol, components, kw, diagnostics, tokens):
    """`train --unlabeled`: semi-supervised EM (semi.py)."""
    from nbcli.cli.cluster import em_log
    from nbcli.run.semi import train_em
    from nbcli.text.sources import Corpus, documents_in, labeled_corpus, parse_label_pair

    if calibrate not in (None, "none"):
        raise click.UsageError(
            "--calibrate does not go with --unlabeled (cross-validation would rerun EM per fold); "
            "calibrate the model on held-out documents: nbcli calibrate MODEL HELDOUT"
        )
    if not corpus and not label_pairs:
        raise click.UsageError("give the labelled CORPUS too")
    analyzer_options, options = training_setup(kw)
    kind = "multinomial" if options.kind == "auto" else options.kind
    alpha = options.alpha  # None: as `nbcli train` resolves it for the corpus (semi.train_em)
    opts = read_opts(kw, diagnostics)
    labelled = labeled_corpus(corpus, [parse_label_pair(p) for p in label_pairs], opts)
    unlabelled = Corpus([documents_in(path, opts) for path in unlabeled])
    classifier, _ = train_em(
        labelled,
        unlabelled,
        analyzer_options,
        kind,
        alpha,
        weight,
        max_iter,
        tol,
        log=em_log(diagnostics, "EM"),
        jobs=kw["jobs"],
        components=components,
        e_tokens=tokens,
    )
    skipped = classifier.meta["em"]["unlabelled_skipped_as_labelled"]
    if skipped:
        diagnostics.warn(f"--unlabeled: skipped {skipped} documents also in the labelled corpus (each counts once)")
    diagnostics.info("not calibrated: EM models give their raw posteriors (nbcli calibrate MODEL HELDOUT fits a map)")
    return classifier


# A kernel density estimate is exact: scoring a cell costs its class's
# training values; past this many rows, train says so.
KDE_WARN_ROWS = 20_000

# the training options a table model shares with text models
_TABLE_SMOOTHING = {"alpha", "m_estimate", "estimate", "prior", "prior_alpha"}


def _train_table(corpus, label_pairs, calibrate, kw, diagnostics):
    """`train --features ...`: a table model (see table_classifier.py)."""
    import dataclasses

    from nbcli.fit.table_training import fit_rows
    from nbcli.text.sources import labeled_corpus, parse_label_pair

    ctx = click.get_current_context()
    refuse_training_options(ctx, "a text model (not --features)", keep=_TABLE_SMOOTHING)
    if not corpus and not label_pairs:
        raise click.UsageError("give a table (CORPUS) to train on")
    columns, settings = table_setup(kw)
    from nbcli.fit.training import calibration_choice

    method, strict, _ = calibration_choice(calibrate, None)
    opts = dataclasses.replace(read_opts(kw, diagnostics), rows=True)
    docs = labeled_corpus(corpus, [parse_label_pair(p) for p in label_pairs], opts)
    with diagnostics.progress("reading", docs.total) as advance:
        classifier = fit_rows(
            _progressing(docs, advance),
            columns,
            settings,
            method,
            strict,
            label_field=kw["label_field"] or "label",
            id_field=kw["id_field"],
        )
    for note in classifier.meta.get("notes", []):
        diagnostics.warn(note)
    rows = classifier.meta["n_documents"]
    if "kde" in classifier.model.kinds and rows > KDE_WARN_ROWS:
        diagnostics.warn(
            f"--numeric-model kde scores every cell against each class's training values ({rows} rows here), "
            "so classifying is slow at this size; --numeric-model discretize or gaussian is not"
        )
    skipped = (classifier.meta.get("calibration") or {}).get("skipped")
    if skipped:
        from nbcli.nb.calibrators import RANKS_AGAINST

        anyway = "" if RANKS_AGAINST in skipped else " (--calibrate METHOD fits one anyway)"
        diagnostics.info(f"not calibrated: {skipped}{anyway}")
    classifier.meta.pop("notes", None)
    return classifier


def _progressing(docs, advance):
    for doc in docs:
        yield doc
        if doc.first:
            advance(1)


def _kinds_text(classifier) -> str:
    kinds = classifier.model.kinds
    return ", ".join(f"{kinds.count(k)} {k}" for k in dict.fromkeys(kinds))


def _retrain(path, corpus, label_pairs, kw, diagnostics):
    """`train --from-model`: the stored counts, new options. A calibration
    belongs to the old tables: it is not carried over."""
    from nbcli.fit.training import refit
    from nbcli.store import modelfile

    if corpus or label_pairs:
        raise click.UsageError("--from-model re-derives a model from its stored counts; give no CORPUS or --label")
    refuse_corpus_options(click.get_current_context())
    old = modelfile.load(path)
    if old.meta.get("components"):
        raise NbcliError(f"{path} has several mixture components per class", hint="train it again with the options")
    _, options = training_setup(kw, base_kind=old.model.kind)
    expected = getattr(old, "expected", None)
    if expected is not None and options.pruning:
        raise NbcliError(f"{path} was trained by EM: pruning it needs the corpus", hint="train it again")
    new = refit(old, options, path)
    new.expected = expected  # the same terms: the expected counts stay apart, re-smoothed with the others
    if old.calibration is not None:
        diagnostics.info(
            f"the new model is not calibrated ({path}'s calibration was fitted to its own tables); "
            "fit one on held-out documents: nbcli calibrate MODEL HELDOUT"
        )
    return new


def _load_model(path: str, max_message_bytes: int | None = None):
    """The classifier in model file `path`, with the analysis cap given at
    classification time, if any (see `message_cap_option`)."""
    from nbcli.store import modelfile

    classifier = modelfile.load(path)
    classifier.check_ready(path)
    return classifier.with_message_cap(max_message_bytes)


@cli.command()
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
    ...}}. For a spam model (two classes, one named by --spam-class) each
    line also ends with the verdict, spam, unsure or ham, from P(spam) and
    the cut-offs, as filter and serve decide it (TSV: the last column;
    JSON: "verdict").

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
    kw["jobs"] = cluster_jobs(kw)
    if not inputs:
        if sys.stdin.isatty():
            raise click.UsageError("no INPUT given and stdin is a terminal; give files, folders, or - for stdin")
        inputs = ("-",)
    from nbcli.run.parallel import classify_docs
    from nbcli.text.documents import Skipped
    from nbcli.text.sources import Corpus, documents_in

    classifier = _load_model(model, max_message_bytes)
    classes = classifier.classes
    verdicts = Verdicts(classes, spam_class, spam_cutoff, ham_cutoff)
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
        for batch, result in classify_docs(classifier, nonempty(docs), kw["jobs"], explain or 0):
            log_proba, why = result if explain else (result, None)
            if cells is not None:
                cells.add(batch, log_proba)
            lines = prediction_lines(
                [doc.id for doc in batch], classes, log_proba, why, as_json, ascii_json, verdicts.names(log_proba)
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


@cli.command("eval")
@click.argument("args", nargs=-1, metavar="[MODEL] [CORPUS]...")
@true_label_option
@click.option(
    "--predictions",
    metavar="FILE",
    help="Evaluate 'nbcli predict --json' lines from FILE (- for stdin) instead of a model: no MODEL or CORPUS.",
)
@click.option(
    "--truth",
    metavar="FILE",
    help="With --predictions: true labels as id<TAB>label lines [default: the class folder in each id].",
)
@click.option(
    "--cv",
    type=click.IntRange(2),
    metavar="K",
    help=(
        "Cross-validate instead of evaluating a model: train and test K stratified folds of CORPUS (no MODEL), with "
        "the training options of 'nbcli train'."
    ),
)
@click.option(
    "--online",
    is_flag=True,
    help="The TREC spam-track online protocol on CORPUS (no MODEL): each message, in order, is classified by the "
    "model learned so far, then learned per --train; reports lam%, (1-ROCA)%, hm%, sm%.",
)
@click.option(
    "--order",
    type=click.Choice(["date", "given"]),
    default="date",
    show_default=True,
    help="With --online: take messages by their Date header (undated ones keep their place), or as given.",
)
@click.option(
    "--train",
    "train_rule",
    type=click.Choice(["all", "errors", "unsure"]),
    default="errors",
    show_default=True,
    help="With --online: learn every message, the misclassified ones, or those and the unsure ones.",
)
@click.option(
    "--warmup",
    type=click.IntRange(0),
    default=0,
    metavar="N",
    help="With --online: learn the first N messages before scoring any.",
)
@seed_option
@cutoff_options
@target_fpr_option
@calibration_options
@click.option(
    "--fail-under", multiple=True, type=Limit(), help="Exit 1 if METRIC is under V (e.g. accuracy=0.98). Repeatable."
)
@click.option(
    "--fail-over", multiple=True, type=Limit(), help="Exit 1 if METRIC is over V (e.g. ham_fpr=0.001). Repeatable."
)
@click.option(
    "--plot",
    metavar="FILE",
    help=(
        "Also draw the ROC curve (a spam model), the confusion matrix (others), the reliability diagram (with "
        "--calibration) or the learning curve (with --online) into FILE: .svg, or .png with the extra nbcli[plot] "
        "(matplotlib)."
    ),
)
@json_option
@read_options
@training_options
@table_options
@jobs_option
@cluster_option
@quiet_option
@click.pass_context
def eval_(ctx, args, label_pairs, predictions, truth, cv, online, order, train_rule, warmup, seed, plot, as_json, **kw):
    """Evaluate a model, predictions, or training settings.

    \b
      nbcli eval MODEL CORPUS...        a model on labelled documents
      nbcli eval --predictions FILE     'nbcli predict --json' lines (- for stdin)
      nbcli eval --cv K CORPUS...       K-fold cross-validation of training settings
      nbcli eval --online CORPUS...     the TREC online protocol (classify, then learn, in date order)

    CORPUS is given as for 'nbcli train'. With --predictions, the true
    class of each document is taken from the class folder in its id (as in
    corpus/spam/0001.eml) or from --truth. With --cv, the training options
    (--alpha, --ngrams, ...) are those of 'nbcli train' (they need --cv),
    and each metric is reported as mean ± std over the folds. Prints accuracy, per-class
    precision, recall, F1 and support, macro and weighted averages, the
    confusion matrix and the log loss; for a two-class model with a spam
    class also the ROC AUC and, at the cut-offs, the ham false-positive
    rate, spam recall and unsure fraction, and how many documents of each
    true class get each verdict (spam, unsure, ham: what predict, filter
    and serve say of them). Tables for people, or --json.

    --fail-under/--fail-over METRIC=V make the exit status 1 when a metric
    is out of bounds (after the report is written), for cron jobs. METRIC is
    one of: accuracy, log_loss, macro_precision, macro_recall, macro_f1,
    weighted_precision, weighted_recall, weighted_f1, auc, ham_fpr,
    spam_recall, unsure, target_spam_recall, target_ham_fpr.

    \b
    Example:
      nbcli eval mail.nb sample_corpora/mail/test
      nbcli eval mail.nb sample_corpora/mail/test --target-fpr 0.001
      nbcli eval mail.nb new-mail/ --fail-under accuracy=0.98 --fail-over ham_fpr=0.001
      nbcli eval topics.nb sample_corpora/topics/test.jsonl --json
      nbcli predict mail.nb test/ --json | nbcli eval --predictions -
      nbcli eval --cv 10 --seed 1 sample_corpora/mail/train --alpha 0.01
      nbcli eval mail.nb sample_corpora/mail/test --plot roc.svg
    """
    diagnostics = make_diagnostics(kw["quiet"])
    check_cutoffs(kw["spam_cutoff"], kw["ham_cutoff"])
    if plot:
        from nbcli.cli.paths import check_output
        from nbcli.cli.plot import check_path

        check_path(plot)
        check_output(plot, [*args, *(p.partition("=")[2] for p in label_pairs), predictions, truth], "--plot")
    for name in ("order", "train_rule", "warmup"):
        if not online and is_given(ctx, name):
            raise click.UsageError(f"--{name.replace('_rule', '')} goes with --online")
    if online:
        if cv or predictions or truth:
            raise click.UsageError("--online does not go with --cv, --predictions or --truth")
        refuse_options(ctx, TABLE_PARAMS, "--cv (the online protocol learns mail, not table rows)")
        refuse_cluster(kw, "--online (the protocol is one message after another)")
        from nbcli.cli.learning import online_eval

        online_eval(args, label_pairs, order, train_rule, warmup, plot, as_json, kw, diagnostics)
        return
    if cv:
        if plot:
            raise click.UsageError("--plot does not go with --cv: evaluate a model, or predictions, to plot")
        if predictions:
            raise click.UsageError("--cv and --predictions do not go together")
        if not args and not label_pairs:
            raise click.UsageError("give a CORPUS or at least one --label CLASS=PATH to cross-validate")
        if any(is_given(ctx, name) for name in TABLE_PARAMS):
            refuse_cluster(kw, "a table model's cross-validation (it runs in this process)")
            _cross_validate_table(args, label_pairs, cv, seed, as_json, kw, diagnostics)
            return
        from nbcli.run.tuning import cross_validate

        kw["jobs"] = cluster_jobs(kw)

        analyzer_options, options, analysed = _analysed(args, label_pairs, kw, diagnostics)
        report = cross_validate(analysed, cv, seed, analyzer_options, options, eval_options(kw), kw["jobs"])
        _report_cv(report, as_json, kw)
        diagnostics.finish()
        check_inputs()
        return
    refuse_training_options(ctx, "--cv or --online", keep={"max_message_bytes"})
    refuse_options(ctx, TABLE_PARAMS, "--cv (a table model's settings come with it)")
    if truth and not predictions:
        raise click.UsageError("--truth goes with --predictions")
    if predictions:
        refuse_cluster(kw, "--predictions (there is nothing to compute)")
        if args or label_pairs:
            raise click.UsageError(
                "--predictions takes no MODEL, CORPUS or --label: the predictions hold the model's output"
            )
        from nbcli.evaluate.predictions import read_files

        labels, log_proba, classes = read_files(predictions, truth)
        _evaluated(labels, log_proba, classes, None, plot, as_json, kw)
        return
    if not args:
        raise click.UsageError("give MODEL and CORPUS, or --predictions FILE")
    model, corpus = args[0], args[1:]
    if not corpus and not label_pairs:
        raise click.UsageError("give a CORPUS or at least one --label CLASS=PATH")
    from nbcli.run.parallel import score_labelled
    from nbcli.text.sources import labeled_corpus, parse_label_pair

    pairs = [parse_label_pair(p) for p in label_pairs]

    given_cap = is_given(ctx, "max_message_bytes")
    classifier = _load_model(model, kw["max_message_bytes"] if given_cap else None)
    kw["jobs"] = cluster_jobs(kw)
    docs = labeled_corpus(corpus, pairs, model_read_opts(classifier, kw, diagnostics))
    # with --calibration, a calibrated model is judged before and after its map: score raw, map here
    both = kw.get("calibration", False) and classifier.calibration is not None
    with diagnostics.progress("evaluating", docs.total) as advance:
        labels, log_proba = score_labelled(
            classifier.uncalibrated() if both else classifier,
            docs,
            progress=lambda batch: advance(docs.progress(batch)),
            jobs=kw["jobs"],
        )
    if not labels:
        raise NbcliError("the evaluation corpus has no documents", hint="check the paths")
    raw = log_proba if both else None
    if both:
        log_proba = classifier.calibration.apply(raw)
    _evaluated(labels, log_proba, classifier.classes, model, plot, as_json, kw, raw)
    diagnostics.finish()
    check_inputs()


def _evaluated(labels, log_proba, classes, source, plot, as_json, kw, uncalibrated=None):
    """Report on scored documents, draw the --plot, then check the limits."""
    from nbcli.evaluate.report import figure, report

    options = eval_options(kw)
    if is_given(click.get_current_context(), "spam_class") and options.spam_class not in classes:
        raise NbcliError(
            (
                f"--spam-class {options.spam_class}: {'the model has' if source else 'the predictions have'} no such "
                f"class (classes: {', '.join(classes)})"
            ),
            hint="name one of those classes",
        )
    result = report(labels, log_proba, classes, options, uncalibrated)
    if plot:
        from nbcli.cli import plot as plotting

        plotting.write(figure(labels, log_proba, classes, result, options), plot)
    _report(result, source, as_json, kw)


def _analysed(corpus, label_pairs, kw, diagnostics):
    """(AnalyzerOptions, TrainOptions, the corpus read and analysed once)
    for commands that train their own models."""
    from nbcli.run.pipeline import analyse_corpus
    from nbcli.text.analyzer import Analyzer
    from nbcli.text.sources import labeled_corpus, parse_label_pair

    pairs = [parse_label_pair(p) for p in label_pairs]
    analyzer_options, options = training_setup(kw)
    docs = labeled_corpus(corpus, pairs, read_opts(kw, diagnostics))
    with diagnostics.progress("reading", docs.total) as advance:
        analysed = analyse_corpus(
            docs, Analyzer(analyzer_options), lambda batch: advance(docs.progress(batch)), kw["jobs"]
        )
    return analyzer_options, options, analysed


def _cross_validate_table(corpus, label_pairs, k, seed, as_json, kw, diagnostics) -> None:
    """`eval --cv K TABLE --features ...`: cross-validation of a table model."""
    import dataclasses

    from nbcli.fit.table_training import cross_validate
    from nbcli.text.sources import labeled_corpus, parse_label_pair

    keep = _TABLE_SMOOTHING | {"seed"}
    refuse_training_options(click.get_current_context(), "a text model (not --features)", keep=keep)
    columns, settings = table_setup(kw)
    opts = dataclasses.replace(read_opts(kw, diagnostics), rows=True)
    docs = labeled_corpus(corpus, [parse_label_pair(p) for p in label_pairs], opts)
    _report_cv(cross_validate(docs, columns, settings, k, seed, eval_options(kw)), as_json, kw)
    diagnostics.finish()
    check_inputs()


def _tune_table(ctx, corpus, label_pairs, k, seed, metric, kw, diagnostics) -> dict:
    """`tune --features ...`: the table grid (tuning.TABLE_GRID) but the
    settings the user fixed, on the same folds of the rows."""
    import dataclasses

    from nbcli.run import tuning
    from nbcli.text.sources import labeled_corpus, parse_label_pair

    refuse_training_options(ctx, "a text model (not --features)", keep=_TABLE_SMOOTHING | {"seed"})
    columns, settings = table_setup(kw)
    opts = dataclasses.replace(read_opts(kw, diagnostics), rows=True)
    docs = labeled_corpus(corpus, [parse_label_pair(p) for p in label_pairs], opts)
    grid = {f: v for f, v in tuning.TABLE_GRID.items() if not is_given(ctx, f)}
    return tuning.tune_table(docs, columns, settings, k, seed, eval_options(kw), metric, grid)


def _report_cv(report, as_json, kw):
    from nbcli.cli.output import render_cv

    metrics = {n: m["mean"] for n, m in report["metrics"].items()}
    _write_report(report if as_json else None, lambda: render_cv(report, sys.stdout), metrics, kw, "mean ")


def _report(report, source, as_json, kw):
    """Write an eval report, then fail on a broken --fail-under/--fail-over."""
    from nbcli.cli.output import render_eval
    from nbcli.evaluate.report import flat_metrics

    record = {"model": source, **report} if as_json else None
    _write_report(record, lambda: render_eval(report, sys.stdout, source or "predictions"), flat_metrics(report), kw)


def _write_report(record, render, metrics, kw, prefix=""):
    """JSON (if `record`) or the table for people, then the exit status of
    --fail-under/--fail-over on `metrics`."""
    from nbcli.evaluate.report import check_limits

    if record is not None:
        write_json(record)
    else:
        render()
    sys.stdout.flush()
    reason = check_limits(metrics, kw["fail_under"], kw["fail_over"])
    if reason:
        raise NbcliError(prefix + reason)


@cli.command()
@click.argument("corpus", nargs=-1)
@click.option(
    "--label",
    "label_pairs",
    multiple=True,
    metavar="CLASS=PATH",
    help="Documents in PATH have class CLASS. Repeatable.",
)
@click.option(
    "--cv", type=click.IntRange(2), default=5, show_default=True, metavar="K", help="Folds of the cross-validation."
)
@seed_option
@click.option(
    "--metric",
    default="accuracy",
    show_default=True,
    help=(
        "The metric to optimise (its mean over the folds): any of 'nbcli eval --fail-under'; log_loss, ham_fpr, "
        "unsure and target_ham_fpr are minimised, the others maximised."
    ),
)
@cutoff_options
@target_fpr_option
@json_option
@read_options
@training_options
@table_options
@jobs_option
@cluster_option
@quiet_option
@click.pass_context
def tune(ctx, corpus, label_pairs, cv, seed, metric, as_json, **kw):
    """Find training settings by cross-validation over a small grid.

    Cross-validates every combination of the grid (--model multinomial,
    bernoulli, complement; --alpha 1, 0.1, 0.01, 0.001, 0.0001) on the same
    stratified folds of CORPUS, with the other training options as given (a
    grid option you give is fixed, not searched), and prints each combination's mean ± std of
    --metric, the best settings, and, last, the 'nbcli train' command line
    that trains them. The corpus is read and analysed once.

    \b
    Example:
      nbcli tune sample_corpora/mail/train
      nbcli tune corpus/ --metric target_spam_recall --target-fpr 0.001
      $(nbcli tune corpus/ | tail -1 | sed 's/MODEL$/mail.nb/')
    """
    from nbcli.evaluate.report import METRICS
    from nbcli.run import tuning

    diagnostics = make_diagnostics(kw["quiet"])
    if any(is_given(ctx, name) for name in TABLE_PARAMS):
        refuse_cluster(kw, "a table model's tuning (it runs in this process)")
    kw["jobs"] = cluster_jobs(kw)
    check_cutoffs(kw["spam_cutoff"], kw["ham_cutoff"])
    if metric not in METRICS:
        raise click.BadParameter(
            f"{metric!r} is not a metric; use one of {', '.join(METRICS)}", param_hint="'--metric'"
        )
    if not corpus and not label_pairs:
        raise click.UsageError("give a CORPUS or at least one --label CLASS=PATH")
    if any(is_given(ctx, name) for name in TABLE_PARAMS):
        result = _tune_table(ctx, corpus, label_pairs, cv, seed, metric, kw, diagnostics)
    else:
        analyzer_options, options, analysed = _analysed(corpus, label_pairs, kw, diagnostics)
        result = tuning.tune(
            analysed,
            cv,
            seed,
            analyzer_options,
            options,
            eval_options(kw),
            metric,
            kw["jobs"],
            unfixed(tuning.GRID, ctx),
        )
    given = given_options(ctx, {"label_pairs", *TRAINING_PARAM_NAMES, *READ_PARAM_NAMES, *TABLE_PARAMS})
    result["command"] = train_command(list(corpus), given, result["best"])
    if as_json:
        write_json(result)
    else:
        from nbcli.cli.output import render_tune

        render_tune(result, sys.stdout)
    diagnostics.finish()
    check_inputs()


@cli.command()
@click.argument("model")
@click.option(
    "--top", type=click.IntRange(0), default=10, show_default=True, help="How many indicative terms to list per class."
)
@json_option
def info(model, top, as_json):
    """Describe a model: classes, documents, vocabulary, training options
    and each class's most indicative terms (by log-odds against the other
    classes).

    \b
    Example:
      nbcli info mail.nb --top 20
      nbcli info mail.nb --json | jq .vocabulary_size
    """
    from nbcli.store import modelfile
    from nbcli.store.describe import describe

    classifier = modelfile.load(model)
    description = {"model": model, **describe(classifier, top)}
    if as_json:
        write_json(description)
    else:
        from nbcli.cli.output import render_info

        render_info(description, sys.stdout)


@cli.command("filter")
@click.argument("model")
@click.argument("input", required=False, metavar="[INPUT]")
@cutoff_options
@click.option(
    "--split",
    "split_dir",
    metavar="DIR",
    help="Append each message to DIR/<verdict>.mbox instead of writing to stdout.",
)
@click.option(
    "--exit-codes", is_flag=True, help="Exit 0 spam, 1 ham, 2 unsure, 3 error (bogofilter's codes; for one message)."
)
@explain_option
@message_cap_option
@jobs_option
@quiet_option
def filter_(
    model, input, spam_cutoff, ham_cutoff, spam_class, split_dir, exit_codes, explain, max_message_bytes, jobs, quiet
):
    """Pass mail through, adding a verdict header: for cron and procmail.

    Reads INPUT (a message file, an mbox, a pipe or FIFO, a folder or a
    Maildir) or stdin and writes every message to stdout unchanged except
    for one added header line, 'X-NB-Class: spam; p=0.9993' (p is P(spam)
    for a spam model, else the probability of the class named). An earlier
    X-NB-Class header is replaced. A message that cannot be classified
    passes through unchanged with the verdict 'error', and the run goes on:
    nothing is dropped. Each message is written as soon as it is complete
    (on a pipe: when the next From_ line or the end comes). --explain N
    adds a second header, X-NB-Evidence, with the class compared against,
    the log-odds, the prior's part and the N terms that pushed the verdict
    most ('term' count contribution).

    A folder or Maildir gives an mbox on stdout: messages from its mbox
    files keep their From_ lines, the others get one (and >From quoting),
    as with --split. An empty INPUT (/dev/null) has no messages: nothing
    is written, with a warning. --split prints on stderr how many messages
    went where (not with -q).

    Exit status: 0 if every message was classified, 1 otherwise; with
    --exit-codes and one message, 0 spam, 1 ham, 2 unsure, 3 error (with
    several messages: 3 if any failed, else 0; no message or an input or
    --split error: 3). With procmail, --exit-codes belongs in a condition
    ('* ? nbcli filter --exit-codes ...' with ':0 HB:'): behind a '|'
    action procmail takes exit 0 as delivered, and the spam is gone.

    \b
    Example:
      nbcli filter mail.nb < message.eml > tagged.eml
      nbcli filter mail.nb ~/mail/inbox.mbox --split sorted/
      # procmail (~/.procmailrc): add the header, then file on it
      #   :0 fw
      #   | nbcli filter $HOME/.nbcli/mail.nb
      #
      #   :0:
      #   * ^X-NB-Class: spam
      #   spam.mbox
    """
    from functools import partial

    from nbcli.run.parallel import classify
    from nbcli.spam import filtering
    from nbcli.store import modelfile

    diagnostics = make_diagnostics(quiet)
    check_cutoffs(spam_cutoff, ham_cutoff)
    path = input or "-"
    if path == "-" and sys.stdin.isatty():
        raise click.UsageError("no INPUT given and stdin is a terminal; give a message or mbox file, or - for stdin")
    from nbcli.cli.paths import check_split_folder
    from nbcli.text.raw_messages import read_messages
    from nbcli.text.walk import InputReport

    skipped = InputReport(diagnostics.warn)  # a file in a folder that could not be read fails the run

    try:  # INPUT is checked (and opened) before the model is read
        if split_dir:
            check_split_folder(split_dir, [path])
        messages = read_messages(path, skipped, flush=not split_dir)
        splitter = filtering.SplitWriter(split_dir) if split_dir else None
    except NbcliError as exc:
        exc.exit_code = 3 if exit_codes else 1  # never 1 (ham) under --exit-codes
        raise
    classifier = verdicts = model_error = None
    try:
        classifier = _load_model(model, max_message_bytes)
        verdicts = filtering.Verdicts(classifier.classes, spam_class, spam_cutoff, ham_cutoff)
        if exit_codes and not verdicts.binary:
            raise NbcliError(
                (
                    f"--exit-codes needs a two-class model with a {spam_class!r} class; {model} has classes "
                    f"{', '.join(classifier.classes)}"
                ),
                hint="name the spam class with --spam-class",
            )
    except NbcliError as exc:  # fail open: pass every message through unchanged
        classifier, model_error = None, str(in_flag_terms(exc))
        err(f"nbcli: error: {model_error}; passing messages through unchanged")
    if splitter is not None:
        put = splitter.write
    else:
        out = sys.stdout.buffer
        as_mbox = path != "-" and os.path.isdir(path)  # many files: one mbox out

        def put(verdict, data):
            out.write(filtering.as_mbox_entry(data) if as_mbox else data)
            out.flush()

    try:
        identity = modelfile.model_id(classifier) if classifier is not None else None
        seen = filtering.run(
            messages,
            classifier,
            verdicts,
            put,
            diagnostics.warn,
            model_error,
            partial(classify, jobs=jobs),
            explain or 0,
            identity,
        )
    except NbcliError as exc:  # INPUT unreadable part-way, or a --split append failed
        exc.exit_code = 3 if exit_codes else 1
        raise
    if not seen:
        diagnostics.warn(f"{'standard input' if path == '-' else path}: no messages")
    if splitter is not None and not quiet:
        err(f"nbcli: {splitter.summary()}")
    diagnostics.finish()
    failed = "error" in seen or classifier is None or skipped.unreadable > 0
    if exit_codes:
        if len(seen) == 1 and not skipped.unreadable:
            return filtering.EXIT_CODES.get(seen[0], 0)
        return 3 if failed or not seen else 0
    return 1 if failed else 0


@cli.command()
@click.argument("inputs", nargs=-1, metavar="[INPUT]...")
@click.option("-m", "--model", metavar="MODEL", help="Use the analyzer options this model was trained with.")
@click.option("--no-mail", is_flag=True, help="Read email messages as plain text.")
@click.option("--token-pattern", metavar="REGEX", help="As for 'nbcli train'.")
@read_options
def tokens(inputs, model, no_mail, token_pattern, **kw):
    """Print the terms of documents, one per line, as training sees them.

    For debugging the analyzer (like bogofilter's bogolexer): an email
    message shows its header tokens ("subject:...", "from-domain:...",
    "received:..."), its body words and its URL and MIME tokens. With
    several documents, each list starts with a line '==> ID <=='.

    \b
    Example:
      nbcli tokens sample_corpora/mail/train/spam/0003.eml
      nbcli tokens -m mail.nb message.eml | sort | uniq -c | sort -rn | head
    """
    from nbcli.cli.output import display_text
    from nbcli.text.analyzer import Analyzer, AnalyzerOptions
    from nbcli.text.sources import Corpus, documents_in

    if model:
        from nbcli.store import modelfile

        options = modelfile.load(model).analyzer_options
    else:
        options = AnalyzerOptions(token_pattern=token_pattern, mail=not no_mail)
    analyzer = Analyzer(options)
    diagnostics = make_diagnostics(False)
    opts = read_opts(kw, diagnostics)
    docs = list(Corpus([documents_in(p, opts) for p in (inputs or ("-",))]))
    if not docs:
        raise NbcliError("no documents found", hint="check the input paths")
    for doc in docs:
        terms = analyzer.tokens(doc.data, doc.kind)
        if len(docs) > 1:
            write(f"==> {display_text(doc.id)} <==")
        if terms:
            sys.stdout.write("\n".join(t.replace("\n", " ") for t in terms) + "\n")
    diagnostics.finish()
    check_inputs()


from nbcli.cli.cluster import COMMANDS as _EM_COMMANDS  # noqa: E402
from nbcli.cli.learning import COMMANDS as _LEARNING_COMMANDS  # noqa: E402
from nbcli.cli.serve import serve as _serve  # noqa: E402

for _command in (*_LEARNING_COMMANDS, *_EM_COMMANDS, _serve):
    cli.add_command(_command)


def main() -> None:
    guard_standard_streams()
    cli.main(prog_name="nbcli")

"""The command line: click commands wired to the library.

The only module that imports click. It keeps start-up light (numpy, scipy,
joblib and rich are imported inside the commands that need them, so
`nbcli --help` starts fast) and turns every library error into one line on
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
# processes (see parallel.py).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import click  # noqa: E402

from nbcli import __version__  # noqa: E402
from nbcli.defaults import (  # noqa: E402
    DEFAULT_HAM_CUTOFF,
    DEFAULT_MAX_DOC_BYTES,
    DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_SPAM_CUTOFF,
    INPUT_FORMATS,
    MAX_MESSAGE_BYTES_CAP,
)
from nbcli.errors import NbcliError  # noqa: E402

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _err(line: str) -> None:
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


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
            _err(f"nbcli: error: {exc.format_message()}{where}")
            sys.exit(2)
        except click.ClickException as exc:
            _err(f"nbcli: error: {exc.format_message()}")
            sys.exit(exc.exit_code)
        except NbcliError as exc:
            _err(f"nbcli: error: {exc}")
            sys.exit(exc.exit_code)
        except (click.Abort, KeyboardInterrupt):
            _err("nbcli: interrupted")
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
            _err(f"nbcli: error: {exc.strerror or exc}")
            sys.exit(1)
        except Exception as exc:  # a bug: still one line, unless debugging
            if os.environ.get("NBCLI_DEBUG"):
                raise
            _err(
                f"nbcli: internal error: {type(exc).__name__}: {exc} (please report it; NBCLI_DEBUG=1 shows the "
                "traceback)"
            )
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


# -- option types and bundles ----------------------------------------------------


class ByteSize(click.ParamType):
    name = "SIZE"

    def __init__(self, maximum: int | None = None):
        self.maximum = maximum

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        text = str(value).strip().upper().removesuffix("B")
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        digits = text[:-1] if scale > 1 else text
        try:
            size = int(float(digits) * scale)
        except ValueError:
            self.fail(f"{value!r} is not a size such as 512K, 16M or 1G", param, ctx)
        if size < 1:
            self.fail(f"{value!r} must be at least 1 byte", param, ctx)
        if self.maximum is not None and size > self.maximum:
            self.fail(f"{value!r} is more than the largest allowed, {self.maximum >> 20}M", param, ctx)
        return size


class DocFrequency(click.ParamType):
    """An int (a number of documents) or a float in [0, 1] (a proportion)."""

    name = "N|F"

    def convert(self, value, param, ctx):
        if isinstance(value, (int, float)):
            return value
        text = str(value).strip()
        try:
            if text.isdigit():
                return int(text)
            number = float(text)
        except ValueError:
            self.fail(f"{value!r} is neither a document count nor a proportion", param, ctx)
        if not 0.0 <= number <= 1.0:
            self.fail(f"{value!r}: a proportion must lie between 0.0 and 1.0", param, ctx)
        return number


def _apply(options):
    def decorate(f):
        for option in reversed(options):
            f = option(f)
        return f

    return decorate


read_options = _apply(
    [
        click.option(
            "--input-format",
            type=click.Choice(INPUT_FORMATS),
            default="auto",
            show_default=True,
            help="How to read files: 'auto' goes by file name (.tsv/.tab, .csv, .jsonl/.ndjson are tables, "
            "anything else is one document); 'text' reads every file as one document.",
        ),
        click.option(
            "--text-field",
            metavar="NAME|N",
            help="Column or JSON field with the text [default: text; column 2 with --no-header].",
        ),
        click.option(
            "--label-field",
            metavar="NAME|N",
            help="Column or JSON field with the label [default: label; column 1 with --no-header].",
        ),
        click.option(
            "--id-field",
            metavar="NAME|N",
            help="Column or JSON field with the document id [default: id if present, else FILE:LINE].",
        ),
        click.option(
            "--no-header", is_flag=True, help="TSV/CSV files have no header row; fields are column numbers from 1."
        ),
        click.option(
            "--max-doc-bytes",
            type=ByteSize(),
            default=DEFAULT_MAX_DOC_BYTES,
            show_default="16M",
            help="Read at most this much of each document (a warning says when a document is cut).",
        ),
        click.option(
            "--strict",
            is_flag=True,
            help="Make every skipped input an error (exit 1, no model written): a FIFO or device in a folder, "
            "an nbcli model file in a folder, a folder reached twice through links, a malformed or unlabelled "
            "table row, an empty document. Without it these are warnings, and inputs that could not be read "
            "(permission denied, I/O errors) are warnings that make the exit status 1 once the command is done.",
        ),
    ]
)

quiet_option = click.option("-q", "--quiet", is_flag=True, help="No progress bars and no warnings on stderr.")
MAX_JOBS = 1024


def _cap_jobs(ctx, param, value):
    """More workers than cores only adds processes fighting for the same
    cores (`predict -j 5000` took 160 times longer): cap at the cores this
    process may use, and say so (see `_diagnostics`)."""
    from nbcli.parallel import cpu_count

    cores = cpu_count()
    if value > cores:
        ctx.meta["nbcli.jobs_capped"] = (value, cores)
        return cores
    return value


jobs_option = click.option(
    "-j",
    "--jobs",
    type=click.IntRange(0, MAX_JOBS),
    default=0,
    show_default="0: automatic",
    callback=_cap_jobs,
    help="Worker processes: 1 works in this process; 0 uses one per core once the input proves large; "
    "more than the cores available is capped at their number. Results are the same for any value.",
)
json_option = click.option("--json", "as_json", is_flag=True, help="JSON output for scripts.")


class Limit(click.ParamType):
    """METRIC=VALUE for --fail-under / --fail-over."""

    name = "METRIC=V"

    def convert(self, value, param, ctx):
        from nbcli.evaluation import parse_limit

        if isinstance(value, tuple):
            return value
        try:
            return parse_limit(value)
        except NbcliError as exc:
            self.fail(str(exc), param, ctx)


# How a two-class spam model's P(spam) becomes a verdict: `filter` and `eval`.
cutoff_options = _apply(
    [
        click.option(
            "--spam-cutoff",
            type=click.FloatRange(0, 1),
            default=DEFAULT_SPAM_CUTOFF,
            show_default=True,
            help="P(spam) at or above this is spam.",
        ),
        click.option(
            "--ham-cutoff",
            type=click.FloatRange(0, 1),
            default=DEFAULT_HAM_CUTOFF,
            show_default=True,
            help="P(spam) at or below this is ham; in between is unsure. Equal cut-offs: no unsure band.",
        ),
        click.option("--spam-class", default="spam", show_default=True, help="The spam class of a two-class model."),
    ]
)


target_fpr_option = click.option(
    "--target-fpr",
    type=click.FloatRange(0, 1),
    metavar="RATE",
    help=(
        "Also report the lowest spam cut-off whose ham false-positive rate on the evaluated documents is at most "
        "RATE, and the spam recall it leaves (metrics target_spam_recall, target_ham_fpr)."
    ),
)
seed_option = click.option(
    "--seed", type=int, default=0, show_default=True, help="Cross-validation: the seed that deals documents to folds."
)


def _check_cutoffs(spam_cutoff, ham_cutoff):
    if ham_cutoff > spam_cutoff:
        raise click.UsageError(f"--ham-cutoff {ham_cutoff} is above --spam-cutoff {spam_cutoff}")


# The options that decide what a model learns: shared by `train` and by the
# commands that train models of their own (cross-validation, tuning). Add a
# new training option here and read it in `_training_setup`.
training_options = _apply(
    [
        click.option(
            "--token-pattern",
            metavar="REGEX",
            help="Tokens are re.findall(REGEX, text.lower()) [default: runs of 2+ word characters, (?u)\\b\\w\\w+\\b].",
        ),
        click.option(
            "--ngrams",
            type=click.IntRange(1, 8),
            default=1,
            show_default=True,
            help="Also use word 2..N-grams as terms.",
        ),
        click.option(
            "--stop-words",
            metavar="english|FILE",
            help="Drop these words: nbcli's English list, or a file with one word per line.",
        ),
        click.option(
            "--min-df",
            type=DocFrequency(),
            default=1,
            show_default=True,
            help="Drop terms in fewer documents than this (a count, or a proportion if written with a point).",
        ),
        click.option(
            "--max-df",
            type=DocFrequency(),
            default=1.0,
            show_default=True,
            help="Drop terms in more documents than this (a count, or a proportion such as 0.9).",
        ),
        click.option(
            "--max-features", type=click.IntRange(1), metavar="K", help="Keep only the K most frequent terms."
        ),
        click.option(
            "--alpha",
            type=float,
            default=None,
            help=(
                "Pseudo-count added to every term count of every class: theta_cj = (N_cj + alpha) / (N_c + alpha "
                "|V|). This is the posterior mean under a symmetric Dirichlet(alpha) prior (equivalently the MAP "
                "estimate under Dirichlet(alpha + 1); see --estimate, --m-estimate); 1 is Laplace smoothing.  "
                "[default: 1; 0.0001 when most training documents are email, as chosen by cross-validation]"
            ),
        ),
        click.option(
            "--unknown-terms",
            type=click.Choice(["skip", "smooth"]),
            default=None,
            help="When classifying, a term the model never saw is skipped, or counts as a term seen zero times in "
            "every class, with smoothed probability alpha / (N_c + alpha |V|).  [default: skip; smooth when most "
            "training documents are email]",
        ),
        click.option(
            "--no-mail",
            is_flag=True,
            help="Read email messages as plain text instead of parsing headers and MIME parts.",
        ),
        click.option(
            "--max-message-bytes",
            type=ByteSize(MAX_MESSAGE_BYTES_CAP),
            default=DEFAULT_MAX_MESSAGE_BYTES,
            show_default="512K",
            help="Analyse at most this much of each email message (the rest is ignored, the message is not failed).",
        ),
        click.option(
            "--prior",
            default=None,
            metavar="fit|uniform|CLASS=W,...",
            help=(
                "Class prior: 'fit' (document frequencies of the classes, pi_c = N_c / N), 'uniform', or weights "
                "such as 'spam=0.4,ham=0.6' (normalised).  [default: fit; uniform for --model complement, as in "
                "Rennie et al.]"
            ),
        ),
        click.option(
            "--prior-alpha",
            type=float,
            metavar="A",
            help="Smooth the fitted class prior: pi_c = (N_c + A) / (N + A C) for C classes.",
        ),
        click.option(
            "--model",
            "kind",
            type=click.Choice(["multinomial", "bernoulli", "complement"]),
            default=None,
            help="Event model. multinomial: term counts, theta_cj = (N_cj + alpha) / (N_c + alpha |V|). "
            "bernoulli: term presence, theta_cj = (D_cj + alpha) / (N_c + 2 alpha) with D_cj documents of class c "
            "containing j; absent terms count as evidence too: log pi_c + sum_j log(1 - theta_cj) + sum over present j "
            "of log(theta_cj / (1 - theta_cj)). complement (Rennie et al. 2003): each class is estimated from the "
            "counts of all the other classes, theta~_cj = (sum_{c' != c} N_c'j + alpha) / (sum_{c' != c} N_c' + "
            "alpha |V|), and term j weighs -log theta~_cj; see --tf-log, --idf, --length-norm, --weight-norm.  "
            "[default: multinomial]",
        ),
        click.option(
            "--estimate",
            type=click.Choice(["mean", "map"]),
            default=None,
            help="With a Dirichlet prior of pseudo-count a per cell (--alpha, or M P of --m-estimate): 'mean' is the "
            "posterior mean (N + a) / (T + a K); 'map' the posterior mode (N + a - 1) / (T + K (a - 1)), which needs "
            "a > 1 wherever a count is zero (K: |V| terms, or 2 for bernoulli's present/absent).  [default: mean]",
        ),
        click.option(
            "--m-estimate",
            metavar="M[,P]",
            help="The m-estimate (N + M P) / (T + M) instead of --alpha: M prior observations spread by P "
            "(default uniform, 1/K; a P is for --model bernoulli, the prior probability that a term is present).",
        ),
        click.option(
            "--tf-log",
            is_flag=True,
            help="complement: use log(1 + x) of each term count x (reads the corpus twice; not from stdin).",
        ),
        click.option(
            "--idf",
            is_flag=True,
            help="complement: scale term j by idf_j = ln((1 + N) / (1 + df_j)) + 1 (scikit-learn's smoothed idf).",
        ),
        click.option(
            "--length-norm",
            is_flag=True,
            help=(
                "complement: scale each document's vector to L2 length 1, after --tf-log and --idf (reads the corpus "
                "twice; not from stdin)."
            ),
        ),
        click.option(
            "--weight-norm",
            is_flag=True,
            help=(
                "complement: normalise each class's weights, log theta~_cj / sum_k log theta~_ck (scikit-learn's "
                "norm=True)."
            ),
        ),
        click.option(
            "--select",
            type=click.IntRange(1),
            metavar="K",
            help="Keep only the K terms with the highest --select-by score, computed from document frequencies, "
            "after --min-df, --max-df and --max-features.",
        ),
        click.option(
            "--select-by",
            type=click.Choice(["ig", "chi2"]),
            default="ig",
            show_default=True,
            help="ig: information gain H(C) - H(C | term present/absent); chi2: Pearson's chi-squared of the "
            "present/absent-by-class table.",
        ),
    ]
)


def _read_opts(kw, diagnostics):
    """The `read_options` as ReadOptions. Warnings about skipped inputs go
    through an InputReport (kept in the context for `_check_inputs`), which
    applies --strict and counts the inputs that could not be read."""
    from nbcli.sources import ReadOptions
    from nbcli.walk import InputReport

    report = InputReport(diagnostics.warn, strict=kw.get("strict", False))
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta["nbcli.inputs"] = report
    return ReadOptions(
        input_format=kw["input_format"],
        text_field=kw["text_field"],
        label_field=kw["label_field"],
        id_field=kw["id_field"],
        header=not kw["no_header"],
        max_doc_bytes=kw["max_doc_bytes"],
        warn=report,
    )


def _check_inputs() -> None:
    """The exit status for inputs that could not be read, as grep's: the
    command has done what it could with the rest (train has written its
    model), then exits 1 with one line saying how many (see sources.py,
    "skipped inputs")."""
    ctx = click.get_current_context(silent=True)
    report = ctx.meta.get("nbcli.inputs") if ctx is not None else None
    if report is not None:
        report.check()


# The defaults of training options, to tell which ones the user gave.
_TRAINING_DEFAULTS = {
    "token_pattern": None,
    "ngrams": 1,
    "stop_words": None,
    "min_df": 1,
    "max_df": 1.0,
    "max_features": None,
    "alpha": None,
    "unknown_terms": None,
    "no_mail": False,
    "max_message_bytes": DEFAULT_MAX_MESSAGE_BYTES,
    "prior": None,
    "prior_alpha": None,
    "kind": None,
    "estimate": None,
    "m_estimate": None,
    "tf_log": False,
    "idf": False,
    "length_norm": False,
    "weight_norm": False,
    "select": None,
    "select_by": "ig",
}


def _training_setup(kw, base_kind: str = "multinomial"):
    """The `training_options` as (AnalyzerOptions, TrainOptions), checked
    before any document is read (see `training.training_options`; click's
    names differ from the fields for --unknown-terms and --no-mail).
    base_kind: the event model when --model is not given."""
    from nbcli.training import training_options

    fields = {name: kw[name] for name in _TRAINING_DEFAULTS if name not in ("unknown_terms", "no_mail")}
    return training_options(base_kind, unknown=kw["unknown_terms"], mail=not kw["no_mail"], **fields)


def _diagnostics(quiet):
    from nbcli.diagnostics import Diagnostics

    diagnostics = Diagnostics(quiet=quiet)
    ctx = click.get_current_context(silent=True)
    capped = ctx.meta.get("nbcli.jobs_capped") if ctx is not None else None
    if capped:
        diagnostics.info(f"--jobs {capped[0]} is more than the {capped[1]} core(s) available; using {capped[1]}")
    return diagnostics


def _write(line: str) -> None:
    sys.stdout.write(line + "\n")


def _stdout_is_utf8() -> bool:
    import codecs

    try:
        return codecs.lookup(getattr(sys.stdout, "encoding", None) or "utf-8").name == "utf-8"
    except LookupError:
        return False


def _write_json(record) -> None:
    """One JSON line on stdout: valid JSON whatever the output encoding
    (non-ASCII escaped unless stdout is UTF-8)."""
    from nbcli.output import json_text

    _write(json_text(record, ascii_only=not _stdout_is_utf8()))


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
@read_options
@training_options
@jobs_option
@quiet_option
def train(corpus, output, label_pairs, from_model, **kw):
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
    from nbcli import modelfile
    from nbcli.paths import check_output
    from nbcli.sources import labeled_corpus, parse_label_pair
    from nbcli.training import train as train_model

    diagnostics = _diagnostics(kw["quiet"])
    check_output(output, [*corpus, *(parse_label_pair(p)[1] for p in label_pairs)])
    if from_model:
        classifier = _retrain(from_model, corpus, label_pairs, kw)
    else:
        if not corpus and not label_pairs:
            raise click.UsageError("give a CORPUS or at least one --label CLASS=PATH")
        pairs = [parse_label_pair(p) for p in label_pairs]
        analyzer_options, options = _training_setup(kw)
        if options.needs_second_pass and ("-" in corpus or any(path == "-" for _, path in pairs)):
            raise NbcliError(
                "--tf-log and --length-norm read the corpus twice, so it cannot come from stdin",
                hint="save it to a file first",
            )
        docs = labeled_corpus(corpus, pairs, _read_opts(kw, diagnostics))
        with diagnostics.progress("training", docs.total) as advance:
            classifier = train_model(
                docs, analyzer_options, options, progress=lambda batch: advance(docs.progress(batch)), jobs=kw["jobs"]
            )
    modelfile.save(classifier, output)
    counts = ", ".join(f"{c} {int(n)}" for c, n in zip(classifier.classes, classifier.model.class_count))
    diagnostics.info(
        f"wrote {output}: {classifier.meta['n_documents']} documents ({counts}), {len(classifier.vocabulary)} terms"
    )
    diagnostics.finish()
    _check_inputs()


# Training options that need the corpus, so --from-model refuses them.
_NEEDS_CORPUS = (
    "token_pattern",
    "ngrams",
    "stop_words",
    "no_mail",
    "max_message_bytes",
    "tf_log",
    "idf",
    "length_norm",
)


def _retrain(path, corpus, label_pairs, kw):
    """`train --from-model`: the stored counts, new options."""
    from nbcli import modelfile
    from nbcli.training import refit

    if corpus or label_pairs:
        raise click.UsageError("--from-model re-derives a model from its stored counts; give no CORPUS or --label")
    for name in _NEEDS_CORPUS:
        if kw[name] != _TRAINING_DEFAULTS[name]:
            raise NbcliError(
                f"--{name.replace('_', '-')} needs the corpus, so it cannot be used with --from-model",
                hint="train from the corpus instead",
            )
    old = modelfile.load(path)
    _, options = _training_setup(kw, base_kind=old.model.kind)
    return refit(old, options, path)


# The analysis cap at classification time. Analysing less than the model
# was trained on changes only what is read of messages longer than the cap
# (their tail is ignored, as training ignored the tail of longer ones), so
# it is safe to lower: a filter can bound the work per message below the
# model's setting. Raising it reads more than training ever did of long
# messages, which is allowed but moves them away from what the model saw.
message_cap_option = click.option(
    "--max-message-bytes",
    type=ByteSize(MAX_MESSAGE_BYTES_CAP),
    default=None,
    show_default="the model's, 512K unless trained otherwise",
    help="Analyse at most this much of each email message. Lower than the model's setting bounds the work per "
    "message (the rest of a longer message is ignored, as in training).",
)


def _load_model(path: str, max_message_bytes: int | None = None):
    """The classifier in model file `path`, with the analysis cap given at
    classification time, if any (see `message_cap_option`)."""
    import dataclasses

    from nbcli import modelfile

    classifier = modelfile.load(path)
    if max_message_bytes is not None:
        classifier.analyzer_options = dataclasses.replace(
            classifier.analyzer_options, max_message_bytes=max_message_bytes
        )
        classifier._analyzer = None
    return classifier


explain_option = click.option(
    "--explain",
    type=click.IntRange(1),
    metavar="N",
    help=(
        "Add the N terms that pushed each decision most, with their contributions in log-odds toward the chosen "
        "class against the runner-up."
    ),
)


@cli.command()
@click.argument("model")
@click.argument("inputs", nargs=-1, metavar="[INPUT]...")
@json_option
@explain_option
@message_cap_option
@read_options
@jobs_option
@quiet_option
def predict(model, inputs, as_json, explain, max_message_bytes, **kw):
    """Classify documents: one line per document on stdout.

    INPUT is a file (one document), a folder (every file below it), a
    .tsv/.csv/.jsonl table (one document per row), or - for stdin (one
    document or an mbox; a table if its first non-blank line is a JSON
    object with the text field, or a header row of bare names split by tabs
    or commas that names the text field; or as --input-format says).
    Without INPUT, stdin is read. Empty documents are skipped with a
    warning. Inputs that could not be read make the exit status 1 at the
    end (--strict: any skipped input is an error at once).

    TSV output: id<TAB>label<TAB>probability of that label. With --json:
    {"id", "label", "probability", "probabilities": {class: p, ...},
    "log_probabilities": {class: log p, ...}}.

    --explain N adds the N terms with the largest contributions to the
    log-odds of the chosen class against the runner-up: in TSV, three more
    columns per term (term, count, contribution); in JSON, "explanation":
    {"versus", "log_odds", "prior", "unknown": {"count", "contribution"},
    "terms": [{"term", "count", "contribution"}, ...]}, where the
    contributions of all terms, the prior and the unknown terms add up to
    log_odds.

    \b
    Example:
      nbcli predict mail.nb sample_corpora/mail/test/spam/0001.eml
      nbcli predict mail.nb --json - < message.eml
      nbcli predict mail.nb --explain 5 message.eml
      nbcli predict topics.nb sample_corpora/topics/test.jsonl | cut -f2 | sort | uniq -c
    """
    from nbcli.output import prediction_json, prediction_tsv

    diagnostics = _diagnostics(kw["quiet"])
    if not inputs:
        if sys.stdin.isatty():
            raise click.UsageError("no INPUT given and stdin is a terminal; give files, folders, or - for stdin")
        inputs = ("-",)
    from nbcli.sources import Corpus, documents_in
    from nbcli.walk import Skipped

    classifier = _load_model(model, max_message_bytes)
    opts = _read_opts(kw, diagnostics)
    docs = Corpus([documents_in(path, opts) for path in inputs])
    import numpy as np

    classes = classifier.classes
    written = 0
    ascii_json = not _stdout_is_utf8()

    def nonempty(stream):
        for doc in stream:
            if len(doc.data) == 0:
                opts.warn(Skipped(f"skipping {doc.id}: empty document"))
                continue
            yield doc

    with diagnostics.progress("classifying", docs.total) as advance:
        for batch, result in classifier.classify(nonempty(docs), kw["jobs"], explain or 0):
            log_proba, why = result if explain else (result, None)
            best = log_proba.argmax(axis=1)
            proba = np.exp(log_proba)
            lines = []
            for i, doc in enumerate(batch):
                label = classes[best[i]]
                if as_json:
                    extra = {"explanation": why[i]} if why else {}
                    lines.append(
                        prediction_json(
                            doc.id,
                            label,
                            dict(zip(classes, proba[i].tolist())),
                            dict(zip(classes, log_proba[i].tolist())),
                            ascii_json,
                            **extra,
                        )
                    )
                else:
                    lines.append(prediction_tsv(doc.id, label, float(proba[i, best[i]]), why[i] if why else None))
            sys.stdout.write("\n".join(lines) + "\n")
            sys.stdout.flush()
            written += len(batch)
            advance(docs.progress(batch))
    if written == 0:
        raise NbcliError(
            f"nothing to classify: {' '.join(inputs)} held no non-empty documents",
            hint="check the input paths",
        )
    diagnostics.finish()
    _check_inputs()


@cli.command("eval")
@click.argument("args", nargs=-1, metavar="[MODEL] [CORPUS]...")
@click.option(
    "--label",
    "label_pairs",
    multiple=True,
    metavar="CLASS=PATH",
    help="Documents in PATH have true class CLASS. Repeatable.",
)
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
@seed_option
@cutoff_options
@target_fpr_option
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
        "Also draw the ROC curve (a spam model) or the confusion matrix (others) into FILE: .svg, or .png with the "
        "extra nbcli[plot] (matplotlib)."
    ),
)
@json_option
@read_options
@training_options
@jobs_option
@quiet_option
@click.pass_context
def eval_(ctx, args, label_pairs, predictions, truth, cv, seed, plot, as_json, **kw):
    """Evaluate a model, predictions, or training settings.

    \b
      nbcli eval MODEL CORPUS...        a model on labelled documents
      nbcli eval --predictions FILE     'nbcli predict --json' lines (- for stdin)
      nbcli eval --cv K CORPUS...       K-fold cross-validation of training settings

    CORPUS is given as for 'nbcli train'. With --predictions, the true
    class of each document is taken from the class folder in its id (as in
    corpus/spam/0001.eml) or from --truth. With --cv, the training options
    (--alpha, --ngrams, ...) are those of 'nbcli train' (they need --cv),
    and each metric is reported as mean ± std over the folds. Prints accuracy, per-class
    precision, recall, F1 and support, macro and weighted averages, the
    confusion matrix and the log loss; for a two-class model with a spam
    class also the ROC AUC and, at the cut-offs, the ham false-positive
    rate, spam recall and unsure fraction. Tables for people, or --json.

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
    diagnostics = _diagnostics(kw["quiet"])
    _check_cutoffs(kw["spam_cutoff"], kw["ham_cutoff"])
    if plot:
        from nbcli.paths import check_output
        from nbcli.plot import check_path

        check_path(plot)
        check_output(plot, [*args, *(p.partition("=")[2] for p in label_pairs), predictions, truth], "--plot")
    if cv:
        if plot:
            raise click.UsageError("--plot does not go with --cv: evaluate a model, or predictions, to plot")
        if predictions:
            raise click.UsageError("--cv and --predictions do not go together")
        if not args and not label_pairs:
            raise click.UsageError("give a CORPUS or at least one --label CLASS=PATH to cross-validate")
        report = _cross_validate(args, label_pairs, cv, seed, kw, diagnostics)
        _report_cv(report, as_json, kw)
        diagnostics.finish()
        _check_inputs()
        return
    _refuse_training_options(ctx, ["seed", *(n for n in _TRAINING_OPTION_NAMES if n != "max_message_bytes")], "--cv")
    if truth and not predictions:
        raise click.UsageError("--truth goes with --predictions")
    if predictions:
        if args or label_pairs:
            raise click.UsageError(
                "--predictions takes no MODEL, CORPUS or --label: the predictions hold the model's output"
            )
        labels, log_proba, classes = _read_predictions(predictions, truth)
        _evaluated(labels, log_proba, classes, None, plot, as_json, kw)
        return
    if not args:
        raise click.UsageError("give MODEL and CORPUS, or --predictions FILE")
    model, corpus = args[0], args[1:]
    if not corpus and not label_pairs:
        raise click.UsageError("give a CORPUS or at least one --label CLASS=PATH")
    from click.core import ParameterSource

    from nbcli.sources import labeled_corpus, parse_label_pair

    pairs = [parse_label_pair(p) for p in label_pairs]

    given_cap = ctx.get_parameter_source("max_message_bytes") is ParameterSource.COMMANDLINE
    classifier = _load_model(model, kw["max_message_bytes"] if given_cap else None)
    docs = labeled_corpus(corpus, pairs, _read_opts(kw, diagnostics))
    with diagnostics.progress("evaluating", docs.total) as advance:
        labels, log_proba = classifier.score_labelled(
            docs, progress=lambda batch: advance(docs.progress(batch)), jobs=kw["jobs"]
        )
    if not labels:
        raise NbcliError("the evaluation corpus has no documents", hint="check the paths")
    _evaluated(labels, log_proba, classifier.classes, model, plot, as_json, kw)
    diagnostics.finish()
    _check_inputs()


def _evaluated(labels, log_proba, classes, source, plot, as_json, kw):
    """Report on scored documents, draw the --plot, then check the limits."""
    from click.core import ParameterSource

    from nbcli.evaluation import figure, report

    options = _eval_options(kw)
    if (
        click.get_current_context().get_parameter_source("spam_class") is ParameterSource.COMMANDLINE
        and options.spam_class not in classes
    ):
        raise NbcliError(
            (
                f"--spam-class {options.spam_class}: {'the model has' if source else 'the predictions have'} no such "
                f"class (classes: {', '.join(classes)})"
            ),
            hint="name one of those classes",
        )
    result = report(labels, log_proba, classes, options)
    if plot:
        from nbcli import plot as plotting

        drawing = figure(labels, log_proba, classes, result, options)
        try:
            if plotting.check_path(plot) == "svg":
                with open(plot, "w", encoding="utf-8") as fh:
                    fh.write(plotting.svg(drawing))
            else:
                plotting.png(drawing, plot)
        except OSError as exc:
            raise NbcliError(f"--plot {plot}: {exc.strerror or exc}") from None
    _report(result, source, as_json, kw)


def _text_lines(path):
    """The lines of a UTF-8 text file, or of stdin for -."""
    if path == "-":
        return sys.stdin
    if not os.path.isfile(path):
        raise NbcliError(f"{path}: {'a folder, not a file' if os.path.isdir(path) else 'no such file'}")
    return open(path, encoding="utf-8", errors="replace")


def _read_predictions(path, truth_path):
    """(true labels, log-posteriors, classes) from prediction lines."""
    from nbcli.predictions import read_predictions, read_truth

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


def _unfixed(grid: dict, kw) -> dict:
    """The grid without the dimensions the user fixed on the command line
    (say --model bernoulli): those keep the user's value."""
    names = {"unknown": "unknown_terms"}  # TrainOptions field -> option key
    return {f: v for f, v in grid.items() if kw[names.get(f, f)] == _TRAINING_DEFAULTS[names.get(f, f)]}


_TRAINING_OPTION_NAMES = list(_TRAINING_DEFAULTS)  # every option of the training_options bundle


def _refuse_training_options(ctx, names, needs):
    """Options given on the command line that only make sense with `needs`."""
    from click.core import ParameterSource

    given = [n for n in names if ctx.get_parameter_source(n) is ParameterSource.COMMANDLINE]
    if given:
        raise click.UsageError(f"--{given[0].replace('_', '-')} needs {needs}")


def _analysed(corpus, label_pairs, kw, diagnostics):
    """(AnalyzerOptions, TrainOptions, the corpus read and analysed once)
    for commands that train their own models."""
    from nbcli.crossval import analyse
    from nbcli.sources import labeled_corpus, parse_label_pair
    from nbcli.tokenize import Analyzer

    pairs = [parse_label_pair(p) for p in label_pairs]
    analyzer_options, options = _training_setup(kw)
    docs = labeled_corpus(corpus, pairs, _read_opts(kw, diagnostics))
    with diagnostics.progress("reading", docs.total) as advance:
        analysed = analyse(docs, Analyzer(analyzer_options), progress=lambda batch: advance(docs.progress(batch)))
    return analyzer_options, options, analysed


def _cross_validate(corpus, label_pairs, k, seed, kw, diagnostics):
    from nbcli.crossval import cross_validate

    analyzer_options, options, analysed = _analysed(corpus, label_pairs, kw, diagnostics)
    return cross_validate(analysed, k, seed, analyzer_options, options, _eval_options(kw), kw["jobs"])


def _report_cv(report, as_json, kw):
    from nbcli.evaluation import check_limits

    if as_json:
        _write_json(report)
    else:
        from nbcli.output import render_cv

        render_cv(report, sys.stdout)
    sys.stdout.flush()
    reason = check_limits({n: m["mean"] for n, m in report["metrics"].items()}, kw["fail_under"], kw["fail_over"])
    if reason:
        raise NbcliError(f"mean {reason}")


def _eval_options(kw):
    from nbcli.evaluation import EvalOptions

    return EvalOptions(kw["spam_class"], kw["spam_cutoff"], kw["ham_cutoff"], kw["target_fpr"])


def _report(report, source, as_json, kw):
    """Write an eval report, then fail on a broken --fail-under/--fail-over."""
    from nbcli.evaluation import check_limits, flat_metrics

    if as_json:
        _write_json({"model": source, **report})
    else:
        from nbcli.output import render_eval

        render_eval(report, sys.stdout, source or "predictions")
    sys.stdout.flush()
    reason = check_limits(flat_metrics(report), kw["fail_under"], kw["fail_over"])
    if reason:
        raise NbcliError(reason)


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
@jobs_option
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
    from nbcli import tuning
    from nbcli.evaluation import METRICS

    diagnostics = _diagnostics(kw["quiet"])
    _check_cutoffs(kw["spam_cutoff"], kw["ham_cutoff"])
    if metric not in METRICS:
        raise click.BadParameter(
            f"{metric!r} is not a metric; use one of {', '.join(METRICS)}", param_hint="'--metric'"
        )
    if not corpus and not label_pairs:
        raise click.UsageError("give a CORPUS or at least one --label CLASS=PATH")
    analyzer_options, options, analysed = _analysed(corpus, label_pairs, kw, diagnostics)
    result = tuning.tune(
        analysed, cv, seed, analyzer_options, options, _eval_options(kw), metric, kw["jobs"], _unfixed(tuning.GRID, kw)
    )
    given = _given_options(ctx, {"label_pairs", *_TRAINING_OPTION_NAMES, *_READ_OPTION_NAMES})
    result["command"] = tuning.train_command(list(corpus), given, result["best"])
    if as_json:
        _write_json(result)
    else:
        from nbcli.output import render_tune

        render_tune(result, sys.stdout)
    diagnostics.finish()
    _check_inputs()


_READ_OPTION_NAMES = ["input_format", "text_field", "label_field", "id_field", "no_header", "max_doc_bytes", "strict"]


def _given_options(ctx, names) -> list[tuple[str, object]]:
    """(option, value) of each option in `names` given on the command line,
    in the command's order; flags have the value True."""
    from click.core import ParameterSource

    out = []
    for param in ctx.command.params:
        if param.name not in names or ctx.get_parameter_source(param.name) is not ParameterSource.COMMANDLINE:
            continue
        option = max(param.opts, key=len)
        value = ctx.params[param.name]
        if getattr(param, "is_flag", False):
            out.append((option, True))
        elif getattr(param, "multiple", False):
            out.extend((option, v) for v in value)
        else:
            out.append((option, value))
    return out


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
    from nbcli import modelfile

    classifier = modelfile.load(model)
    description = {"model": model, **classifier.describe(top)}
    if as_json:
        _write_json(description)
    else:
        from nbcli.output import render_info

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
    from nbcli import filtering

    diagnostics = _diagnostics(quiet)
    _check_cutoffs(spam_cutoff, ham_cutoff)
    path = input or "-"
    if path == "-" and sys.stdin.isatty():
        raise click.UsageError("no INPUT given and stdin is a terminal; give a message or mbox file, or - for stdin")
    from nbcli.paths import check_split_folder
    from nbcli.sources import read_messages
    from nbcli.walk import InputReport

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
        classifier, model_error = None, str(exc)
        _err(f"nbcli: error: {exc}; passing messages through unchanged")
    if splitter is not None:
        write = splitter.write
    else:
        out = sys.stdout.buffer
        as_mbox = path != "-" and os.path.isdir(path)  # many files: one mbox out

        def write(verdict, data):
            out.write(filtering.as_mbox_entry(data) if as_mbox else data)
            out.flush()

    try:
        seen = filtering.run(messages, classifier, verdicts, write, diagnostics.warn, model_error, jobs, explain or 0)
    except NbcliError as exc:  # INPUT unreadable part-way, or a --split append failed
        exc.exit_code = 3 if exit_codes else 1
        raise
    if not seen:
        diagnostics.warn(f"{'standard input' if path == '-' else path}: no messages")
    if splitter is not None and not quiet:
        _err(f"nbcli: {splitter.summary()}")
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
    from nbcli.output import display_text
    from nbcli.sources import Corpus, documents_in
    from nbcli.tokenize import Analyzer, AnalyzerOptions

    if model:
        from nbcli import modelfile

        options = modelfile.load(model).analyzer_options
    else:
        options = AnalyzerOptions(token_pattern=token_pattern, mail=not no_mail)
    analyzer = Analyzer(options)
    diagnostics = _diagnostics(False)
    opts = _read_opts(kw, diagnostics)
    docs = list(Corpus([documents_in(p, opts) for p in (inputs or ("-",))]))
    if not docs:
        raise NbcliError("no documents found", hint="check the input paths")
    for doc in docs:
        terms = analyzer.tokens(doc.data, doc.kind)
        if len(docs) > 1:
            _write(f"==> {display_text(doc.id)} <==")
        if terms:
            sys.stdout.write("\n".join(t.replace("\n", " ") for t in terms) + "\n")
    diagnostics.finish()
    _check_inputs()


class _ClosedStream:
    """Stands in for sys.stdin or sys.stdout when the process was started
    with that descriptor closed (`nbcli predict ... <&-`, `>&-`): reading or
    writing is a one-line error that says so, while the descriptor itself
    holds /dev/null, so that no file nbcli opens later can take its number
    (results written to "stdout" would otherwise land in a model file)."""

    def __init__(self, name: str):
        self.name = name
        self.buffer = self
        self.encoding = "utf-8"
        self.errors = "strict"

    def _closed(self, *args, **kw):
        raise NbcliError(f"standard {self.name} is closed", hint=f"run nbcli with its standard {self.name} open")

    read = readline = read1 = readinto = write = _closed

    def __iter__(self):
        self._closed()

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return {"input": 0, "output": 1}[self.name]

    def flush(self) -> None:
        pass


def _guard_standard_streams() -> None:
    """Give closed standard descriptors /dev/null, and make the text streams
    safe to write whatever the locale: stderr always works (a closed one
    discards), a closed stdin or stdout is an error when used, and text
    that the output encoding cannot show is backslash-escaped instead of
    failing (PYTHONIOENCODING=ascii)."""
    import io

    for fd, mode in ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY)):
        try:
            os.fstat(fd)
            continue
        except OSError:
            pass
        null = os.open(os.devnull, mode)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        if fd == 0:
            sys.stdin = _ClosedStream("input")
        elif fd == 1:
            sys.stdout = _ClosedStream("output")
        else:
            sys.stderr = io.TextIOWrapper(open(2, "wb", closefd=False), errors="backslashreplace", line_buffering=True)
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


def main() -> None:
    _guard_standard_streams()
    cli.main(prog_name="nbcli")

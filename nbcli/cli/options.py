"""The command line's options, in one place: click's parameter types, the
option bundles the commands share, the one table of library field names and
command-line flags, which options the user gave, and the conversion of
click's arguments to the library's option objects.

The checks on combinations of training options are the library's
(`training.training_options`, errors that name the flags); this module only
maps click's arguments onto it, and states no default of its own: a default
lives in its click option, once. "Given by the user" means typed on the
command line (click's ParameterSource.COMMANDLINE), also when the value
typed equals the default.

Imported by cli.py at start-up, so, like it, light: numpy and the rest of
nbcli are imported inside the functions that need them.
"""

from __future__ import annotations

import click

from nbcli.defaults import (
    DEFAULT_HAM_CUTOFF,
    DEFAULT_MAX_DOC_BYTES,
    DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_SPAM_CUTOFF,
    INPUT_FORMATS,
    MAX_DOC_BYTES_CAP,
    MAX_MESSAGE_BYTES_CAP,
)
from nbcli.errors import NbcliError

# -- parameter types and option bundles ------------------------------------------


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
            type=ByteSize(MAX_DOC_BYTES_CAP),
            default=DEFAULT_MAX_DOC_BYTES,
            show_default="16M",
            help="Read at most this much of each document (a warning says when a document is cut); at most 64M "
            "(analysing a document takes about 15 times its size in memory).",
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
    process may use, and say so (see `cli._diagnostics`)."""
    from nbcli.run.executor import cpu_count

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
cluster_option = click.option(
    "--cluster",
    metavar="ADDRESS",
    default=None,
    help="Do the work on a Dask cluster: tcp://HOST:8786 for a running scheduler, local[:N] for N worker "
    "processes started for this command. Workers need the same nbcli and the files at the same paths. "
    "Needs: pip install 'nbcli[dask]'. Results are the same as with --jobs. A scheduler that does not answer "
    "in 10 s (NBCLI_CLUSTER_TIMEOUT=SECONDS) is an error.",
)


def cluster_jobs(kw: dict):
    """What the pipeline runs on: kw["jobs"], or with --cluster the
    cluster's executor, connected here and closed when the command ends
    (see `cluster`). --jobs and --cluster do not go together."""
    address = kw.pop("cluster", None)
    if address is None:
        return kw["jobs"]
    ctx = click.get_current_context()
    if is_given(ctx, "jobs"):
        raise click.UsageError("--jobs and --cluster do not go together: the cluster's workers do the work")
    from nbcli.run.dask_executor import Session
    from nbcli.run.executor import ExecutorError

    try:
        return ctx.with_resource(Session(address, nbcli_versions))
    except ExecutorError as exc:  # the executor imports nothing of nbcli: its one line, as ours
        raise NbcliError(exc.message, exc.hint) from None


def nbcli_versions() -> tuple[str, int]:
    """(nbcli version, model-format version) of this process: what every
    worker of a cluster must match (the Dask executor runs it on each
    worker, and compares)."""
    from nbcli import __version__
    from nbcli.store.modelfile import FORMAT_VERSION

    return __version__, FORMAT_VERSION


def refuse_cluster(kw: dict, what: str) -> None:
    """A usage error if --cluster was given for work that does not run on one."""
    if kw.get("cluster") is not None:
        raise click.UsageError(f"--cluster does not go with {what}")


json_option = click.option("--json", "as_json", is_flag=True, help="JSON output for scripts.")


class Limit(click.ParamType):
    """METRIC=VALUE for --fail-under / --fail-over."""

    name = "METRIC=V"

    def convert(self, value, param, ctx):
        from nbcli.evaluate.report import parse_limit

        if isinstance(value, tuple):
            return value
        try:
            return parse_limit(value)
        except NbcliError as exc:
            self.fail(str(exc), param, ctx)


# How a two-class spam model's P(spam) becomes a verdict: `predict`, `filter`, `eval` and `serve`.
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
calibration_options = _apply(
    [
        click.option(
            "--calibration",
            is_flag=True,
            help="Also report how well the probabilities are calibrated: the Brier score, the expected calibration "
            "error (15 equal-width bins of the predicted class's probability) and the reliability table.",
        ),
        click.option(
            "--target-unsure",
            type=click.FloatRange(0, 1),
            metavar="SHARE",
            help="Also report the narrowest unsure band (around log-odds 0) that leaves at most SHARE of the spam "
            "model's documents unsure, its cut-offs and the accuracy on the documents it decides.",
        ),
    ]
)
seed_option = click.option(
    "--seed", type=int, default=0, show_default=True, help="Cross-validation: the seed that deals documents to folds."
)


def check_cutoffs(spam_cutoff, ham_cutoff):
    if ham_cutoff > spam_cutoff:
        raise click.UsageError(f"--ham-cutoff {ham_cutoff} is above --spam-cutoff {spam_cutoff}")


# The options that decide what a model learns: shared by `train` and by the
# commands that train models of their own (cross-validation, tuning). Add a
# new training option here and its field in TRAINING_FLAGS.
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
                "[default: 1; when most training documents are email, 0.3/N for N documents (the mail model; "
                "0.0001 with --model multinomial)]"
            ),
        ),
        click.option(
            "--unknown-terms",
            type=click.Choice(["skip", "smooth"]),
            default=None,
            help="When classifying, a term the model never saw is skipped, or counts as a term seen zero times in "
            "every class, with smoothed probability alpha / (N_c + alpha |V|); multinomial only (on mail, smooth "
            "asks for the multinomial model).  [default: skip; smooth for --model multinomial when most training "
            "documents are email]",
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
            "[default: multinomial; when most training documents are email, complement with --tf-log and "
            "--length-norm (the mail model, see the README's Mail section)]",
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


explain_option = click.option(
    "--explain",
    type=click.IntRange(1),
    metavar="N",
    help=(
        "Add the N terms that pushed each decision most, with their contributions in log-odds toward the chosen "
        "class against the runner-up (the event model's raw log-odds, before any calibration; the output says so)."
    ),
)


# The library's field name (AnalyzerOptions, TrainOptions; see
# training.OPTION_DEFAULTS) -> the flag of `nbcli train`, for every training
# option; mail is the inverse of --no-mail. tests/cli/test_options.py checks it
# against the training_options bundle. It is also the one table by which the
# command line says a library error (errors.ParameterError, which names the
# Python parameter) in flag terms: `in_flag_terms`.
TRAINING_FLAGS = {
    "token_pattern": "--token-pattern",
    "ngrams": "--ngrams",
    "stop_words": "--stop-words",
    "min_df": "--min-df",
    "max_df": "--max-df",
    "max_features": "--max-features",
    "alpha": "--alpha",
    "unknown": "--unknown-terms",
    "mail": "--no-mail",
    "max_message_bytes": "--max-message-bytes",
    "prior": "--prior",
    "prior_alpha": "--prior-alpha",
    "kind": "--model",
    "estimate": "--estimate",
    "m_estimate": "--m-estimate",
    "tf_log": "--tf-log",
    "idf": "--idf",
    "length_norm": "--length-norm",
    "weight_norm": "--weight-norm",
    "select": "--select",
    "select_by": "--select-by",
}
_INVERTED = {"mail"}  # fields whose flag says the opposite
# The flags of the library's parameters that are not training options
# (so not in TRAINING_FLAGS, which `training_setup` reads field by field)
# and that its errors name: table models' settings and columns,
# calibration, clustering, cross-validation, the online protocol, pruning.
PARAMETER_FLAGS = {
    "numeric_model": "--numeric-model",
    "var_smoothing": "--var-smoothing",
    "bandwidth": "--bandwidth",
    "bins": "--bins",
    "features": "--features",
    "ignore": "--ignore-fields",
    "categorical": "--categorical",
    "numeric": "--numeric",
    "calibrate": "--calibrate",
    "k": "-k",
    "cv": "--cv",
    "train": "--train",
    "online": "--online",
    "spam_class": "--spam-class",
    "min_count": "--min-count",
    "unseen_since": "--unseen-since",
}


def flag(field: str) -> str:
    """The command-line flag of a training option's field name, or of
    another parameter the library names (PARAMETER_FLAGS)."""
    return TRAINING_FLAGS[field] if field in TRAINING_FLAGS else PARAMETER_FLAGS[field]


def in_flag_terms(exc: NbcliError) -> NbcliError:
    """A library error as the command line says it: a ParameterError with
    each parameter named by its flag (TRAINING_FLAGS, PARAMETER_FLAGS), anything else as it
    is. The command line's error boundary (`cli.NbcliGroup.main`) calls it."""
    from nbcli.errors import ParameterError

    return exc.named(flag) if isinstance(exc, ParameterError) else exc


def _params(bundle) -> dict[str, click.Parameter]:
    """{flag: click parameter} of an option bundle (its longest name)."""
    params = bundle(lambda **kw: None).__click_params__
    return {max(p.opts, key=len): p for p in params}


_TRAINING_PARAMS = _params(training_options)
_READ_PARAMS = _params(read_options)
# click's names (the keys of a command's keyword arguments) of the bundles.
TRAINING_PARAM_NAMES = [p.name for p in _TRAINING_PARAMS.values()]
READ_PARAM_NAMES = [p.name for p in _READ_PARAMS.values()]


def _param_name(field: str) -> str:
    return _TRAINING_PARAMS[TRAINING_FLAGS[field]].name


def is_given(ctx: click.Context, name: str) -> bool:
    """Whether the user typed option `name` (click's name) on the command
    line: the one test of "given" (a typed default counts; a default does
    not)."""
    from click.core import ParameterSource

    return ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE


def given_fields(ctx: click.Context) -> set[str]:
    """The field names of the training options given on the command line."""
    return {field for field in TRAINING_FLAGS if is_given(ctx, _param_name(field))}


def given_options(ctx: click.Context, names) -> list[tuple[str, object]]:
    """(option, value) of each option in `names` given on the command line,
    in the command's order; flags have the value True."""
    out = []
    for param in ctx.command.params:
        if param.name not in names or not is_given(ctx, param.name):
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


def refuse_options(ctx: click.Context, names, needs: str) -> None:
    """Options (click's names) given on the command line that only make sense
    with `needs`: a usage error naming the first."""
    params = {p.name: p for p in ctx.command.params}
    given = [n for n in names if is_given(ctx, n)]
    if given:
        raise click.UsageError(f"{max(params[given[0]].opts, key=len)} needs {needs}")


def _names(value: str | None) -> list[str]:
    return [] if not value else [n.strip() for n in value.split(",") if n.strip()]


def _bandwidth(value: str | None):
    """--bandwidth: 'scott', 'silverman' or a positive number."""
    if value is None or value in ("scott", "silverman"):
        return value
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if not number > 0 or number == float("inf"):
        raise click.BadParameter(f"{value!r} is not scott, silverman or a positive number")
    return number


# Table models (tables.py): how a CSV/TSV/JSON-lines table's columns become features.
table_options = _apply(
    [
        click.option(
            "--features",
            metavar="all|COL,...",
            help="Train a table model on the table's columns: all of them (but the label and id fields), or those "
            "named; every column's type is inferred (see --categorical, --numeric).",
        ),
        click.option("--ignore-fields", metavar="COL,...", help="Columns that are not features (with --features)."),
        click.option(
            "--categorical", metavar="COL,...", help="Columns whose values are categories, whatever they look like."
        ),
        click.option("--numeric", metavar="COL,...", help="Columns whose values are numbers (other cells: missing)."),
        click.option(
            "--numeric-model",
            type=click.Choice(["gaussian", "kde", "discretize"]),
            default=None,
            help="Numeric columns: a Gaussian per class, a Gaussian kernel density estimate per class, or "
            "equal-frequency bins read as categories.  [default: gaussian]",
        ),
        click.option(
            "--var-smoothing",
            type=click.FloatRange(min=0),
            default=None,
            help="Gaussian variance floor: this fraction of the largest variance of any numeric column is added "
            "to every class variance (scikit-learn's rule).  [default: 1e-9]",
        ),
        click.option(
            "--bandwidth",
            default=None,
            metavar="scott|silverman|H",
            help="Kernel density bandwidth: Scott's or Silverman's rule on each class's values, or H in the "
            "column's units.  [default: scott]",
        ),
        click.option(
            "--bins",
            type=click.IntRange(2, 1000),
            default=None,
            help="Equal-frequency bins of --numeric-model discretize.  [default: 10]",
        ),
    ]
)
TABLE_PARAMS = (
    "features",
    "ignore_fields",
    "categorical",
    "numeric",
    "numeric_model",
    "var_smoothing",
    "bandwidth",
    "bins",
)


def table_setup(kw):
    """(TableColumns, TableSettings) of the table options and the smoothing
    options they share with text models (--alpha, which may be 0 here, --m-estimate,
    --estimate, --prior, --prior-alpha)."""
    from nbcli.nb.smoothing import check_prior_alpha, parse_m_estimate, parse_prior
    from nbcli.nb.table_classifier import TableColumns
    from nbcli.nb.tables import TableSettings

    alpha = kw.get("alpha")
    if alpha is not None and not (alpha >= 0 and alpha != float("inf")):
        raise NbcliError(f"--alpha must be a number >= 0, not {alpha}", hint="0 is the unsmoothed estimate")
    if alpha is not None and kw.get("m_estimate") is not None:
        raise NbcliError("give --alpha or --m-estimate, not both")
    features = kw.get("features")
    columns = TableColumns(
        features=None if features in (None, "all") else _names(features),
        ignore=_names(kw.get("ignore_fields")),
        categorical=_names(kw.get("categorical")),
        numeric=_names(kw.get("numeric")),
    )
    settings = TableSettings(
        alpha=1.0 if alpha is None else alpha,
        m_estimate=parse_m_estimate(kw["m_estimate"]) if kw.get("m_estimate") else None,
        estimate=kw.get("estimate") or "mean",
        prior=parse_prior(kw["prior"]) if kw.get("prior") else "fit",
        prior_alpha=check_prior_alpha(kw.get("prior_alpha")),
        numeric_model=kw.get("numeric_model") or "gaussian",
        var_smoothing=1e-9 if kw.get("var_smoothing") is None else kw["var_smoothing"],
        bandwidth=_bandwidth(kw.get("bandwidth")) or "scott",
        bins=kw.get("bins") or 10,
    )
    return columns, settings


# `--label CLASS=PATH` for the commands that read labelled documents to judge or fit on (eval, calibrate)
true_label_option = click.option(
    "--label",
    "label_pairs",
    multiple=True,
    metavar="CLASS=PATH",
    help="Documents in PATH have true class CLASS. Repeatable.",
)


def refuse_training_options(ctx: click.Context, needs: str, keep=()) -> None:
    """The training options (but the fields in `keep`) and --seed (unless
    kept) given without `needs` (--cv): a usage error."""
    names = [*(["seed"] if "seed" not in keep else []), *(_param_name(f) for f in TRAINING_FLAGS if f not in keep)]
    refuse_options(ctx, names, needs)


def unfixed(grid: dict, ctx: click.Context) -> dict:
    """The grid (by field name) without the dimensions the user fixed on
    the command line (say --model bernoulli, or --model multinomial): those
    keep the user's value."""
    given = given_fields(ctx)
    return {f: v for f, v in grid.items() if f not in given}


# Training options that need the corpus, so `train --from-model` refuses them.
_NEEDS_CORPUS = ("token_pattern", "ngrams", "stop_words", "mail", "max_message_bytes", "tf_log", "idf", "length_norm")


def refuse_corpus_options(ctx: click.Context) -> None:
    """`train --from-model`: the training options given that need the corpus."""
    given = given_fields(ctx)
    for field in _NEEDS_CORPUS:
        if field in given:
            raise NbcliError(
                f"{flag(field)} needs the corpus, so it cannot be used with --from-model",
                hint="train from the corpus instead",
            )


# -- click's arguments to the library's option objects ---------------------------


def training_setup(kw, base_kind: str = "auto"):
    """The `training_options` as (AnalyzerOptions, TrainOptions), checked
    before any document is read (every check is `training.training_options`'s),
    with the options typed on the command line as given. base_kind: the
    event model when --model is not given."""
    from nbcli.fit.training_options import training_options as build

    fields = {}
    for field in TRAINING_FLAGS:
        value = kw[_param_name(field)]
        fields[field] = not value if field in _INVERTED else value
    ctx = click.get_current_context(silent=True)
    return build(base_kind, given=given_fields(ctx) if ctx is not None else None, **fields)


def read_opts(kw, diagnostics):
    """The `read_options` as ReadOptions. Warnings about skipped inputs go
    through an InputReport (kept in the context for `check_inputs`), which
    applies --strict and counts the inputs that could not be read."""
    from nbcli.text.sources import ReadOptions
    from nbcli.text.walk import InputReport

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


def model_read_opts(classifier, kw, diagnostics, labels: bool = True):
    """`read_opts` for inputs to `classifier`: a table model reads rows of
    tables that have its columns, with the id field it was trained with,
    and (labels: eval's truth) its label field, unless given."""
    import dataclasses

    opts = read_opts(kw, diagnostics)
    table = classifier.meta.get("table") if getattr(classifier.model, "kind", None) == "table" else None
    if table is None:
        return opts
    return dataclasses.replace(
        opts,
        rows=True,
        label_field=opts.label_field or (table.get("label_field") if labels else None),
        soft_id_field=table.get("id_field"),
        need_fields=tuple(classifier.names),
    )


def check_inputs() -> None:
    """The exit status for inputs that could not be read, as grep's: the
    command has done what it could with the rest (train has written its
    model), then exits 1 with one line saying how many (see sources.py,
    "skipped inputs")."""
    ctx = click.get_current_context(silent=True)
    report = ctx.meta.get("nbcli.inputs") if ctx is not None else None
    if report is not None:
        report.check()


def eval_options(kw):
    """The `cutoff_options` and --target-fpr as EvalOptions."""
    from nbcli.evaluate.report import EvalOptions

    return EvalOptions(
        kw["spam_class"],
        kw["spam_cutoff"],
        kw["ham_cutoff"],
        kw["target_fpr"],
        calibration=kw.get("calibration", False),
        target_unsure=kw.get("target_unsure"),
    )


def make_diagnostics(quiet: bool):
    """The command's Diagnostics (warnings and progress on stderr), after
    saying that --jobs was capped, if it was (see `_cap_jobs`)."""
    from nbcli.cli.diagnostics import Diagnostics

    diagnostics = Diagnostics(quiet=quiet)
    ctx = click.get_current_context(silent=True)
    capped = ctx.meta.get("nbcli.jobs_capped") if ctx is not None else None
    if capped:
        diagnostics.info(f"--jobs {capped[0]} is more than the {capped[1]} core(s) available; using {capped[1]}")
    return diagnostics


def tuned_flag(field: str) -> str:
    """The `nbcli train` flag of a TrainOptions field (--model for kind),
    or of a table setting (--numeric-model)."""
    return flag(field) if field in TRAINING_FLAGS else "--" + field.replace("_", "-")


def train_command(corpus: list[str], given: list[tuple[str, object]], best: dict) -> str:
    """The `nbcli train` command line: the corpus, the options given (as
    (option, value or True for a flag) pairs, those the grid decides left
    out), the best settings, and -o MODEL."""
    import shlex  # only tune needs it: not on every command's start

    decided = {tuned_flag(f) for f in best}
    words = ["nbcli", "train", *corpus]
    for option, value in given:
        if option in decided:
            continue
        words += [option] if value is True else [option, str(value)]
    for field, value in best.items():
        words += [tuned_flag(field), f"{value:g}" if isinstance(value, float) else str(value)]
    return shlex.join(words + ["-o", "MODEL"])

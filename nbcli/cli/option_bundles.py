"""The option bundles the commands share: click options, with their help
texts and defaults, grouped as the commands use them (a default lives in its
click option, once). Which of them the user gave, and their conversion to
the library's option objects, are options.py's.

Imported at start-up by every command module, so light: nbcli's library is
imported inside the callbacks that need it.
"""

from __future__ import annotations

import click

from nbcli.cli.param_types import ByteSize, DocFrequency, FloatRange
from nbcli.defaults import (
    DEFAULT_HAM_CUTOFF,
    DEFAULT_MAX_DOC_BYTES,
    DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_SPAM_CUTOFF,
    INPUT_FORMATS,
    MAX_DOC_BYTES_CAP,
    MAX_MESSAGE_BYTES_CAP,
)


def bundle(options):
    """One decorator applying `options` (click options or other bundles) in
    their order, as --help lists them."""

    def decorate(f):
        for option in reversed(options):
            f = option(f)
        return f

    return decorate


read_options = bundle(
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
            "an nbcli model file or journal in a folder, a folder reached twice through links, a malformed or "
            "unlabelled table row, an empty document to classify (training counts an empty file as a document "
            "with no terms). Without it these are warnings, and inputs that could not be read (permission denied, "
            "I/O errors) are warnings that make the exit status 1 once the command is done.",
        ),
    ]
)

quiet_option = click.option("-q", "--quiet", is_flag=True, help="No progress bars and no warnings on stderr.")
MAX_JOBS = 1024


def _cap_jobs(ctx, param, value):
    """More workers than cores only adds processes fighting for the same
    cores (`predict -j 5000` took 160 times longer): cap at the cores this
    process may use, and say so (see `options.make_diagnostics`)."""
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
    "Needs: pip install 'nbcli-bayes[dask]'. Results are the same as with --jobs. A scheduler that does not answer "
    "in 10 s (NBCLI_CLUSTER_TIMEOUT=SECONDS) is an error.",
)

json_option = click.option("--json", "as_json", is_flag=True, help="JSON output for scripts.")

# How a two-class spam model's P(spam) becomes a verdict: `predict`, `filter`, `eval` and `serve`.
cutoff_options = bundle(
    [
        click.option(
            "--spam-cutoff",
            type=FloatRange(0, 1),
            default=DEFAULT_SPAM_CUTOFF,
            show_default=True,
            help="P(spam) at or above this is spam.",
        ),
        click.option(
            "--ham-cutoff",
            type=FloatRange(0, 1),
            default=DEFAULT_HAM_CUTOFF,
            show_default=True,
            help="P(spam) at or below this is ham; in between is unsure. Equal cut-offs: no unsure band.",
        ),
        click.option("--spam-class", default="spam", show_default=True, help="The spam class of a two-class model."),
    ]
)


target_fpr_option = click.option(
    "--target-fpr",
    type=FloatRange(0, 1),
    metavar="RATE",
    help=(
        "Also report the lowest spam cut-off whose ham false-positive rate on the evaluated documents is at most "
        "RATE, and the spam recall it leaves (metrics target_spam_recall, target_ham_fpr)."
    ),
)
calibration_options = bundle(
    [
        click.option(
            "--calibration",
            is_flag=True,
            help="Also report how well the probabilities are calibrated: the Brier score, the expected calibration "
            "error (15 equal-width bins of the predicted class's probability) and the reliability table.",
        ),
        click.option(
            "--target-unsure",
            type=FloatRange(0, 1),
            metavar="SHARE",
            help="Also report the narrowest unsure band (around log-odds 0) that leaves at most SHARE of the spam "
            "model's documents unsure, its cut-offs and the accuracy on the documents it decides.",
        ),
    ]
)
seed_option = click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Cross-validation: the seed that deals documents to folds.",
)


# The options that decide what a model learns: shared by `train` and by the
# commands that train models of their own (cross-validation, tuning). Add a
# new training option here and its field in TRAINING_FLAGS.
def vocabulary_options(min_df=1, max_df=1.0, stop_words=None):
    """The options that decide a model's terms, as a list (train's defaults;
    `cluster` keeps fewer terms by default: English stop words out, terms in
    2 documents to half of them)."""
    stop_help = "Drop these words: nbcli's English list, or a file with one word per line."
    if stop_words is not None:
        stop_help = stop_help[:-1] + f"; none keeps every word.  [default: {stop_words}]"
    return [
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
            metavar="english|FILE" if stop_words is None else "english|FILE|none",
            default=stop_words,
            help=stop_help,
        ),
        click.option(
            "--min-df",
            type=DocFrequency(),
            default=min_df,
            show_default=True,
            help="Drop terms in fewer documents than this (a count, or a proportion if written with a point).",
        ),
        click.option(
            "--max-df",
            type=DocFrequency(),
            default=max_df,
            show_default=True,
            help="Drop terms in more documents than this (a count, or a proportion such as 0.9).",
        ),
        click.option(
            "--max-features", type=click.IntRange(1), metavar="K", help="Keep only the K most frequent terms."
        ),
    ]


training_options = bundle(
    [
        *vocabulary_options(),
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
            "--length-norm (the mail model, see docs/guide/mail.md)]",
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

# Table models (tables.py): how a CSV/TSV/JSON-lines table's columns become features.
table_options = bundle(
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
            type=FloatRange(min=0),
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
# `--label CLASS=PATH` for the commands that read labelled documents to judge or fit on (eval, calibrate)
true_label_option = click.option(
    "--label",
    "label_pairs",
    multiple=True,
    metavar="CLASS=PATH",
    help="Documents in PATH have true class CLASS. Repeatable.",
)

# The options of the commands that train models from a corpus (train, eval, tune), after their own.
trainer_options = bundle([read_options, training_options, table_options, jobs_option, cluster_option, quiet_option])

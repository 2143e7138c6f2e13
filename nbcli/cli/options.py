"""The command line's options as the library sees them: the one table of
library field names and command-line flags, which options the user gave,
the refusals of options that do not go together, and the conversion of
click's arguments to the library's option objects. The click options
themselves are option_bundles.py's, their parameter types param_types.py's.

The checks on combinations of training options are the library's
(`training_options.training_options`, errors that name the flags); this module only
maps click's arguments onto it, and states no default of its own: a default
lives in its click option, once. "Given by the user" means typed on the
command line (click's ParameterSource.COMMANDLINE), also when the value
typed equals the default.

Imported by every command module at start-up, so light: numpy and the rest
of nbcli are imported inside the functions that need them.
"""

from __future__ import annotations

import click

from nbcli.cli.option_bundles import read_options, training_options
from nbcli.errors import NbcliError


def pipeline_workers(kw: dict):
    """What the pipeline runs on (the library's `jobs` argument): the number
    --jobs gave (kw["jobs"], always an int), or with --cluster the
    cluster's executor, connected here and closed when the command ends
    (see `cluster`). Two names for two things: `jobs` is the number,
    `workers` what this returns. --jobs and --cluster do not go together."""
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


def check_cutoffs(spam_cutoff, ham_cutoff):
    if ham_cutoff > spam_cutoff:
        raise click.UsageError(f"--ham-cutoff {ham_cutoff} is above --spam-cutoff {spam_cutoff}")


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
    "input_format": "--input-format",
    "text_field": "--text-field",
    "label_field": "--label-field",
    "id_field": "--id-field",
    "pairs": "--label",
    "strict": "--strict",
    "truth": "--truth",
    "fail_under": "--fail-under",
    "fail_over": "--fail-over",
    "target_fpr": "--target-fpr",
    "calibration": "--calibration",
    "target_unsure": "--target-unsure",
    "numeric_model": "--numeric-model",
    "var_smoothing": "--var-smoothing",
    "bandwidth": "--bandwidth",
    "bins": "--bins",
    "features": "--features",
    "ignore": "--ignore-fields",
    "categorical": "--categorical",
    "numeric": "--numeric",
    "labels": "--class",
    "classes": "--classes",
    "as_spam": "--spam",
    "as_ham": "--ham",
    "unlabeled": "--unlabeled",
    "metric": "--metric",
    "calibrate": "--calibrate",
    "decide": "--decide",
    "positive": "--positive",
    "k": "-k",
    "cv": "--cv",
    "train": "--train",
    "online": "--online",
    "warmup": "--warmup",
    "spam_class": "--spam-class",
    "min_count": "--min-count",
    "unseen_since": "--unseen-since",
    "socket_path": "--socket",
    "metrics": "--metrics",
    "split_dir": "--split",
}


def flag(field: str) -> str:
    """The command-line flag of a training option's field name, or of
    another parameter the library names (PARAMETER_FLAGS)."""
    if field in TRAINING_FLAGS:
        return TRAINING_FLAGS[field]
    # a parameter missing from the table is a bug (tests/test_errors.py reads every ParameterError for one);
    # the error is still said, with the flag's likely spelling, never a traceback in its place
    return PARAMETER_FLAGS.get(field, "--" + field.replace("_", "-"))


def in_flag_terms(exc: NbcliError) -> NbcliError:
    """A library error as the command line says it: a ParameterError with
    each parameter named by its flag (TRAINING_FLAGS, PARAMETER_FLAGS), anything else as it
    is. The command line's error boundary (`main.NbcliGroup.main`) calls it."""
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


def cutoffs_given() -> bool:
    """Whether --spam-cutoff or --ham-cutoff was typed: then a model's
    decision threshold does not move the spam/unsure/ham cut-offs
    (`evaluate.decision.decided_cutoffs`)."""
    ctx = click.get_current_context()
    return is_given(ctx, "spam_cutoff") or is_given(ctx, "ham_cutoff")


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


# the training options a table model shares with text models
TABLE_SMOOTHING = {"alpha", "m_estimate", "estimate", "prior", "prior_alpha"}
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
    before any document is read (every check is `training_options.training_options`'s),
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


def table_rows(corpus, label_pairs, kw, diagnostics):
    """The rows of the tables CORPUS and --label CLASS=PATH, for a table
    model (train, eval --cv, tune with --features)."""
    import dataclasses

    from nbcli.text.sources import labeled_corpus, parse_label_pair

    opts = dataclasses.replace(read_opts(kw, diagnostics), rows=True)
    return labeled_corpus(corpus, [parse_label_pair(p) for p in label_pairs], opts)


def analysed_corpus(corpus, label_pairs, kw, diagnostics, analyse_corpus, workers):
    """(AnalyzerOptions, TrainOptions, the corpus read and analysed once)
    for commands that train their own models (eval --cv, tune).
    analyse_corpus is run.pipeline's, passed in by the command: a support
    module stays below the run package (the height budget of issue 26).
    workers: `pipeline_workers`."""
    from nbcli.text.analyzer import Analyzer
    from nbcli.text.sources import labeled_corpus, parse_label_pair

    pairs = [parse_label_pair(p) for p in label_pairs]
    analyzer_options, options = training_setup(kw)
    docs = labeled_corpus(corpus, pairs, read_opts(kw, diagnostics))
    with diagnostics.progress("reading", docs.total) as advance:
        analysed = analyse_corpus(
            docs, Analyzer(analyzer_options), lambda batch: advance(docs.progress(batch)), workers
        )
    return analyzer_options, options, analysed


def load_model(path: str, max_message_bytes: int | None = None):
    """The classifier in model file `path`, ready to classify, with the
    analysis cap given at classification time, if any (see
    `option_bundles.message_cap_option`)."""
    from nbcli.store import modelfile

    classifier = modelfile.load_view(path)
    classifier.check_ready(path)
    return classifier.with_message_cap(max_message_bytes)


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

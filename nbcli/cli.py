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

import click

from nbcli import __version__
from nbcli.errors import NbcliError
from nbcli.sources import DEFAULT_MAX_DOC_BYTES, INPUT_FORMATS

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _err(line: str) -> None:
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


class NbcliGroup(click.Group):
    """A click group whose errors are one line each, never a traceback."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        try:
            rv = super().main(args=args, prog_name=prog_name or "nbcli", complete_var=complete_var, standalone_mode=False, **extra)
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
        except BrokenPipeError:
            # The reader went away: stop quietly, like other Unix tools.
            try:
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            except OSError:
                pass
            sys.exit(141)
        except OSError as exc:
            _err(f"nbcli: error: {exc.strerror or exc}")
            sys.exit(1)
        except Exception as exc:  # a bug: still one line, unless debugging
            if os.environ.get("NBCLI_DEBUG"):
                raise
            _err(f"nbcli: internal error: {type(exc).__name__}: {exc} (please report it; NBCLI_DEBUG=1 shows the traceback)")
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


# -- option types and bundles ----------------------------------------------------


class ByteSize(click.ParamType):
    name = "SIZE"

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
        click.option("--text-field", metavar="NAME|N", help="Column or JSON field with the text [default: text; column 2 with --no-header]."),
        click.option("--label-field", metavar="NAME|N", help="Column or JSON field with the label [default: label; column 1 with --no-header]."),
        click.option("--id-field", metavar="NAME|N", help="Column or JSON field with the document id [default: id if present, else FILE:LINE]."),
        click.option("--no-header", is_flag=True, help="TSV/CSV files have no header row; fields are column numbers from 1."),
        click.option(
            "--max-doc-bytes",
            type=ByteSize(),
            default=DEFAULT_MAX_DOC_BYTES,
            show_default="16M",
            help="Read at most this much of each document (a warning says when a document is cut).",
        ),
    ]
)

quiet_option = click.option("-q", "--quiet", is_flag=True, help="No progress bars and no warnings on stderr.")
json_option = click.option("--json", "as_json", is_flag=True, help="JSON output for scripts.")


def _read_opts(kw, diagnostics):
    from nbcli.sources import ReadOptions

    return ReadOptions(
        input_format=kw["input_format"],
        text_field=kw["text_field"],
        label_field=kw["label_field"],
        id_field=kw["id_field"],
        header=not kw["no_header"],
        max_doc_bytes=kw["max_doc_bytes"],
        warn=diagnostics.warn,
    )


def _diagnostics(quiet):
    from nbcli.diagnostics import Diagnostics

    return Diagnostics(quiet=quiet)


def _write(line: str) -> None:
    sys.stdout.write(line + "\n")


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
      nbcli info mail.nb
    """


@cli.command()
@click.argument("corpus", nargs=-1)
@click.option("-o", "--output", required=True, metavar="MODEL", help="Model file to write (replaced atomically).")
@click.option("--label", "label_pairs", multiple=True, metavar="CLASS=PATH", help="Documents in PATH (a file or folder) have class CLASS. Repeatable.")
@read_options
@click.option("--token-pattern", metavar="REGEX", help="Tokens are re.findall(REGEX, text.lower()) [default: runs of 2+ word characters, (?u)\\b\\w\\w+\\b].")
@click.option("--ngrams", type=click.IntRange(1, 8), default=1, show_default=True, help="Also use word 2..N-grams as terms.")
@click.option("--stop-words", metavar="english|FILE", help="Drop these words: nbcli's English list, or a file with one word per line.")
@click.option("--min-df", type=DocFrequency(), default=1, show_default=True, help="Drop terms in fewer documents than this (a count, or a proportion if written with a point).")
@click.option("--max-df", type=DocFrequency(), default=1.0, show_default=True, help="Drop terms in more documents than this (a count, or a proportion such as 0.9).")
@click.option("--max-features", type=click.IntRange(1), metavar="K", help="Keep only the K most frequent terms.")
@click.option(
    "--alpha",
    type=float,
    default=1.0,
    show_default=True,
    help="Pseudo-count added to every term count of every class: theta_cj = (N_cj + alpha) / (N_c + alpha |V|). "
    "This is the posterior mean under a symmetric Dirichlet(alpha) prior (equivalently the MAP estimate under "
    "Dirichlet(alpha + 1)); 1 is Laplace smoothing.",
)
@click.option(
    "--prior",
    default="fit",
    show_default=True,
    metavar="fit|uniform|CLASS=W,...",
    help="Class prior: 'fit' (document frequencies of the classes), 'uniform', or weights such as 'spam=0.4,ham=0.6' (normalised).",
)
@quiet_option
def train(corpus, output, label_pairs, **kw):
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
    """
    from nbcli.model import check_alpha, parse_prior
    from nbcli.sources import labeled_corpus, parse_label_pair
    from nbcli.tokenize import AnalyzerOptions, load_stop_words

    diagnostics = _diagnostics(kw["quiet"])
    if not corpus and not label_pairs:
        raise click.UsageError("give a CORPUS or at least one --label CLASS=PATH")
    pairs = [parse_label_pair(p) for p in label_pairs]
    check_alpha(kw["alpha"])
    prior = parse_prior(kw["prior"])
    stop_words = load_stop_words(kw["stop_words"]) if kw["stop_words"] else ()
    analyzer_options = AnalyzerOptions(token_pattern=kw["token_pattern"], ngrams=kw["ngrams"], stop_words=stop_words)
    from nbcli.tokenize import Analyzer

    Analyzer(analyzer_options)  # check the options before reading anything
    docs = labeled_corpus(corpus, pairs, _read_opts(kw, diagnostics))

    from nbcli import modelfile
    from nbcli.training import TrainOptions, train as train_model

    options = TrainOptions(
        alpha=kw["alpha"],
        prior=prior,
        min_df=kw["min_df"],
        max_df=kw["max_df"],
        max_features=kw["max_features"],
        described={
            "alpha": kw["alpha"],
            "prior": kw["prior"],
            "token_pattern": kw["token_pattern"],
            "ngrams": kw["ngrams"],
            "stop_words": kw["stop_words"],
            "min_df": kw["min_df"],
            "max_df": kw["max_df"],
            "max_features": kw["max_features"],
        },
    )
    with diagnostics.progress("training", docs.total) as advance:
        classifier = train_model(docs, analyzer_options, options, progress=advance)
    modelfile.save(classifier, output)
    counts = ", ".join(f"{c} {int(n)}" for c, n in zip(classifier.classes, classifier.model.class_count))
    diagnostics.info(
        f"wrote {output}: {classifier.meta['n_documents']} documents ({counts}), {len(classifier.vocabulary)} terms"
    )
    diagnostics.finish()


@cli.command()
@click.argument("model")
@click.argument("inputs", nargs=-1, metavar="[INPUT]...")
@json_option
@read_options
@quiet_option
def predict(model, inputs, as_json, **kw):
    """Classify documents: one line per document on stdout.

    INPUT is a file (one document), a folder (every file below it), a
    .tsv/.csv/.jsonl table (one document per row), or - for stdin (one
    document, or a table with --input-format). Without INPUT, stdin is read.
    Empty documents are skipped with a warning.

    TSV output: id<TAB>label<TAB>probability of that label. With --json:
    {"id", "label", "probability", "probabilities": {class: p, ...}}.

    \b
    Example:
      nbcli predict mail.nb sample_corpora/mail/test/spam/0001.eml
      nbcli predict mail.nb --json - < message.eml
      nbcli predict topics.nb sample_corpora/topics/test.jsonl | cut -f2 | sort | uniq -c
    """
    from nbcli.output import prediction_json, prediction_tsv

    diagnostics = _diagnostics(kw["quiet"])
    if not inputs:
        if sys.stdin.isatty():
            raise click.UsageError("no INPUT given and stdin is a terminal; give files, folders, or - for stdin")
        inputs = ("-",)
    from nbcli import modelfile
    from nbcli.sources import Corpus, documents_in

    classifier = modelfile.load(model)
    opts = _read_opts(kw, diagnostics)
    docs = Corpus([documents_in(path, opts) for path in inputs])
    import numpy as np

    classes = classifier.classes
    written = 0

    def nonempty(stream):
        for doc in stream:
            if len(doc.data) == 0:
                diagnostics.warn(f"skipping {doc.id}: empty document")
                continue
            yield doc

    with diagnostics.progress("classifying", docs.total) as advance:
        for batch, log_proba in classifier.classify(nonempty(docs)):
            best = log_proba.argmax(axis=1)
            proba = np.exp(log_proba)
            lines = []
            for i, doc in enumerate(batch):
                label = classes[best[i]]
                if as_json:
                    lines.append(prediction_json(doc.id, label, dict(zip(classes, proba[i].tolist()))))
                else:
                    lines.append(prediction_tsv(doc.id, label, float(proba[i, best[i]])))
            sys.stdout.write("\n".join(lines) + "\n")
            sys.stdout.flush()
            written += len(batch)
            advance(len(batch))
    if written == 0:
        raise NbcliError(
            f"nothing to classify: {' '.join(inputs)} held no non-empty documents",
            hint="check the input paths",
        )
    diagnostics.finish()


@cli.command("eval")
@click.argument("model")
@click.argument("corpus", nargs=-1)
@click.option("--label", "label_pairs", multiple=True, metavar="CLASS=PATH", help="Documents in PATH have true class CLASS. Repeatable.")
@json_option
@read_options
@quiet_option
def eval_(model, corpus, label_pairs, as_json, **kw):
    """Evaluate a model on labelled documents.

    CORPUS is given as for 'nbcli train'. Prints accuracy, per-class
    precision, recall, F1 and support, macro and weighted averages, the
    confusion matrix and the log loss: tables for people, or --json.

    \b
    Example:
      nbcli eval mail.nb sample_corpora/mail/test
      nbcli eval topics.nb sample_corpora/topics/test.jsonl --json
    """
    diagnostics = _diagnostics(kw["quiet"])
    if not corpus and not label_pairs:
        raise click.UsageError("give a CORPUS or at least one --label CLASS=PATH")
    from nbcli import modelfile
    from nbcli.sources import labeled_corpus, parse_label_pair

    pairs = [parse_label_pair(p) for p in label_pairs]
    classifier = modelfile.load(model)
    docs = labeled_corpus(corpus, pairs, _read_opts(kw, diagnostics))
    with diagnostics.progress("evaluating", docs.total) as advance:
        report = classifier.evaluate(docs, progress=advance)
    if report["documents"] == 0:
        raise NbcliError("the evaluation corpus has no documents", hint="check the paths")
    if as_json:
        import json

        report = {"model": model, **report}
        _write(json.dumps(report, ensure_ascii=False))
    else:
        from nbcli.output import render_eval

        render_eval(report, sys.stdout, model)
    diagnostics.finish()


@cli.command()
@click.argument("model")
@click.option("--top", type=click.IntRange(0), default=10, show_default=True, help="How many indicative terms to list per class.")
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
        import json

        _write(json.dumps(description, ensure_ascii=False))
    else:
        from nbcli.output import render_info

        render_info(description, sys.stdout)


def main() -> None:
    cli.main(prog_name="nbcli")

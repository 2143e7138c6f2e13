"""`nbcli cluster`: group unlabelled documents (semi.py, em.py), or the rows
of a table (`_cluster_table`).

Registered on the `nbcli` group by cli/main.py; commands only.
"""

from __future__ import annotations

import click

from nbcli.cli.option_bundles import bundle, jobs_option, quiet_option, read_options, table_options, vocabulary_options
from nbcli.cli.options import TABLE_PARAMS, check_inputs, is_given, make_diagnostics, read_opts, table_setup
from nbcli.cli.param_types import FloatRange

VOCABULARY_PARAMS = ("token_pattern", "ngrams", "stop_words", "min_df", "max_df", "max_features")
# the options only documents use: refused with --features (a table's rows are clustered by their columns, with
# the table models' columns, not an event model, and read as rows, without a text field)
DOCUMENT_PARAMS = (*VOCABULARY_PARAMS, "kind", "text_field")


def _k(value: str):
    if value == "auto":
        return value
    try:
        k = int(value)
    except ValueError:
        k = 0
    if k < 2:
        raise click.BadParameter(f"{value!r} is not a number of clusters (2 or more) or auto")
    return k


SIZES_SHOWN = 10  # the summary line names at most this many clusters


def cluster_sizes(classes, counts) -> str:
    """ "cluster1 12, cluster2 8, ...": the first SIZES_SHOWN clusters' sizes,
    then how many more there are and how many of all are empty."""
    shown = ", ".join(f"{c} {n:.0f}" for c, n in zip(classes[:SIZES_SHOWN], counts[:SIZES_SHOWN]))
    more = len(classes) - SIZES_SHOWN
    if more <= 0:
        return shown
    empty = sum(1 for n in counts if round(float(n)) == 0)
    return f"{shown}, and {more} more; {empty} empty"


@click.command()
@click.argument("corpus", nargs=-1, required=True)
@click.option("-o", "--output", required=True, metavar="MODEL", help="Model file to write (replaced atomically).")
@click.option(
    "-k",
    "k",
    type=_k,
    required=True,
    metavar="K|auto",
    help="Clusters: a number (2 or more), or auto: for documents, the smallest k in 1..10 whose cross-validated "
    "likelihood is within one standard error of the highest (each k fitted on 4/5 of the documents, the other 1/5 "
    "scored under Laplace smoothing, five times; BIC picks k = 1 on text, the highest likelihood too many); for "
    "tables, the k with the lowest BIC. At most the number of distinct documents "
    "(identical ones go to one cluster), and refused when the memory it needs (about k x terms x 64 bytes) is "
    "more than this machine has available.",
)
@click.option(
    "--restarts",
    type=click.IntRange(1, 100),
    default=None,
    help="Fits from different starts (k-means++ seeds; random memberships for tables); the one of highest EM "
    "objective wins.  [default: 10; 5 for tables]",
)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of the random starts.")
@click.option(
    "--model",
    "kind",
    type=click.Choice(["multinomial", "bernoulli"]),
    default="multinomial",
    show_default=True,
    help="The clusters' event model (documents; a table's columns have their own models, see --numeric-model).",
)
@click.option(
    "--alpha",
    type=FloatRange(min=0, min_open=True),
    default=None,
    help="Pseudo-count of the clusters' term distributions.  [default: 0.5 multinomial, 0.01 bernoulli (1 for "
    "tables); smaller for bernoulli, whose clusters of few documents a larger one smooths away]",
)
@bundle(vocabulary_options(min_df=2, max_df=0.5, stop_words="english"))
@read_options
@table_options
@jobs_option
@quiet_option
def cluster(corpus, output, k, restarts, seed, kind, alpha, **kw):
    """Group unlabelled documents with a Naive Bayes mixture (EM).

    CORPUS is read as 'nbcli predict' reads its inputs (files, folders,
    mboxes, tables; labels are ignored). The terms are train's, with fewer
    kept by default: no English stop words, only terms in 2 documents to
    half of them. Each restart seeds k clusters by k-means++ on the
    documents' unit TF-IDF vectors, refines them by spherical k-means, then
    fits the mixture by EM with a tempered E step (each document's evidence
    counted as 4 tokens', so long documents do not commit at once). The fit
    of highest EM objective is kept; a cluster that loses all its documents
    is re-seeded with the document worst explained by its own cluster, so
    every cluster has documents. It is written as a model whose classes are
    the clusters cluster1..clusterK: 'nbcli predict' assigns documents to
    them, 'nbcli info' shows each cluster's size and top terms, and 'nbcli
    eval MODEL LABELLED --clusters' scores them against labels.
    With --features, CORPUS is a table and its rows are clustered with the
    table models' columns (see 'nbcli train --features'; categorical,
    gaussian or discretize, not kde) by EM with soft memberships, each
    cluster's counts the rows' expected counts; a cluster that no row
    prefers is dropped (the summary line counts the clusters written), and
    the options only documents use (--model, --text-field, the vocabulary
    options) are refused.

    \b
    Example:
      nbcli cluster sample_corpora/topics/train.jsonl -k 4 -o topics-clusters.nb
      nbcli cluster ~/Mail/inbox -k auto --restarts 3 -o inbox.nb
    """
    from nbcli.cli.paths import check_output
    from nbcli.run.semi import cluster_docs
    from nbcli.store import modelfile
    from nbcli.text.sources import Corpus, documents_in

    diagnostics = make_diagnostics(kw["quiet"])
    check_output(output, list(corpus))
    modelfile.check_writable(output)
    ctx = click.get_current_context()
    if any(is_given(ctx, name) for name in TABLE_PARAMS):
        given = [p for p in ctx.command.params if p.name in DOCUMENT_PARAMS and is_given(ctx, p.name or "")]
        if given:
            flag = max(given[0].opts, key=len)
            raise click.UsageError(f"{flag} is for documents; the rows of a table have columns")
        _cluster_table(corpus, output, k, restarts or 5, seed, {**kw, "alpha": alpha}, diagnostics)
        return
    opts = read_opts(kw, diagnostics)
    docs = Corpus([documents_in(path, opts) for path in corpus])
    vocabulary = {name: kw[name] for name in ("min_df", "max_df", "max_features")}
    restarts = restarts or 10
    model, fit, table = cluster_docs(docs, _analyzer_options(kw), kind, k, alpha, restarts, seed, **vocabulary)
    if table is not None:
        best = max(table, key=lambda row: row["heldout_log_likelihood"])
        for row in table:
            diagnostics.info(
                f"k = {row['k']}: held-out log-likelihood {row['heldout_log_likelihood']:.1f}"
                + (" (the highest)" if row is best else f" (standard error {row['standard_error']:.1f})")
            )
        diagnostics.info(
            f"k = {len(model.classes)}: the smallest k whose held-out log-likelihood is within one standard error of "
            f"the highest (k = {best['k']})"
        )
    diagnostics.info(
        f"EM: the most likely of {restarts} restart(s): {fit.iterations} iterations, objective "
        f"{fit.objective[0]:.6f} -> {fit.objective[-1]:.6f}"
    )
    modelfile.save(model, output)
    # each document in its most likely cluster, as info's "sizes" (the class table's documents: expected counts)
    sizes = cluster_sizes(model.classes, model.meta["clusters"]["sizes"])
    diagnostics.info(
        f"wrote {output}: {model.meta['n_documents']} documents in {len(model.classes)} clusters "
        f"(most likely in each: {sizes})"
    )
    diagnostics.finish()
    check_inputs()


def _analyzer_options(kw):
    """The documents' AnalyzerOptions from the vocabulary options (--stop-words none: keep every word)."""
    from nbcli.text.analyzer import AnalyzerOptions, load_stop_words

    stop = kw["stop_words"]
    options = AnalyzerOptions(
        token_pattern=kw["token_pattern"],
        ngrams=kw["ngrams"],
        stop_words=load_stop_words(stop) if stop and stop != "none" else (),
    )
    options.check()
    return options


def _cluster_table(corpus, output, k, restarts, seed, kw, diagnostics) -> None:
    """`cluster --features ...`: the rows of a table (table_training.cluster_rows)."""
    import dataclasses

    from nbcli.fit.table_training import cluster_rows
    from nbcli.store import modelfile
    from nbcli.text.sources import Corpus, documents_in

    columns, settings = table_setup(kw)
    opts = dataclasses.replace(read_opts(kw, diagnostics), rows=True)
    docs = Corpus([documents_in(path, opts) for path in corpus])
    model, table = cluster_rows(docs, columns, settings, k, restarts, seed)
    for row in table or []:
        diagnostics.info(f"k = {row['k']}: BIC {row['bic']:.1f}")
    fit = model.meta["clusters"]
    asked = min(table, key=lambda row: row["bic"])["k"] if table else k
    if fit["k"] < asked:
        diagnostics.info(f"k = {asked}: {asked - fit['k']} cluster(s) that no row preferred were dropped")
    diagnostics.info(
        f"EM: the most likely of {restarts} restart(s): {fit['iterations']} iterations, "
        f"objective {fit['objective']:.6f}"
    )
    modelfile.save(model, output)
    sizes = cluster_sizes(model.classes, model.model.class_count)
    diagnostics.info(f"wrote {output}: {model.meta['n_documents']} rows in {len(model.classes)} clusters ({sizes})")
    diagnostics.finish()
    check_inputs()

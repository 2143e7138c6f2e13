"""`nbcli cluster`: group unlabelled documents (semi.py, em.py), or the rows
of a table (`_cluster_table`).

Registered on the `nbcli` group by cli/main.py; commands only.
"""

from __future__ import annotations

import click

from nbcli.cli.option_bundles import jobs_option, quiet_option, read_options, table_options
from nbcli.cli.options import TABLE_PARAMS, check_inputs, is_given, make_diagnostics, read_opts, table_setup


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
    help="Clusters: a number (2 or more), or auto: the k in 1..10 with the lowest BIC. At most the number of "
    "distinct documents (identical ones go to one cluster), and refused when the memory it needs (about k x "
    "terms x 56 bytes) is more than this machine has available.",
)
@click.option(
    "--restarts",
    type=click.IntRange(1, 100),
    default=5,
    show_default=True,
    help="EM runs from random starts; the most likely wins.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random starts.")
@click.option(
    "--model",
    "kind",
    type=click.Choice(["multinomial", "bernoulli"]),
    default="multinomial",
    show_default=True,
    help="The clusters' event model.",
)
@click.option(
    "--alpha",
    type=click.FloatRange(min=0, min_open=True),
    default=1.0,
    show_default=True,
    help="Pseudo-count of the clusters' term distributions.",
)
@read_options
@table_options
@jobs_option
@quiet_option
def cluster(corpus, output, k, restarts, seed, kind, alpha, **kw):
    """Group unlabelled documents with a Naive Bayes mixture (EM).

    CORPUS is read as 'nbcli predict' reads its inputs (files, folders,
    mboxes, tables; labels are ignored). Each restart runs EM from random
    memberships; the fit with the highest likelihood is kept, and written
    as a model whose classes are the clusters cluster1..clusterK: 'nbcli
    predict' assigns documents to them and 'nbcli info' shows each
    cluster's top terms. --k auto tries 1 to 10 clusters and keeps the one
    with the lowest BIC (-2 log-likelihood + parameters x ln documents).
    With --features, CORPUS is a table and its rows are clustered with the
    table models' columns (see 'nbcli train --features'; categorical,
    gaussian or discretize, not kde) by EM with soft memberships, each
    cluster's counts the rows' expected counts.

    \b
    Example:
      nbcli cluster sample_corpora/topics/train.jsonl -k 4 -o topics-clusters.nb
      nbcli cluster ~/Mail/inbox -k auto --restarts 3 -o inbox.nb
    """
    from nbcli.cli.paths import check_output
    from nbcli.run.semi import cluster_docs
    from nbcli.store import modelfile
    from nbcli.text.analyzer import AnalyzerOptions
    from nbcli.text.sources import Corpus, documents_in

    diagnostics = make_diagnostics(kw["quiet"])
    check_output(output, list(corpus))
    modelfile.check_writable(output)
    ctx = click.get_current_context()
    if any(is_given(ctx, name) for name in TABLE_PARAMS):
        _cluster_table(corpus, output, k, restarts, seed, kw, diagnostics)
        return
    opts = read_opts(kw, diagnostics)
    docs = Corpus([documents_in(path, opts) for path in corpus])
    model, fit, table = cluster_docs(docs, AnalyzerOptions(), kind, k, alpha, restarts, seed)
    if table is not None:
        for row in table:
            diagnostics.info(f"k = {row['k']}: BIC {row['bic']:.1f}")
    diagnostics.info(
        f"EM: the most likely of {restarts} restart(s): {fit.iterations} iterations, objective "
        f"{fit.objective[0]:.6f} -> {fit.objective[-1]:.6f}"
    )
    modelfile.save(model, output)
    sizes = cluster_sizes(model.classes, model.model.class_count)
    diagnostics.info(
        f"wrote {output}: {model.meta['n_documents']} documents in {len(model.classes)} clusters ({sizes})"
    )
    diagnostics.finish()
    check_inputs()


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
    diagnostics.info(
        f"EM: the most likely of {restarts} restart(s): {fit['iterations']} iterations, "
        f"objective {fit['objective']:.6f}"
    )
    modelfile.save(model, output)
    sizes = cluster_sizes(model.classes, model.model.class_count)
    diagnostics.info(f"wrote {output}: {model.meta['n_documents']} rows in {len(model.classes)} clusters ({sizes})")
    diagnostics.finish()
    check_inputs()

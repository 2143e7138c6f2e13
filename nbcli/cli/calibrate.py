"""`nbcli calibrate`: fit a model's calibration map on held-out labelled
documents (nb.calibrators), leaving out those the model's record shows it
was trained on. Registered on the `nbcli` group by cli/main.py.
"""

from __future__ import annotations

import os

import click

from nbcli.cli.option_bundles import jobs_option, json_option, quiet_option, read_options, true_label_option
from nbcli.cli.options import check_inputs, make_diagnostics, model_read_opts
from nbcli.cli.stdio import write_json
from nbcli.errors import NbcliError


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
    (fitted on its mistakes) is refused. A model trained with --decide f1 or
    balanced gets its decision threshold chosen again on the same documents
    (after the new map; on the raw posteriors with --method none), for the
    objective and positive class it has.

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
    from nbcli.store.modelfile import file_stamp
    from nbcli.text.sources import labeled_corpus, parse_label_pair

    diagnostics = make_diagnostics(kw["quiet"])
    target = output or model
    pairs = [parse_label_pair(p) for p in label_pairs]
    if not heldout and not pairs:
        raise click.UsageError("give the HELDOUT documents: a labelled corpus, or --label CLASS=PATH")
    check_output(target, [*heldout, *(path for _, path in pairs)], option="-o" if output else "MODEL")
    if not os.path.exists(model):
        modelfile.load(model)  # its one-line error: no such model file
    stamp = file_stamp(model)  # before reading: a file replaced meanwhile then differs
    current = modelfile.load(model)
    current.check_ready(model)
    if method is None:
        from nbcli.defaults import default_calibration

        method = default_calibration(len(current.classes))
    scores = None
    decision = current.meta.get("decision")
    if method != "none" or decision:
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
        if file_stamp(model) != stamp:
            raise NbcliError(
                f"{model} changed while the held-out documents were scored; nothing was written",
                hint="run the command again",
            )
        updated = current.uncalibrated()
        meta = {k: v for k, v in current.meta.items() if k != "calibration"}
        result = {"model": target, "method": None}
        if scores is not None and method != "none":
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
        if decision:
            _decide_again(updated, decision, scores, truth, f"held-out: {' '.join([*heldout, *label_pairs])}")
            result["decision"] = updated.meta["decision"]
        modelfile.save(updated, target)
    if result["method"] is None:
        diagnostics.info(f"wrote {target}: not calibrated (raw event-model posteriors)")
    else:
        b, a = result["before"], result["after"]
        diagnostics.info(
            f"wrote {target}: {result['map']}, fitted on {result['documents']} held-out documents; on them, "
            f"log loss {b['log_loss']:.4g} -> {a['log_loss']:.4g}, ECE {b['ece']:.4g} -> {a['ece']:.4g}"
        )
    if decision:
        from nbcli.cli.output import decision_text
        from nbcli.store.describe import describe_decision

        diagnostics.info(f"decision: {decision_text(describe_decision(updated))}")
    if as_json:
        write_json(result)
    diagnostics.finish()
    check_inputs()


def _decide_again(updated, decision: dict, scores, truth, source: str) -> None:
    """Choose the model's decision threshold again, for its objective and
    positive class, on the held-out documents' raw scores mapped by its new
    calibration (if any)."""
    from nbcli.fit.deciding import decision_meta

    calibrated = scores if updated.calibration is None else updated.calibration.apply(scores)
    classes = updated.classes
    updated.meta["decision"] = decision_meta(
        decision["objective"],
        classes,
        classes.index(decision["positive"]),
        calibrated,
        truth,
        source,
        int(updated.model.class_count.sum()),
        class_documents=updated.model.class_count,
    )


def _marking_learned(classifier, docs, learned: list):
    """The documents, as they pass, appending to `learned` whether the
    classifier's record holds each (its content digest, in any class). An
    extra analysis of each document, only for a model with a record."""
    from nbcli.text.identity import digests
    from nbcli.text.sources import batches

    record = getattr(classifier, "record", None)  # a table model keeps none
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

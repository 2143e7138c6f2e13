"""nbcli's public Python API: load a model, classify documents, train, save.

    import nbcli

    model = nbcli.train(texts, labels, alpha=0.5)
    model.save("topics.nb")
    for p in nbcli.load("topics.nb").classify(["a new supernova"]):
        print(p.label, p.probabilities)

These names (`load`, `train`, `Model`, `Prediction`, and `NbcliError` for
errors) are the whole public API; everything else in the package is private
and may change. It is built on the same functions as the command line, so a
model trained here is the model `nbcli train` writes for the same documents
and options, and the two read each other's model files.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from nbcli.errors import NbcliError

_KINDS = ("auto", "mail", "text")


@dataclass(frozen=True)
class Prediction:
    """The classification of one document: `label`, the most probable class;
    `probabilities` and `log_probabilities`, P(class | document) and its
    natural log for every class (what `nbcli predict --json` writes)."""

    label: str
    probabilities: dict[str, float]
    log_probabilities: dict[str, float]


class Model:
    """A trained classifier (as stored in a model file). Get one from `load`
    or `train`."""

    def __init__(self, classifier):
        self._classifier = classifier

    @property
    def classes(self) -> list[str]:
        """The class names, sorted."""
        return list(self._classifier.classes)

    def classify(self, docs: Iterable[str | bytes], kind: str = "auto") -> list[Prediction]:
        """One Prediction per document, in order. docs: an iterable of str or
        bytes, each a whole document. kind: 'auto' reads a document that
        looks like an email message (headers, MIME parts) as mail, anything
        else as text; 'mail' always parses it as a message; 'text' never
        does. Bytes that are not mail are decoded as UTF-8, or as
        Windows-1252 where they are not valid UTF-8. An empty document gets
        the class prior (`nbcli predict` skips empty documents instead).
        The label is the most probable class, or for a two-class model
        trained with decide='f1' or 'balanced' the class its stored
        threshold decides (the probabilities are the same either way)."""
        import numpy as np

        from nbcli.evaluate.decision import decided
        from nbcli.text.sources import Document, batches

        docs = _documents(docs, "docs")
        if kind not in _KINDS:
            raise ValueError(f"kind must be one of {', '.join(_KINDS)}, not {kind!r}")
        classes = self.classes
        out: list[Prediction] = []
        for batch in batches(Document(str(i), None, data, kind) for i, data in enumerate(docs)):
            log_proba = self._classifier.log_proba([d.data for d in batch], [d.kind for d in batch])
            best = decided(log_proba, self._classifier.decision_rule())
            proba = np.exp(log_proba)
            for i in range(len(batch)):
                out.append(
                    Prediction(
                        classes[best[i]],
                        dict(zip(classes, proba[i].tolist())),
                        dict(zip(classes, log_proba[i].tolist())),
                    )
                )
        return out

    def save(self, path: str) -> None:
        """Write the model to `path` atomically (a new file renamed over the
        old one), as `nbcli train -o PATH` does; the nbcli commands read it."""
        from nbcli.store import modelfile

        modelfile.save(self._classifier, str(path))

    def __repr__(self) -> str:
        return f"<nbcli.Model {self._classifier.model.kind}: {', '.join(self.classes)}>"


def load(path: str) -> Model:
    """The model in a file written by `nbcli train` or `Model.save`. Raises
    NbcliError (a ModelFileError) if the file is missing, unreadable,
    corrupt or not an nbcli model."""
    from nbcli.store import modelfile

    return Model(modelfile.load(str(path)))


def train(documents: Iterable[str | bytes], labels: Iterable[str], **options) -> Model:
    """A model trained on documents (str or bytes; mail is recognised as in
    `Model.classify` with kind 'auto') and their class labels, one each.

    options: those of `nbcli train`, named as in Python with these
    differences: `kind` for --model, `unknown` for --unknown-terms, and
    mail=False for --no-mail. Values are as on the command line (e.g.
    prior='spam=0.4,ham=0.6', m_estimate='8,0.625', stop_words='english' or
    a file name, max_message_bytes in bytes), calibrate='platt',
    'temperature', 'isotonic' or 'none', and decide='accuracy', 'f1' or
    'balanced' with positive=CLASS (a two-class model's decision threshold,
    which `Model.classify` then decides by: see `nbcli train --help`). Left out, an option has the
    command's default, including the defaults for a corpus of mostly mail
    and the calibration.
    Bad options and corpora raise NbcliError with the message the command
    prints after 'nbcli: error: ', but naming the options as here (the
    command names their flags: errors.ParameterError)."""
    from nbcli.fit.training import calibration_choice
    from nbcli.fit.training_options import training_options
    from nbcli.run.pipeline import train as train_classifier
    from nbcli.text.sources import Document

    calibrate = options.pop("calibrate", None)
    decide, positive = options.pop("decide", "accuracy"), options.pop("positive", None)
    analyzer_options, train_options = training_options(**options)
    method, strict, _ = calibration_choice(calibrate, train_options)
    documents = _documents(documents, "documents")
    labels = list(labels) if not isinstance(labels, (str, bytes)) else None
    if labels is None:
        raise TypeError("labels must be an iterable of class names, one per document")
    for i, label in enumerate(labels):
        if not isinstance(label, str):
            raise TypeError(f"labels[{i}] is {type(label).__name__}, not a class name (str)")
    if len(labels) != len(documents):
        raise NbcliError(f"{len(documents)} documents but {len(labels)} labels", hint="give one label per document")
    docs = [Document(str(i), label, data) for i, (data, label) in enumerate(zip(documents, labels))]
    if decide != "accuracy" or positive is not None:
        from nbcli.fit.deciding import check_decide

        check_decide(decide, sorted(set(labels)), positive)
    return Model(
        train_classifier(
            docs, analyzer_options, train_options, calibrate=method, strict=strict, decide=decide, positive=positive
        )
    )


def _documents(docs, name: str) -> list:
    """docs as a list of str or bytes; a lone str is refused, since
    iterating it would classify its characters."""
    if isinstance(docs, (str, bytes)):
        raise TypeError(f"{name} must be an iterable of documents (str or bytes), not a single document")
    docs = list(docs)
    for i, doc in enumerate(docs):
        if not isinstance(doc, (str, bytes)):
            raise TypeError(f"{name}[{i}] is {type(doc).__name__}, not str or bytes")
    return docs

"""A model from a dump's text and back: the dump's two model-side steps
(`dump_lines` takes a model's counts, `load_lines` builds a model and
checks it as a model file's, `modelfile.from_payload`). The text itself is
`store.dump`, below it; this module sits above `modelfile`, whose checks
it reuses, and only `nbcli dump` and `nbcli load` import it.
"""

from __future__ import annotations

from collections.abc import Iterator

from nbcli.errors import ModelFileError, NbcliError
from nbcli.store.modelfile import calibration_of, from_payload, settings_of
from nbcli.store.payload import to_payload


def dump_lines(classifier) -> Iterator[str]:
    """The dump of a Classifier (`nbcli dump`), line by line (without
    newlines); see `dump`."""
    from nbcli.nb.counts import Counts
    from nbcli.store import dump

    dump.check_dumpable(classifier)
    yield from dump.text_lines(classifier, Counts.of(classifier))


def load_lines(lines, name: str = "dump"):
    """The Classifier of a dump's lines (an iterable of str); NbcliError
    naming the line for anything that is not a dump nbcli wrote."""
    from nbcli.nb.counts import Counts
    from nbcli.nb.record import Record
    from nbcli.store import dump

    dumped = dump.parse(lines, name)
    counts = Counts(*dumped.counts, Record.build(*dumped.record), int(dumped.header.get("mail_documents", 0)))
    classifier = _dumped_classifier(counts, dumped.header, name)
    if dumped.header.get("calibration") is not None:
        classifier.calibration = calibration_of(
            {"calibration": dumped.header["calibration"]}, len(counts.classes), name
        )
    # the model file's own invariant checks, on exactly what would be written
    return from_payload(to_payload(classifier), name)


def _dumped_classifier(counts, header: dict, name: str):
    """The Classifier of a dump's counts and header (`load_lines`)."""
    from nbcli.nb.classifier import classifier_of
    from nbcli.text.analyzer import AnalyzerOptions

    spec, meta = header.get("model"), header.get("meta")
    if not isinstance(spec, dict) or not isinstance(meta, dict) or not isinstance(header.get("analyzer"), dict):
        raise NbcliError(f"{name}, line 1: bad model, analyzer or meta", hint="give the text 'nbcli dump' wrote")
    try:
        settings = settings_of(spec, counts.classes)
        analyzer = AnalyzerOptions.from_dict(header["analyzer"])
        return classifier_of(counts, settings.pop("kind"), settings, bool(spec.get("idf")), analyzer, meta)
    except ModelFileError as exc:
        raise NbcliError(f"{name}: {exc}") from None
    except (TypeError, ValueError, KeyError) as exc:
        raise NbcliError(f"{name}, line 1: bad settings ({exc})", hint="give the text 'nbcli dump' wrote") from None

"""Default settings shared by the CLI and the library.

Kept free of imports so that `nbcli --help` can read them without loading
numpy or the email package.
"""

# The model file's format version, for `nbcli --version`, which must not
# import numpy to learn it. The number belongs to store/codec.py's
# FORMAT_VERSION (its history is told there); codec cannot import it from
# here, for it is the bottom of the longest import chain (nine modules,
# tests/test_imports.py), so it is written twice and
# tests/cli/test_cli_main.py::test_version fails when the two differ.
MODEL_FORMAT_VERSION = 3

DEFAULT_MAX_DOC_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_MESSAGE_BYTES = 512 * 1024
# The largest analysis cap nbcli trains with or loads (see tokenize.py).
MAX_MESSAGE_BYTES_CAP = 64 << 20
# The largest --max-doc-bytes: analysing one text document costs about 15
# times its size (peak RSS of `train -j1` on a one-line document: 16M
# 0.3 GB, 64M 1.0 GB; 128M took 1.5-1.9 GB and 1G was killed past 8 GB).
MAX_DOC_BYTES_CAP = 64 << 20
# Filter verdicts (see filtering.py), on calibrated probabilities: on five
# seeded SpamAssassin splits (`make bench-calibration`) the default model
# leaves 4.4% of the messages unsure here, is right on 99.95% of the rest
# and calls 0.05% of the ham spam; at 0.05/0.95 3.3% unsure but 0.12% of
# the ham spam, at 0.01/0.99 8.9% unsure. The band is lopsided on purpose:
# a ham called spam costs more than a spam left in the inbox.
DEFAULT_SPAM_CUTOFF = 0.98
DEFAULT_HAM_CUTOFF = 0.05
# `eval --online` scores with the raw posteriors of models being learned
# (no calibration), so its unsure band is the raw one, unless given.
ONLINE_SPAM_CUTOFF = 0.99
ONLINE_HAM_CUTOFF = 0.01

TABLE_FORMATS = ("tsv", "csv", "jsonl")
MAIL_FORMATS = ("eml", "mbox", "maildir")
INPUT_FORMATS = ("auto", "text") + TABLE_FORMATS + MAIL_FORMATS
# `train --calibrate`: the map new models get (see calibrators.py and
# docs/guide/calibration.md, for the measurements behind the choice).
# Two classes: platt (the lowest log loss on the SpamAssassin splits, and its
# intercept corrects the mail model's uniform prior); several: temperature
# (one number that never changes the predicted class, where platt's
# one-against-the-rest maps do; as good or better on the topic corpora).
DEFAULT_CALIBRATION = "platt"
DEFAULT_MULTICLASS_CALIBRATION = "temperature"


# The default calibration (not one asked for) needs this many held-out
# documents of each class: a map fitted on a dozen scores moves the
# decisions more than it corrects them (PlayTennis: 14 rows).
MIN_CALIBRATION_PER_CLASS = 20


def default_calibration(n_classes: int) -> str:
    """The calibration map a model of n_classes classes gets by default."""
    return DEFAULT_CALIBRATION if n_classes == 2 else DEFAULT_MULTICLASS_CALIBRATION

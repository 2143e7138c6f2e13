"""Default settings shared by the CLI and the library.

Kept free of imports so that `nbcli --help` can read them without loading
numpy or the email package.
"""

DEFAULT_MAX_DOC_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_MESSAGE_BYTES = 512 * 1024
# The largest analysis cap nbcli trains with or loads (see tokenize.py).
MAX_MESSAGE_BYTES_CAP = 64 << 20
# Filter verdicts (see filtering.py); cross-validation on the SpamAssassin
# training split put 0.15% of messages in this unsure band.
DEFAULT_SPAM_CUTOFF = 0.99
DEFAULT_HAM_CUTOFF = 0.01

TABLE_FORMATS = ("tsv", "csv", "jsonl")
MAIL_FORMATS = ("eml", "mbox", "maildir")
INPUT_FORMATS = ("auto", "text") + TABLE_FORMATS + MAIL_FORMATS

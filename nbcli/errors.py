"""The exceptions users can see.

Library code raises `NbcliError` with a one-line message saying what is
wrong and, where there is one, a hint saying how to fix it. The CLI prints
`nbcli: error: MESSAGE; HINT` on stderr and exits with `exit_code`.
"""

from __future__ import annotations


class NbcliError(Exception):
    """A user-facing error: bad input, bad options, bad model file."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}; {self.hint}" if self.hint else self.message


class ModelFileError(NbcliError):
    """A model file that is missing, unreadable, corrupt, foreign or too new."""


def listed(names, most: int = 10) -> str:
    """Names for a one-line message: 'a, b, c', or the first `most` of
    them and '… (and N more)', so a long list says it was cut."""
    names = [str(n) for n in names]
    text = ", ".join(names[:most])
    return f"{text}, … (and {len(names) - most} more)" if len(names) > most else text

"""The exceptions users can see.

Library code raises `NbcliError` with a one-line message saying what is
wrong and, where there is one, a hint saying how to fix it. The CLI prints
`nbcli: error: MESSAGE; HINT` on stderr and exits with `exit_code`.

A bad value of a parameter (alpha, prior, estimate, tf_log, ...) is a
`ParameterError`: its text names the Python parameter ("alpha must be a
positive number, not 0.0"), since a library caller never typed a flag. The
command line's error boundary renders it again with each parameter's flag
from one table (`options.TRAINING_FLAGS`, via `ParameterError.named`):
"--alpha must be a positive number, not 0.0".
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


class _Name:
    """A parameter as a message names it: `{kind}` is the parameter,
    `{kind:complement}` the parameter with a value. name_of(parameter) is
    its name (None: the Python one, e.g. kind='complement')."""

    def __init__(self, parameter: str, name_of):
        self.parameter = parameter
        self.name_of = name_of

    def __format__(self, value: str) -> str:
        if self.name_of is None:
            return f"{self.parameter}={value!r}" if value else self.parameter
        name = self.name_of(self.parameter)
        return f"{name} {value}" if value else name


class _Fields(dict):
    def __init__(self, values: dict, name_of):
        super().__init__(values)
        self.name_of = name_of

    def __missing__(self, key: str) -> _Name:
        return _Name(key, self.name_of)


class ParameterError(NbcliError):
    """A bad value of one parameter (`parameter`, its Python name).

    message and hint are `str.format` templates: a field that is not in
    `values` is a parameter's name ({alpha}; {kind:complement} for the
    parameter with a value), the others are the values (user input is
    passed as a value, never written into the template). The text names
    the Python parameters; `named(name_of)` renders it with other names
    (the command line's flags)."""

    def __init__(self, parameter: str, message: str, hint: str | None = None, **values):
        self.parameter = parameter
        self.template = (message, hint)
        self.values = values
        super().__init__(*self._render(None))

    def __reduce__(self):
        # Exception's own pickling calls cls(*args), which this class's
        # signature refuses: rebuild a bare instance and restore its state,
        # so an error met in a worker process reaches the CLI intact.
        return (_bare, (type(self), self.args), self.__dict__)

    def _render(self, name_of) -> tuple[str, str | None]:
        fields = _Fields(self.values, name_of)
        message, hint = self.template
        return message.format_map(fields), None if hint is None else hint.format_map(fields)

    def named(self, name_of) -> NbcliError:
        """The same error, each parameter called name_of(parameter); a prefix
        added to `message` since (e.g. the worker that met it) is kept."""
        original, _ = self._render(None)
        prefix = self.message[: -len(original)] if self.message.endswith(original) else ""
        message, hint = self._render(name_of)
        error = NbcliError(prefix + message, hint)
        error.exit_code = self.exit_code
        return error


class ModelFileError(NbcliError):
    """A model file that is missing, unreadable, corrupt, foreign or too new."""


def listed(names, most: int = 10) -> str:
    """Names for a one-line message: 'a, b, c', or the first `most` of
    them and '… (and N more)', so a long list says it was cut."""
    names = [str(n) for n in names]
    text = ", ".join(names[:most])
    return f"{text}, … (and {len(names) - most} more)" if len(names) > most else text


def _bare(cls, args):
    error = cls.__new__(cls)
    error.args = args
    return error

"""nbcli: a command-line Naive Bayes text and spam classifier.

This module stays import-free on purpose: `nbcli --help` and `--version`
must not pay for numpy. The public Python API (`load`, `train`, `Model`,
`Prediction`, `NbcliError`; see `nbcli.api`) is imported on first use.
"""

__version__ = "0.1.0"

__all__ = ["Model", "NbcliError", "Prediction", "load", "train"]


def __getattr__(name):
    if name == "NbcliError":
        from nbcli.errors import NbcliError

        return NbcliError
    if name in __all__:
        from nbcli import api

        return getattr(api, name)
    raise AttributeError(f"module 'nbcli' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *__all__])

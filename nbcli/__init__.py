"""nbcli: a command-line Naive Bayes text and spam classifier.

This module stays import-free on purpose: `nbcli --help` and `--version`
must not pay for numpy.
"""

__version__ = "0.1.0"

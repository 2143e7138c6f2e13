"""nbcli.defaults: the settings the CLI and the library share, readable
without numpy (so `nbcli --help` can show them) and consistent with each
other."""

from __future__ import annotations

import subprocess
import sys

from nbcli import defaults


def test_reading_the_defaults_loads_nothing_heavy():
    code = "import sys, nbcli.defaults; print(sorted(m for m in ('numpy', 'email', 'click') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_unsure_bands_are_bands():
    assert 0 < defaults.DEFAULT_HAM_CUTOFF < defaults.DEFAULT_SPAM_CUTOFF < 1
    assert 0 < defaults.ONLINE_HAM_CUTOFF < defaults.ONLINE_SPAM_CUTOFF < 1


def test_the_size_caps_hold_the_defaults():
    assert defaults.DEFAULT_MAX_MESSAGE_BYTES <= defaults.MAX_MESSAGE_BYTES_CAP
    assert defaults.DEFAULT_MAX_DOC_BYTES <= defaults.MAX_DOC_BYTES_CAP


def test_input_formats_are_auto_text_tables_and_mail():
    assert defaults.INPUT_FORMATS[:2] == ("auto", "text")
    assert set(defaults.INPUT_FORMATS[2:]) == set(defaults.TABLE_FORMATS) | set(defaults.MAIL_FORMATS)


def test_two_classes_get_platt_and_more_get_temperature():
    assert defaults.default_calibration(2) == "platt"
    assert defaults.default_calibration(5) == "temperature"

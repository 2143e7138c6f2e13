"""`spam/settings.py`: `nbcli serve`'s settings default to what its --help
says and what spamc expects."""

from __future__ import annotations

from nbcli.defaults import DEFAULT_HAM_CUTOFF, DEFAULT_SPAM_CUTOFF
from nbcli.spam import settings

from conftest import run


def test_the_defaults_are_the_ones_serve_help_states():
    s = settings.Settings("m.nb", None, None, [], 1)
    assert s.max_size == 500 * 1024 == settings.DEFAULT_MAX_SIZE  # spamc's own default limit
    assert settings.SPAMD_PORT == 783 and settings.BODY_MARGIN == 64 << 10
    assert (s.spam_cutoff, s.ham_cutoff, s.spam_class) == (DEFAULT_SPAM_CUTOFF, DEFAULT_HAM_CUTOFF, "spam")
    assert (s.allow_tell, s.models_dir, s.private_socket_folder) == (False, None, False)
    text = " ".join(run(["serve", "--help"]).stdout.split())
    assert "--max-size + 64 KB" in text and "[default: 30.0;" in text and s.timeout == 30.0

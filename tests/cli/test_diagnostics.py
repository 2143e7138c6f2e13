"""What nbcli says on stderr (cli/diagnostics.py): warnings capped at
MAX_WARNINGS, --quiet, and EM's per-iteration log."""

import io

from nbcli.cli.diagnostics import Diagnostics, em_log


def test_diagnostics_limits_warnings():
    stream = io.StringIO()
    d = Diagnostics(stream=stream)
    for i in range(25):
        d.warn(f"w{i}")
    d.finish()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 21 and lines[-1] == "nbcli: warning: 5 more warning(s) not shown"
    assert not d.show_progress
    quiet = Diagnostics(quiet=True, stream=io.StringIO())
    quiet.warn("x")
    assert quiet.stream.getvalue() == ""


def test_em_log_says_each_iteration_with_its_objective():
    stream = io.StringIO()
    log = em_log(Diagnostics(stream=stream), "EM")
    log(1, -1234.5)
    log(2, -1200.0000004)
    assert stream.getvalue().splitlines() == [
        "nbcli: EM: iteration 1, objective -1234.500000",
        "nbcli: EM: iteration 2, objective -1200.000000",
    ]

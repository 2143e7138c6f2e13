"""`nbcli serve` as a command (cli/serve.py): the option checks made before
any socket is opened or model read, each a one-line usage error. (The
daemon itself: tests/spam/test_serve*.py.)"""

import pytest

from conftest import one_line_error, run


@pytest.mark.parametrize(
    "args, said",
    [
        (["--listen", "::1"], "--listen goes with --port or --tcp"),
        (["--port", "0", "--listen", " "], "an empty address would mean every interface; give one, e.g. 0.0.0.0"),
        (["--tcp", "--port", "7830"], "give --tcp (port 783) or --port N, not both"),
        (["--ham-cutoff", "0.9", "--spam-cutoff", "0.5"], "--ham-cutoff 0.9 is above --spam-cutoff 0.5"),
        (["--max-size", "lots"], "'lots' is not a size such as 512K, 16M or 1G"),
        (["--port", "70000"], "70000 is not in the range 0<=x<=65535"),
    ],
)
def test_options_that_do_not_go_together_are_usage_errors(tmp_path, args, said):
    line = one_line_error(run(["serve", tmp_path / "never-read.nb", *args]), code=2)
    assert said in line

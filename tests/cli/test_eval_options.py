"""cli/eval_options.py: eval's own options, in the order `eval --help`
lists them, and their types."""

from __future__ import annotations

import re

from conftest import run


def test_eval_help_lists_the_mode_options_then_the_shared_ones_then_the_limits():
    result = run(["eval", "--help"])
    assert result.exit_code == 0
    options = result.stdout.split("\nOptions:\n", 1)[1]
    listed = re.findall(r"^  (--[a-z-]+)", options, flags=re.M)
    modes = ["--predictions", "--truth", "--cv", "--online", "--order", "--train", "--warmup", "--clusters"]
    assert [o for o in listed if o in modes] == modes
    assert listed.index("--clusters") < listed.index("--seed") < listed.index("--fail-under")
    assert listed.index("--fail-under") < listed.index("--fail-over") < listed.index("--plot") < listed.index("--json")


def test_a_limit_without_a_value_is_a_usage_error():
    result = run(["eval", "--fail-under", "accuracy", "m.nb", "corpus"])
    assert result.exit_code == 2 and "--fail-under" in result.stderr and "METRIC=V" in result.stderr

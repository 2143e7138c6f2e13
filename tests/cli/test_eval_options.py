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


def test_every_metric_is_named_in_eval_help_and_tune_refuses_what_it_cannot_cross_validate():
    """eval --help listed 14 of the 18 metrics --fail-under takes; tune took
    brier and cross-validated a whole fold before saying it could not."""
    from nbcli.evaluate.report import METRICS

    from conftest import SAMPLES, one_line_error, run

    shown = " ".join(run(["eval", "--help"]).stdout.split())
    assert all(name in shown for name in METRICS), [m for m in METRICS if m not in shown]
    for metric in ("brier", "ece", "target_unsure_accuracy"):
        line = one_line_error(run(["tune", SAMPLES / "mail" / "train", "--metric", metric]), 2)
        assert f"'{metric}' is eval's (--calibration, --target-unsure), not cross-validated" in line
        assert "brier" not in line.split("use one of")[1]


def test_online_refuses_what_its_report_has_no_place_for():
    """--fail-under with --online was ignored (exit 0 whatever the run
    measured), as were --calibration and the --target-* reports."""
    from conftest import SAMPLES, one_line_error

    corpus = SAMPLES / "mail" / "train"
    for extra in (
        ["--fail-under", "accuracy=0.99"],
        ["--fail-over", "log_loss=0"],
        ["--calibration"],
        ["--target-fpr", "0.001"],
        ["--target-unsure", "0.1"],
    ):
        line = one_line_error(run(["eval", "--online", corpus, *extra]), 2)
        assert f"--online reports the TREC measures only; it does not go with {extra[0]}" in line

"""The accuracy benchmark reports the spread over several seeded splits, and
the README's headline quotes it (benchmarks/accuracy.py; issue 12)."""

import math
import re
import sys

import numpy as np
import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import accuracy  # noqa: E402


def _called(truth, fp, fn, n_ham):
    called = truth.copy()
    called[:fp] = True
    called[n_ham : n_ham + fn] = False
    return called


def fake_run(seed, fp, fn, sk_fp, n_ham=830, n_spam=379, raw_fp=0):
    truth = np.array([False] * n_ham + [True] * n_spam)
    sk = truth.copy()
    sk[:sk_fp] = True
    nb = accuracy.metrics(truth, _called(truth, fp, fn, n_ham))
    return {
        "seed": seed,
        "n_train": 4837,
        "n_test": n_ham + n_spam,
        "n_ham": n_ham,
        "n_spam": n_spam,
        "nb": nb,
        "raw": accuracy.metrics(truth, _called(truth, raw_fp, fn + 1, n_ham)),  # --calibrate none
        "high": accuracy.metrics(truth, _called(truth, 0, fn + 6, n_ham)),  # one cut-off at 0.9
        "band": nb,
        "unsure": np.zeros(n_ham + n_spam, bool),
        "sk": accuracy.metrics(truth, sk),
        "nb_s": (1.0, 0.5),
        "sk_s": (2.0, 0.5),
    }


def test_spread_is_the_sample_standard_deviation_and_the_range():
    s = accuracy.spread([0.99, 0.98, 0.97])
    assert s["mean"] == pytest.approx(0.98)
    assert s["std"] == pytest.approx(0.01)  # ddof=1; the population figure would be 0.0082
    assert (s["min"], s["max"]) == (0.97, 0.99)
    assert math.isnan(accuracy.spread([0.5])["std"])
    assert accuracy.pm([0.5]) == "50.00 ± n/a% (50.00..50.00%)"


def test_seed_section_gives_mean_spread_range_and_every_seed():
    runs = [fake_run(1, fp=1, fn=5, sk_fp=5), fake_run(2, fp=3, fn=7, sk_fp=7), fake_run(3, fp=2, fn=6, sk_fp=6)]
    text = accuracy.seeds_section(runs)
    assert "### Over 3 more seeded splits" in text
    # FPR 1/830, 3/830, 2/830: mean 0.24%, sample std 0.12%, range 0.12..0.36%
    assert "0.24 ± 0.12% (0.12..0.36%)" in text
    assert "meet the target on **2 of 3**" in text  # 3 false positives is 0.36% > 0.25%
    assert "with `--calibrate none`, on **3 of 3**" in text  # no false positive, at most 8 spam missed
    assert "one cut-off at 0.9, on **2 of 3**" in text  # 13 spam missed of 1209: accuracy 98.92% < 99%
    assert re.search(r"^\| 2 \| .* \| 0\.36% \(3\) \|", text, re.M)


def test_readme_sentence_quotes_headline_and_spread():
    runs = [fake_run(1, fp=1, fn=5, sk_fp=5), fake_run(2, fp=3, fn=7, sk_fp=7)]
    text = " ".join(accuracy.readme_sentence(fake_run(20261121, fp=2, fn=6, sk_fp=11), runs).split())
    assert "**99.34% accuracy with a 0.24% ham false-positive rate**" in text
    assert "Over 2 more seeded splits" in text and "sample standard deviation" in text


def test_seeds_option_rejects_a_negative_count(capsys):
    with pytest.raises(SystemExit) as exc:
        accuracy.main(["--seeds", "-1"])
    assert exc.value.code == 2
    assert "0..1000" in capsys.readouterr().err


def test_readme_headline_quotes_the_spread_that_docs_benchmarks_reports():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    headline = re.search(r"On the SpamAssassin public corpus.*?\n\n", readme, re.S).group(0)
    assert re.search(r"Over\s+\d+\s+more\s+seeded\s+splits", headline), "README headline gives one split only"
    docs = (REPO / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    section = re.search(r"<!-- begin accuracy -->.*?<!-- end accuracy -->", docs, re.S).group(0)
    n = re.search(r"Over\s+(\d+)\s+more\s+seeded\s+splits", headline).group(1)
    assert f"### Over {n} more seeded splits" in section
    for figure in re.findall(r"\d+\.\d\d(?=%|\s±)", headline):
        assert figure in section, (
            f"README headline figure {figure} is not in docs/benchmarks.md: rerun make bench-accuracy"
        )

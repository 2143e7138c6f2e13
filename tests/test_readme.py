"""The README's examples are real (see tools/readme.py)."""

import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "tools"))
import readme  # noqa: E402


def test_readme_examples_print_what_the_readme_shows(tmp_path):
    current = readme.README.read_text(encoding="utf-8")
    fresh = readme.run_examples(current, tmp_path, readme.Path(sys.executable).parent)
    assert readme.normal(fresh) == readme.normal(current), "README examples are stale: run `make readme`"
    assert current.count("$ nbcli") >= 15

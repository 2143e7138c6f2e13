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


def test_readme_python_examples_print_what_their_comments_say(tmp_path):
    """Each ```python block is run; every print line's `# comment` is the
    line it printed (it promised `astronomy 0.979` and printed 0.498)."""
    current = readme.README.read_text(encoding="utf-8")
    blocks = list(readme.PYTHON.finditer(current))
    assert blocks and all("print(" in b.group(2) for b in blocks)
    (tmp_path / "sample_corpora").symlink_to(readme.REPO / "sample_corpora")
    for block in blocks:
        ran = readme.python_block(block, tmp_path, readme.Path(sys.executable).parent)
        assert ran == block.group(0), f"README Python example is stale: run `make readme`\n{ran}"

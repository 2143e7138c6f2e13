"""The README's examples are real (see tools/readme.py)."""

import sys

from conftest import REPO

sys.path.insert(0, str(REPO / "tools"))
import readme  # noqa: E402


def test_readme_examples_print_what_the_readme_shows(tmp_path):
    """The README's and every guide page's console examples, run in order in one folder."""
    pages = readme.run_all(tmp_path, readme.Path(sys.executable).parent)
    for path, (current, fresh) in pages.items():
        assert readme.normal(fresh) == readme.normal(current), f"{path.name}: examples are stale: run `make readme`"
    assert sum(current.count("$ nbcli") for current, _ in pages.values()) >= 15
    assert len(readme.README.read_text(encoding="utf-8").splitlines()) <= 300  # a front page (issue 28)


def test_every_guide_page_is_run_and_linked():
    guide = readme.REPO / "docs" / "guide"
    pages = {p.stem for p in guide.glob("*.md")} - {"README"}
    assert pages == set(readme.GUIDE)
    index = (guide / "README.md").read_text(encoding="utf-8")
    assert all(f"({name}.md)" in index for name in readme.GUIDE)


def test_readme_python_examples_print_what_their_comments_say(tmp_path):
    """Each ```python block is run; every print line's `# comment` is the
    line it printed (it promised `astronomy 0.979` and printed 0.498)."""
    current = "".join(path.read_text(encoding="utf-8") for path in readme.DOCS)
    blocks = list(readme.PYTHON.finditer(current))
    assert blocks and all("print(" in b.group(2) for b in blocks)
    (tmp_path / "sample_corpora").symlink_to(readme.REPO / "sample_corpora")
    for block in blocks:
        ran = readme.python_block(block, tmp_path, readme.Path(sys.executable).parent)
        assert ran == block.group(0), f"README Python example is stale: run `make readme`\n{ran}"

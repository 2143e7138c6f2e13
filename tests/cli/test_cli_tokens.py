"""`nbcli tokens`: the analyzer's terms, one per line (like bogolexer)."""

from conftest import run
from mailfixtures import MESSAGES


def test_tokens_of_a_message(tmp_path):
    (tmp_path / "m.eml").write_bytes(MESSAGES["html-only"])
    result = run(["tokens", tmp_path / "m.eml"])
    assert result.exit_code == 0 and result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[:2] == ["subject:limited", "subject:offer"]
    assert "viagra" in lines and "url:example.biz" in lines
    plain = run(["tokens", "--no-mail", tmp_path / "m.eml"]).stdout.splitlines()
    assert "subject:limited" not in plain and "href" in plain


def test_tokens_with_a_models_options_and_several_inputs(tmp_path, small_model):
    (tmp_path / "a.txt").write_text("Hello hello World")
    (tmp_path / "b.txt").write_text("Bye")
    result = run(["tokens", "-m", small_model, tmp_path / "a.txt", tmp_path / "b.txt"])
    assert result.stdout.splitlines() == [
        f"==> {tmp_path / 'a.txt'} <==",
        "hello",
        "hello",
        "world",
        f"==> {tmp_path / 'b.txt'} <==",
        "bye",
    ]
    piped = run(["tokens", "--token-pattern", r"\S+"], input="a-b c!")
    assert piped.stdout == "a-b\nc!\n"

"""click's parameter types of the options (cli/param_types.py): sizes,
document frequencies and METRIC=V limits, and the one-line usage errors
they give."""

import click
import pytest

from nbcli.cli.param_types import ByteSize, DocFrequency, Limit


@pytest.mark.parametrize(
    "text, size",
    [("512K", 512 << 10), ("16M", 16 << 20), ("1G", 1 << 30), ("1.5m", 3 << 19), ("100", 100), ("2kb", 2048)],
)
def test_sizes_take_the_suffixes_people_write(text, size):
    assert ByteSize().convert(text, None, None) == size


def test_a_size_already_converted_passes_through():
    assert ByteSize().convert(4096, None, None) == 4096  # a default given as a number


@pytest.mark.parametrize(
    "text, message",
    [
        ("lots", "is not a size such as 512K, 16M or 1G"),
        ("0", "must be at least 1 byte"),
        ("0K", "must be at least 1 byte"),
        ("65M", "is more than the largest allowed, 64M"),
    ],
)
def test_bad_sizes_are_refused_with_the_reason(text, message):
    with pytest.raises(click.BadParameter, match=message):
        ByteSize(64 << 20).convert(text, None, None)


def test_a_document_frequency_is_a_count_or_a_proportion():
    freq = DocFrequency()
    assert freq.convert("3", None, None) == 3 and isinstance(freq.convert("3", None, None), int)
    assert freq.convert("0.5", None, None) == 0.5
    assert freq.convert("1.0", None, None) == 1.0 and isinstance(freq.convert("1.0", None, None), float)
    with pytest.raises(click.BadParameter, match="neither a document count nor a proportion"):
        freq.convert("some", None, None)
    with pytest.raises(click.BadParameter, match="a proportion must lie between 0.0 and 1.0"):
        freq.convert("1.5", None, None)


def test_a_limit_is_a_metric_and_a_number():
    assert Limit().convert("accuracy=0.98", None, None) == ("accuracy", 0.98)
    assert Limit().convert(("ham_fpr", 0.001), None, None) == ("ham_fpr", 0.001)
    with pytest.raises(click.BadParameter, match="is not METRIC=VALUE"):
        Limit().convert("accuracy", None, None)
    with pytest.raises(click.BadParameter, match="'speed' is not a metric"):
        Limit().convert("speed=1", None, None)

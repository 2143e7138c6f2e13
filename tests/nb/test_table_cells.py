"""Table cells into columns (`nb.table_cells`): missing cells, numbers,
column kinds, category codes and `Coded` columns, bin edges, recording
resolution."""

from __future__ import annotations

import numpy as np
import pytest

from nbcli.nb.table_cells import (
    MISSING,
    category_codes,
    coded,
    column_numbers,
    equal_frequency_edges,
    infer_kind,
    is_missing,
    kind_of_numbers,
    parse_numbers,
)


def test_parse_numbers():
    values, bad = parse_numbers(["1", "2.5", "NA", "?", "", "abc", "1e3", " 7 ", "inf", "nan"])
    assert np.array_equal(values, [1, 2.5, np.nan, np.nan, np.nan, np.nan, 1000, 7, np.nan, np.nan], equal_nan=True)
    assert bad.tolist() == [False] * 5 + [True] + [False] * 2 + [True, False]
    clean, none_bad = parse_numbers(np.array(["1", " -2 ", "3.5e-1"]))
    assert clean.tolist() == [1, -2, 0.35] and not none_bad.any()


@pytest.mark.parametrize(
    "values, kind",
    [
        (["0", "1", "1", "?", "0"], "categorical"),  # a 0/1 flag
        ([str(i) for i in range(10)] * 2, "categorical"),  # 10 integer codes
        ([str(i) for i in range(11)], "numeric"),  # 11 distinct integers
        (["1", "2", "2.5"], "numeric"),  # one value not an integer
        (["1", "2", "abc"], "categorical"),
        (["", "?", "NA"], "categorical"),  # nothing present
        (["1", "inf", "2.5"], "categorical"),
    ],
)
def test_infer_kind(values, kind):
    assert infer_kind(values) == kind


def test_missing_spellings_and_kind_of_parsed_numbers():
    assert all(is_missing(m) for m in MISSING) and is_missing(" NA ") and not is_missing("0")
    assert kind_of_numbers(*parse_numbers(["1.5", "2"])) == "numeric"
    assert kind_of_numbers(*parse_numbers(["1", "?"])) == "categorical"


def test_category_codes_strip_sort_and_mark_unseen_and_missing():
    categories, codes = category_codes(np.array([" b", "a", "?", "b "], dtype=object))
    assert categories == ["a", "b"]
    assert np.array_equal(codes, [1, 0, np.nan, 1], equal_nan=True)
    _, known = category_codes(np.array(["a", "z", "", " b"], dtype=object), ["a", "b"])
    assert np.array_equal(known, [0, 2, np.nan, 1], equal_nan=True)  # K = 2 for a category never seen


def test_a_coded_column_gives_the_same_codes_as_its_texts():
    texts = ["x", " y", "NA", "x "]
    column = coded(texts, np.array([0, 1, 2, 3, 0], dtype=np.int64))
    assert column.categories == ["x", "y"] and column.codes.tolist() == [0, 1, -1, 0, 0]
    cells = np.array([texts[i] for i in [0, 1, 2, 3, 0]], dtype=object)
    for categories in (None, ["x"], ["w", "y"]):
        from_texts = category_codes(cells, categories)
        from_coded = category_codes(column, categories)
        assert from_texts[0] == from_coded[0]
        assert np.array_equal(from_texts[1], from_coded[1], equal_nan=True)
    assert len(column[np.array([True, False, True, False, False])]) == 2


def test_numbers_of_a_column_and_equal_frequency_edges():
    values, bad = column_numbers(np.array(["1", "x", "inf"], dtype=object))
    assert np.array_equal(values, [1.0, np.nan, np.nan], equal_nan=True) and bad.tolist() == [False, True, True]
    floats, none = column_numbers(np.array([1.0, np.inf]))
    assert np.array_equal(floats, [1.0, np.nan], equal_nan=True) and none is None
    edges = equal_frequency_edges(np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), 3)
    assert edges.tolist() == [2.0, 4.0]
    assert equal_frequency_edges(np.array([1.0, 1.0, 1.0, 2.0]), 4).tolist() == [1.0]  # repeats and the top dropped


@pytest.mark.parametrize("n", [0, 1])
def test_an_empty_or_single_row_column_parses(n):
    values, bad = parse_numbers(["3"] * n)
    assert values.tolist() == [3.0] * n and not bad.any()

"""Reading saved results: the rows, their order and their values are those of a plain pandas
read of the files (one ``read_table(...).to_pandas()`` per file, concatenated, filtered by the
done units, sorted); only the string columns' dtype differs (Python strings, not Arrow)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from metaeval.study.plan import UNIT_COLUMNS
from metaeval.study.saved import (
    StoreError,
    _read_files,
    _stable_order,
    load_results,
    read_plan,
    read_saved,
)

REPORTS = Path(__file__).resolve().parents[2] / "reports"


def _plain(root: Path, table: str) -> pd.DataFrame:
    """load_results as plain pandas does it (what the fast path must equal)."""
    saved = read_saved(root)
    keep = saved.done & set(read_plan(root)["unit"])
    frame = pd.concat([pq.read_table(p).to_pandas() for p in saved.files(table)], ignore_index=True)
    frame = frame[frame["unit"].isin(keep)]
    order = [c for c in UNIT_COLUMNS if c in frame.columns and c not in ("unit", "task")]
    extra = [c for c in frame.columns if c not in UNIT_COLUMNS]
    last = [c for c in ("task", "unit") if c in frame.columns]
    frame = frame[order + extra + last]
    keys = order + [c for c in ("statistic", "x", "rank") if c in extra]
    return frame.sort_values(keys, kind="stable").reset_index(drop=True)


@pytest.mark.parametrize("table", ["results", "resamples", "units"])
def test_load_results_equals_a_plain_pandas_read(table):
    root = REPORTS / "textbook-map-gmap-mrr"
    got, want = load_results(root, table), _plain(root, table)
    strings = [c for c in want.columns if want[c].dtype == "str"]
    assert strings and all(got[c].dtype == object for c in strings)
    assert all(type(v) is str for c in strings for v in got[c])
    if "values" in want:  # arrays: compared one by one
        for a, b in zip(got.pop("values"), want.pop("values"), strict=True):
            assert a.dtype == b.dtype and np.array_equal(a, b)
    pd.testing.assert_frame_equal(got, want.astype({c: object for c in strings}))


def test_strings_of_several_files_and_missing_ones(tmp_path):
    """Files with different dictionaries (and several row groups) read as one column; a
    missing string is NaN, as in pandas' own strings."""
    a = pa.table({"s": ["x", None, "y", "x"], "n": [1, 2, 3, 4]})
    b = pa.table({"s": ["z", "x"], "n": [5, 6]})
    pq.write_table(a, tmp_path / "a.parquet", row_group_size=2)
    pq.write_table(b, tmp_path / "b.parquet")
    files = [tmp_path / "a.parquet", tmp_path / "b.parquet"]
    got = _read_files(files, objects=True)
    want = _read_files(files)
    assert got["s"].dtype == object and want["s"].dtype == "str"
    assert got["s"].tolist()[:1] == ["x"] and np.isnan(got["s"][1])
    pd.testing.assert_frame_equal(got, want.astype({"s": object}))
    # a file of another schema: read file by file, as before
    pq.write_table(pa.table({"s": ["w"], "n": [7], "m": [0.5]}), tmp_path / "c.parquet")
    files.append(tmp_path / "c.parquet")
    got, want = _read_files(files, objects=True), _read_files(files)
    pd.testing.assert_frame_equal(got, want.astype({"s": object}))
    # a file saved with its pandas index (of strings): the index is not a column
    frame = pd.DataFrame({"s": ["u", "v"], "n": [8, 9]}, index=pd.Index(["i", "j"]))
    pq.write_table(pa.Table.from_pandas(frame), tmp_path / "d.parquet")
    for files in ([tmp_path / "d.parquet"] * 2, [tmp_path / "a.parquet", tmp_path / "d.parquet"]):
        got, want = _read_files(files, objects=True), _read_files(files)
        assert list(got.columns) == ["s", "n"]
        pd.testing.assert_frame_equal(got, want.astype({"s": object}))


def test_a_damaged_file_is_named_in_the_words_of_read_table(tmp_path):
    path = tmp_path / "bad.parquet"
    path.write_bytes(b"not parquet")
    with pytest.raises(StoreError, match=r"bad.parquet cannot be read \(Could not open Parquet"):
        _read_files([path], objects=True)


def test_the_stable_order_is_that_of_sort_values():
    rng = np.random.default_rng(4)
    n = 500
    frame = pd.DataFrame(
        {
            "w": pd.Series(rng.choice(["b", "a", "é", "Z", "a2"], n), dtype=object),
            "r": rng.integers(0, 3, n),
            "x": np.where(rng.random(n) < 0.2, np.nan, rng.choice([0.0, -0.0, 1.5, 10.0], n)),
            "m": pd.Series(rng.choice(["P@5", "AP", "AP'", np.nan], n), dtype=object),
        },
        index=rng.permutation(n),
    )
    for keys in (["w"], ["w", "r", "x"], ["m", "x", "w"], ["x"]):
        want = frame.sort_values(keys, kind="stable")
        pd.testing.assert_frame_equal(frame.take(_stable_order(frame, keys)), want)
    # numbers and strings in one column: left to pandas, which sorts them with several keys
    # and refuses to with one
    mixed = frame.assign(w=pd.Series([1, "a"] * (n // 2), dtype=object, index=frame.index))
    want = mixed.sort_values(["w", "r"], kind="stable")
    pd.testing.assert_frame_equal(mixed.take(_stable_order(mixed, ["w", "r"])), want)
    with pytest.raises(TypeError):
        mixed.sort_values(["w"], kind="stable")
    with pytest.raises(TypeError):
        _stable_order(mixed, ["w"])

"""Small Arrow helpers shared by Qrels and Run: ids stay Arrow strings, never Python objects."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def as_string_array(values) -> pa.Array:
    """Topic and document ids as one Arrow string array (ids are always text)."""
    if isinstance(values, pa.ChunkedArray):
        # One chunk (a parsed file's column) is taken as it is: combining would copy it.
        values = values.chunk(0) if values.num_chunks == 1 else values.combine_chunks()
    if isinstance(values, pa.Array):
        return values if values.type == pa.string() else values.cast(pa.string())
    arr = np.asarray(values)
    if arr.dtype.kind in "US":
        return pa.array(arr.astype(str))
    try:
        return pa.array(arr, type=pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array(arr.astype(str))


def codes(values: pa.Array) -> np.ndarray:
    """Integer codes of an array's distinct values (in order of first appearance)."""
    return pc.dictionary_encode(values).indices.to_numpy(zero_copy_only=False).astype(np.int64)


def blocks(sorted_values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values of a sorted array and the offsets of their contiguous blocks."""
    c = codes(sorted_values)
    starts = np.flatnonzero(np.diff(c, prepend=-1) != 0)
    uniques = sorted_values.take(pa.array(starts)).to_numpy(zero_copy_only=False).astype(object)
    return uniques, np.append(starts, len(c)).astype(np.int64)


def pair_keys(a: pa.Array, b: pa.Array) -> np.ndarray:
    """One int64 per row, equal exactly when both ``a`` and ``b`` are equal."""
    ca, cb = codes(a), codes(b)
    return ca * (int(cb.max()) + 1 if len(cb) else 1) + cb

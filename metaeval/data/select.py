"""Topic and run selections as a user writes them: ``601-650``, ``601-610,612``, a list, a file."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

_RANGE = re.compile(r"^(\d+)-(\d+)$")


def _tokens(spec) -> list[str]:
    if isinstance(spec, os.PathLike):
        spec = str(spec)
    if isinstance(spec, str):
        path = Path(spec).expanduser()
        if spec and not _RANGE.match(spec.strip()) and path.is_file():
            text = path.read_text(encoding="utf-8-sig")
            text = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
            return [t for t in re.split(r"[\s,]+", text) if t]
        return [t.strip() for t in spec.split(",") if t.strip()]
    if isinstance(spec, Iterable):
        out = []
        for item in spec:
            if isinstance(item, bool) or not isinstance(item, (str, int)):
                raise TypeError(f"ids must be strings or integers, got {item!r}")
            out.append(str(item).strip())
        return out
    raise TypeError(
        "a selection is a string such as '601-650', a list of ids or a file of ids, "
        f"got {type(spec).__name__}"
    )


def parse_ids(spec, *, available: Sequence[str] | None = None, what: str = "topic") -> list[str]:
    """The ids a selection names, in the order of ``available`` (or as written).

    Parameters
    ----------
    spec : str, path or sequence of str/int
        ``"601-650"``, ``"601-610,612,700-705"``, a list of ids, or the path of a file holding
        ids (separated by whitespace or commas; ``#`` starts a comment). A range ``a-b`` needs
        integer ends and names a, a+1, ..., b; a token that is exactly one of ``available`` is
        taken as that id even when it contains ``-``.
    available : sequence of str, optional
        The ids that exist (a qrels' topics, a run set's names). Ids not among them are an
        error; the result follows their order.
    what : str
        What the ids are, for messages ("topic", "run").

    Returns
    -------
    list of str
        Without duplicates.

    Raises
    ------
    ValueError
        For an empty selection, a backwards range, or ids not in ``available``.
    """
    known = None if available is None else [str(a) for a in available]
    known_set = set(known or ())
    wanted: list[str] = []
    for token in _tokens(spec):
        match = _RANGE.match(token)
        if match and token not in known_set:
            lo, hi = int(match[1]), int(match[2])
            if hi < lo:
                raise ValueError(f"{what} range {token!r} runs backwards")
            width = len(match[1]) if match[1].startswith("0") else 0
            wanted.extend(str(i).zfill(width) for i in range(lo, hi + 1))
        else:
            wanted.append(token)
    wanted = list(dict.fromkeys(wanted))
    if not wanted:
        raise ValueError(f"the {what} selection {spec!r} names no {what}")
    if known is None:
        return wanted
    unknown = [w for w in wanted if w not in known_set]
    if unknown:
        shown = ", ".join(unknown[:5]) + (", ..." if len(unknown) > 5 else "")
        where = "in the qrels" if what == "topic" else "among the runs"
        raise ValueError(f"{len(unknown)} {what}(s) of the selection are not {where}: {shown}")
    chosen = set(wanted)
    return [k for k in known if k in chosen]


__all__ = ["parse_ids"]

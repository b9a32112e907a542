"""Topic and run selections as a user writes them: ``601-650``, ``601-610,612``, a list, a file."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from metaeval._validation import shown_ids

_RANGE = re.compile(r"^(\d+)-(\d+)$")
#: The most ids a range may name when there is no list of available ids to check it against.
MAX_RANGE = 1_000_000


class SelectionError(ValueError):
    """A topic or run selection that cannot be applied; ``what`` is "topic" or "run" and
    ``spec`` the selection as given, so that a caller can name its own option."""

    def __init__(self, message: str, *, what: str, spec):
        super().__init__(message)
        self.what = what
        self.spec = spec


def _tokens(spec, what: str) -> list[str]:
    if isinstance(spec, os.PathLike):
        spec = str(spec)
    if isinstance(spec, str):
        path = Path(spec).expanduser()
        if spec and not _RANGE.match(spec.strip()) and path.is_dir():
            raise SelectionError(
                f"{spec} is a directory, not a file of {what} ids", what=what, spec=spec
            )
        if spec and not _RANGE.match(spec.strip()) and path.is_file():
            try:
                text = path.read_text(encoding="utf-8-sig")
            except UnicodeDecodeError as err:
                raise SelectionError(
                    f"{spec}: not UTF-8 text ({err.reason} at byte {err.start})",
                    what=what,
                    spec=spec,
                ) from None
            except OSError as err:
                raise SelectionError(f"{spec}: {err.strerror}", what=what, spec=spec) from None
            text = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
            ids = [t for t in re.split(r"[\s,]+", text) if t]
            if not ids:
                raise SelectionError(
                    f"the file {spec} names no {what} (it is empty or all comments)",
                    what=what,
                    spec=spec,
                )
            return ids
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
    SelectionError
        (a ValueError) For an empty selection, a backwards range, a range of more than
        :data:`MAX_RANGE` ids (without ``available``), ids not in ``available``, or a file of
        ids that cannot be read.
    """
    known = None if available is None else [str(a) for a in available]
    known_set = set(known or ())
    wanted: list[str] = []
    for token in _tokens(spec, what):
        match = _RANGE.match(token)
        if match and token not in known_set:
            lo, hi = int(match[1]), int(match[2])
            if hi < lo:
                raise SelectionError(f"{what} range {token!r} runs backwards", what=what, spec=spec)
            width = len(match[1]) if match[1].startswith("0") else 0
            size = hi - lo + 1
            if known is not None and size > len(known_set):
                # More ids than exist: some are unknown; name a few without listing them all.
                unknown = []
                for i in range(lo, hi + 1):
                    if str(i).zfill(width) not in known_set:
                        unknown.append(str(i).zfill(width))
                    if len(unknown) == 5:
                        break
                n_known = sum(
                    1
                    for k in known_set
                    if k.isdigit()
                    and len(k) >= width
                    and lo <= int(k) <= hi
                    and k == str(int(k)).zfill(width)
                )
                where = "in the qrels" if what == "topic" else "among the runs"
                more = ", ..." if size - n_known > len(unknown) else ""
                raise SelectionError(
                    f"{size - n_known} {what}(s) of the selection are not {where}: "
                    f"{', '.join(unknown)}{more} (the range {token!r} names {size:,} ids)",
                    what=what,
                    spec=spec,
                )
            if known is None and size > MAX_RANGE:
                raise SelectionError(
                    f"{what} range {token!r} names {size} ids; a range names at most {MAX_RANGE:,}",
                    what=what,
                    spec=spec,
                )
            wanted.extend(str(i).zfill(width) for i in range(lo, hi + 1))
        else:
            wanted.append(token)
    wanted = list(dict.fromkeys(wanted))
    if not wanted:
        raise SelectionError(f"the {what} selection {spec!r} names no {what}", what=what, spec=spec)
    if known is None:
        return wanted
    unknown = [w for w in wanted if w not in known_set]
    if unknown:
        where = "in the qrels" if what == "topic" else "among the runs"
        if (
            isinstance(spec, (str, os.PathLike))
            and len(wanted) == 1
            and (os.sep in str(spec) or str(spec).endswith((".txt", ".tsv", ".csv")))
        ):
            raise SelectionError(
                f"{spec}: no such file (nor a {what} {where})", what=what, spec=spec
            )
        raise SelectionError(
            f"{len(unknown)} {what}(s) of the selection are not {where}: {shown_ids(unknown)}",
            what=what,
            spec=spec,
        )
    chosen = set(wanted)
    return [k for k in known if k in chosen]


__all__ = ["parse_ids", "SelectionError", "MAX_RANGE"]

"""Errors raised at the edge, where files and tables become Qrels and Runs."""

from __future__ import annotations

from pathlib import Path


class TrecFormatError(ValueError):
    """A malformed TREC file: names the file, the 1-based line (when known) and the problem."""

    def __init__(self, path: str | Path | None, line: int | None, problem: str):
        self.path = None if path is None else Path(path)
        self.line = line
        self.problem = problem
        where = str(self.path) if self.path is not None else "<input>"
        if line is not None:
            where += f", line {line}"
        super().__init__(f"{where}: {problem}")

"""The commands that run a study criterion on TREC files run it as a study.

``metaeval robustness``, ``stability``, ``discriminate`` and ``correlate`` each build the study
a study file with the same world, criterion and seed would be: one TREC world of the files
given (with ``--topics`` and ``--runs``), the command's measures, its degrader (robustness),
its criterion with the options given, its seed, no claims and no topic resamples. They run it
through the study runner, in this process and quietly, into a temporary output folder removed
afterwards, and read its results back. So a command and ``metaeval study run`` give the same
numbers for the same seed: the same world instance, the same identity-seeded streams
(:mod:`metaeval.study.seeding`), the same criterion code.

:func:`trec_study` makes a :class:`TrecStudy`: its world is loaded by the study's own loader
before the run, so that a command checks what it reads (too few runs or topics, a level the
runs cannot give) with its own one-line errors, and the run finds the world in the loader's
cache rather than reading the files again.
"""

from __future__ import annotations

import dataclasses
import glob
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import Any, NoReturn

import pandas as pd

from metaeval.cli._common import fail

#: The id of a command's one world (results do not depend on it: a world is seeded by its
#: content and options).
WORLD = "data"


def criterion(kind: str, *, topic_filter: dict | None = None, **options):
    """A study criterion with the command's options, as a study file states it.

    Only the options that differ from the criterion's defaults are kept: a criterion's random
    streams are seeded by its parameters as written, so the command draws what a study file
    that leaves its defaults out draws.

    Parameters
    ----------
    kind : str
        A registered criterion (``robustness``, ``stability``...).
    topic_filter : dict, optional
        ``grade`` and ``at_most`` and/or ``at_least``, as a study file's ``topic_filter``.
    **options
        The criterion's parameters (lists are read as tuples).

    Returns
    -------
    CriterionSpec

    Raises
    ------
    ParamError
        Naming the parameter whose value the criterion refuses.
    """
    from metaeval.study.criteria import registered_criteria
    from metaeval.study.spec import CriterionSpec

    fields = dataclasses.fields(registered_criteria()[kind])
    defaults = {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}
    params = {
        key: _frozen(value)
        for key, value in options.items()
        if key not in defaults or _frozen(value) != _frozen(defaults[key])
    }
    given = {} if topic_filter is None else {"at_least": None, "at_most": None, **topic_filter}
    spec = CriterionSpec(
        id=kind,
        kind=kind,
        topic_filter=tuple(sorted(given.items())),
        params=tuple(sorted(params.items())),
    )
    spec.make()
    return spec


def degrader(method: str, levels: Sequence, trials: int):
    """The study degrader of ``method`` at ``levels`` (one trial for a deterministic one).

    Raises
    ------
    ValueError, TypeError
        When the degrader refuses its levels.
    """
    from metaeval.study.spec import DegraderSpec
    from simulators.degraders import level_field, make_degrader

    made = make_degrader(method, **{level_field(method): tuple(levels)})
    # the degrader's own spelling of its levels (70.0 -> 70), as a study file's are kept
    return DegraderSpec(
        id=method,
        method=method,
        levels=tuple(made.levels()),
        trials=trials if made.random else 1,
    )


def _frozen(value: Any) -> Any:
    """A parameter as a study spec holds it: lists as tuples."""
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


class TrecStudy:
    """One command's study of TREC files: its spec, its world, and a run of its criteria.

    Made by :func:`trec_study`, which removes its temporary folder afterwards.
    """

    def __init__(self, spec, folder: Path):
        self.spec = spec
        self.folder = folder

    @property
    def labels(self) -> tuple[str, ...]:
        """The measures, by the names results give them (their canonical names)."""
        return self.spec.labels

    @cached_property
    def world(self):
        """The world instance, loaded now by the study's loader (which keeps it for the run):
        a file that cannot be read, or a selection that cannot be applied, fails here with
        the error the command gives for it."""
        from metaeval.study.worlds import load_world

        return load_world(self.spec, WORLD, 0)

    @property
    def tensor(self):
        """The runs under the full judgments (after ``--topics`` and ``--runs``)."""
        return self.world.tensor

    def full_scores(self) -> dict:
        """Every measure's per-topic scores under the full judgments, computed as the study's
        tasks compute them and kept where they find them: a measure that fails (a plugin's)
        fails here with its own error, before any task runs."""
        from metaeval.study.context import Context
        from metaeval.study.spec import FULL

        ctx = Context(
            self.spec, self.world, self.tensor, level=FULL, degrader="", trial=0, level_cache={}
        )
        return {label: ctx.full_scores(label) for label in self.labels}

    def spec_with(self, *criteria):
        """The study with ``criteria`` (from :func:`criterion`), and its study file as text."""
        spec = dataclasses.replace(self.spec, criteria=tuple(criteria))
        return dataclasses.replace(spec, text=study_text(spec))

    def run(self, *criteria, tables: Sequence[str] = ("results",)) -> dict[str, pd.DataFrame]:
        """Run the study with ``criteria`` and read back its ``tables``.

        The run is the study runner's, in this process (``jobs=1``) and quiet; its output
        folder is inside the temporary folder.

        Raises
        ------
        KeyboardInterrupt
            When the run was stopped by Ctrl-C or SIGTERM.
        """
        from metaeval.study import load_results, run_study

        self.spec = self.spec_with(*criteria)
        out = self.folder / "study"
        summary = run_study(self.spec, out, jobs=1, quiet=True)
        if summary.interrupted:
            raise KeyboardInterrupt
        if summary.failed:
            self._failed(summary.failures[0])
        return {name: load_results(out, name) for name in tables}

    def _failed(self, failure: str) -> NoReturn:
        """Fail with the error of a failed task (``failure``: ``<task id>: <error>``).

        The runner keeps a task's error as text. Run again here, the task raises it as the
        exception it is, which the command line then reports as any other: one line, with
        the status of its kind (2 for bad input), the traceback under METAEVAL_DEBUG."""
        from metaeval.study import make_plan
        from metaeval.study.tasks import execute

        task = next(t for t in make_plan(self.spec).tasks if failure.startswith(f"{t.id}: "))
        execute(self.spec, task)
        # it did not fail again: say what it said, without the task id (nothing the command
        # was given)
        fail(failure.split(": ", 1)[-1], code=1)


@contextmanager
def trec_study(
    command: str,
    qrels: Path,
    runs: Sequence[Path],
    measures: Sequence[str],
    *,
    seed: int = 0,
    topics: str | None = None,
    run_names: str | None = None,
    rel: int = 1,
    plugins: Sequence[Path] | None = None,
    degraders: Sequence = (),
) -> Iterator[TrecStudy]:
    """The study a command runs on ``qrels`` and ``runs``, in a temporary folder removed
    (with the world the study's loader keeps) when the block ends.

    Parameters
    ----------
    command : str
        The study's name.
    qrels, runs : Path
        The files; a pipe (``/dev/stdin``, ``<(zcat run.gz)``) is copied into the temporary
        folder, since a study reads each file twice (its digest, then its data).
    measures : sequence of str
        Measure names, parsed as the command line parses them (duplicates kept once).
    seed : int
        The study seed.
    topics, run_names : str, optional
        ``--topics`` and ``--runs``: ranges, lists or files of ids, as a study file's world's
        ``topics`` and ``run_names``.
    rel : int
        The world's relevance level of binary measures.
    plugins : sequence of Path, optional
        Plugin files, already loaded by the command.
    degraders : sequence of DegraderSpec
        From :func:`degrader`.

    Yields
    ------
    TrecStudy
        Without criteria: :meth:`TrecStudy.run` is given them, once the command has checked
        its options against the world.
    """
    from metaeval.evaluation import as_measures, check_distinct_inputs
    from metaeval.study.spec import MeasureSpec, StudySpec, TrecWorld
    from metaeval.study.worlds import clear_cache

    check_distinct_inputs(qrels, runs)
    names = [str(m) for m in as_measures(list(measures))]
    with tempfile.TemporaryDirectory(prefix=f"metaeval-{command}-") as tmp:
        folder = Path(tmp)
        files = _readable([qrels, *runs], folder)
        world = TrecWorld(
            id=WORLD,
            qrels=files[0],
            runs=tuple(files[1:]),
            topics=_selection(topics),
            run_names=_selection(run_names),
            rel=rel,
            # the command has no option for the world's level: no advice to set one
            rel_stated=True,
        )
        spec = StudySpec(
            name=command,
            seed=seed,
            worlds=(world,),
            degraders=tuple(degraders),
            measures=tuple(MeasureSpec(label=n, name=n, aggregate="mean") for n in names),
            criteria=(),
            # the commands report no intervals: nothing is recomputed on topic resamples
            topic_resamples=0,
            plugins=tuple(Path(p).absolute() for p in plugins or ()),
        )
        try:
            yield TrecStudy(spec, folder)
        finally:
            clear_cache()


def _readable(paths: Sequence[Path], folder: Path) -> list[Path]:
    """The files as absolute paths a study can read twice: a pipe is copied into ``folder``."""
    out = []
    for i, path in enumerate(map(Path, paths)):
        if path.is_file():
            out.append(path.absolute())
            continue
        copy = folder / f"{i}-{path.name or 'input'}"
        with open(path, "rb") as src, open(copy, "wb") as dst:
            shutil.copyfileobj(src, dst)
        out.append(copy)
    return out


def _selection(value: str | None) -> str | None:
    """``--topics`` or ``--runs`` as a study file's world holds it: a file by its absolute
    path (a study file's is made absolute from the file's folder)."""
    if value is not None and Path(value).is_file():
        return str(Path(value).absolute())
    return value


def study_text(spec) -> str:
    """The study file ``spec`` is: read by :func:`~metaeval.study.load_spec`, it gives the same
    world, degraders, measures, criteria and seed. Saved with the results, as a study's is."""
    import tomli_w

    from metaeval.study.spec import SCHEMA

    world = spec.worlds[0]
    trec = {
        "id": world.id,
        "kind": "trec",
        "qrels": str(world.qrels),
        # a study file's runs are globs: a file name with [, * or ? must match itself only
        "runs": [glob.escape(str(p)) for p in world.runs],
        "rel": world.rel,
    }
    for key in ("topics", "run_names"):
        if getattr(world, key) is not None:
            trec[key] = getattr(world, key)
    study = {"name": spec.name, "seed": spec.seed, "topic_resamples": spec.topic_resamples}
    if spec.plugins:
        study["plugins"] = [str(p) for p in spec.plugins]
    doc = {
        "schema": SCHEMA,
        "study": study,
        "worlds": [trec],
        "measures": {"names": [m.name for m in spec.measures]},
        "criteria": [_criterion_table(c) for c in spec.criteria],
    }
    if spec.degraders:
        doc["degraders"] = [
            {"id": d.id, "method": d.method, "levels": list(d.levels), "trials": d.trials}
            for d in spec.degraders
        ]
    return tomli_w.dumps(doc)


def _criterion_table(c) -> dict:
    table = {"id": c.id, "kind": c.kind, **{k: _listed(v) for k, v in c.params}}
    given = {k: v for k, v in c.topic_filter if v is not None}
    if given:
        table["topic_filter"] = given
    return table


def _listed(value: Any) -> Any:
    return [_listed(v) for v in value] if isinstance(value, tuple) else value


__all__ = ["WORLD", "TrecStudy", "criterion", "degrader", "study_text", "trec_study"]

"""Studies: a TOML file runs a seeded, resumable grid of worlds x degraders x levels x trials
x measures x criteria, on this machine (joblib) or a Dask cluster.

>>> from metaeval.study import load_spec, run_study, load_results
>>> spec = load_spec("studies/quickstart.toml")            # doctest: +SKIP
>>> run_study(spec, "results/quickstart", jobs=2)            # doctest: +SKIP
>>> load_results("results/quickstart")                       # doctest: +SKIP

See the study file format in :mod:`metaeval.study.spec`, the seeding in
:mod:`metaeval.study.seeding`, the output folder in :mod:`metaeval.study.store`.
"""

from metaeval.study.criteria import Criterion, register_criterion, registered_criteria
from metaeval.study.plan import Plan, Task, Unit, make_plan
from metaeval.study.runner import RunSummary, default_out, run_study
from metaeval.study.saved import load_results
from metaeval.study.spec import SpecError, StudySpec, load_spec
from metaeval.study.store import Store

__all__ = [
    "load_spec",
    "StudySpec",
    "SpecError",
    "make_plan",
    "Plan",
    "Task",
    "Unit",
    "run_study",
    "RunSummary",
    "default_out",
    "load_results",
    "Store",
    "Criterion",
    "register_criterion",
    "registered_criteria",
]

"""The study file: TOML, read with :mod:`tomllib` into frozen dataclasses.

A study file describes a grid: worlds x degraders x levels x trials x measures x criteria.
Every key is checked: an unknown key or a bad value is a :class:`SpecError` that names the file
and the key path, e.g. ``study.toml: degraders[0].levels[2]: must be in (0, 100], got 120.0``.

Schema 1::

    schema = 1

    [study]
    name = "sakai-kando-2008"     # letters, digits, '.', '_' and '-'
    seed = 20080601               # the study seed: every random stream derives from it
    description = "..."           # optional
    plugins = ["my_measures.py"]  # optional: files registering measures, degraders, criteria
    confidence = 0.95             # optional: the confidence of every interval and verdict
    topic_resamples = 200         # optional: paired bootstrap resamples of the topics of each
                                  # world instance, on which every statistic is recomputed

    [[worlds]]                    # a TREC collection ...
    id = "robust03"
    kind = "trec"
    qrels = "qrels.txt"           # paths are relative to the study file
    runs = "runs/*.gz"            # a glob, or a list of files and globs
    topics = "601-650"            # optional: ranges, a list, or a file of ids
    run_names = ["a", "b"]        # optional: only these runs
    rel = 1                       # optional: relevance level of binary measures
    top_grades = 2                # optional: keep the 2 highest grades, lower ones -> 0
    depth = 1000                  # optional: evaluate the top DEPTH documents only
    best_runs = { n = 15, by = "AP" }  # optional: only the 15 runs with the best mean AP

    [[worlds]]                    # ... or a simulated one, with its truth
    id = "sim"
    kind = "simulator"
    preset = "trec_like"
    n_topics = 50
    n_systems = 30
    replicates = 5                # independent draws of the world
    params = { pool_depth = 50 }  # optional: world parameters replacing the preset's, or
                                  # the path of metaeval calibrate's params.json

    [[degraders]]
    id = "bv"                     # optional, default: the method
    method = "stratified"
    levels = [90, 70, 50, 30, 10] # the degrader's levels (rates, depths, ...)
    trials = 10                   # random repetitions (1 for deterministic degraders)
    rounding = "trunc"            # any other key is a parameter of the degrader

    [measures]
    names = ["AP", "AP'", "Q(gains={1:1,2:3})",
             { name = "AP", aggregate = "gmean", label = "GMAP" }]  # a measure, aggregated
    aggregate = "mean"            # optional: mean, gmean, logit, median (for every measure)
    missing = "zero"              # optional: a topic a run did not answer scores 0 (or skip)

    [[criteria]]
    kind = "robustness"
    id = "tau"                    # optional, default: the kind
    levels = "all"                # optional: "all", or a list of levels and "full"
    topic_filter = { grade = 2, at_most = 5 }   # optional: topics with <= 5 docs of grade >= 2
    worlds = ["robust03"]         # optional: only on these worlds (default: every world)
    statistics = ["tau_b", "tau_ap"]            # any other key is a parameter of the criterion

The reading is in four modules: :mod:`~metaeval.study.spec.table` (TOML tables, checked key by
key), :mod:`~metaeval.study.spec.model` (the dataclasses a study file becomes),
:mod:`~metaeval.study.spec.worlds` (``[[worlds]]``) and :mod:`~metaeval.study.spec.load` (the
whole file, :func:`load_spec`); :mod:`~metaeval.study.spec.retarget` replaces worlds of a file
on the command line (``--world``).
"""

from metaeval.study.spec.load import load_spec, tomllib
from metaeval.study.spec.model import (
    DEFAULT_CONFIDENCE,
    DEFAULT_TOPIC_RESAMPLES,
    FULL,
    SCHEMA,
    ClaimSpec,
    CriterionSpec,
    DegraderSpec,
    MeasureSpec,
    ScoresWorld,
    SimWorld,
    StudySpec,
    TrecWorld,
    World,
    canonical_json,
    file_digest,
    provides,
    spec_as_dict,
    study_file,
    toml_value,
)
from metaeval.study.spec.table import SpecError

__all__ = [
    "SCHEMA",
    "FULL",
    "DEFAULT_CONFIDENCE",
    "DEFAULT_TOPIC_RESAMPLES",
    "SpecError",
    "TrecWorld",
    "SimWorld",
    "ScoresWorld",
    "World",
    "DegraderSpec",
    "CriterionSpec",
    "MeasureSpec",
    "ClaimSpec",
    "StudySpec",
    "load_spec",
    "provides",
    "file_digest",
    "canonical_json",
    "toml_value",
    "spec_as_dict",
    "study_file",
    "tomllib",
]

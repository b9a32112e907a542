"""What a report card runs: the battery of criteria a measure is ranked on, and the study
file that computes them on a simulated world or a world of a study file."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

from metaeval.study.spec import toml_value

#: (criterion, statistic, against, level, x, higher is better, short label, what it measures)
BATTERY = [
    (
        "robustness",
        "tau_b",
        "full",
        "lowest:sampled",
        None,
        True,
        "tau vs full, 10% judged",
        "tau_b with its own full ranking, 10% of the judgments (stratified)",
    ),
    (
        "robustness",
        "tau_b",
        "full",
        "lowest:pool",
        None,
        True,
        "tau vs full, depth-5 pool",
        "tau_b with its own full ranking, a depth-5 pool",
    ),
    (
        "robustness",
        "tau_b",
        "truth",
        "full",
        None,
        True,
        "tau vs truth, full",
        "tau_b with its ranking under the true judgments (simulated worlds)",
    ),
    (
        "discriminative_power",
        "power",
        "",
        "full",
        None,
        True,
        "power, full",
        "discriminative power, full judgments (paired bootstrap, alpha 0.05)",
    ),
    (
        "discriminative_power",
        "power",
        "",
        "lowest:sampled",
        None,
        True,
        "power, 10% judged",
        "discriminative power, 10% of the judgments",
    ),
    (
        "stability",
        "tau_subset",
        "",
        "full",
        10,
        True,
        "tau, 10 topics",
        "tau_b between the ranking on 10 random topics and on all topics",
    ),
    (
        "informativeness",
        "rms",
        "",
        "full",
        1,
        False,
        "RMS, grade >= 1",
        "RMS error of the max-ent precision-recall curve, grade >= 1",
    ),
    (
        "reliability",
        "erho2",
        "",
        "full",
        None,
        True,
        "E(rho^2), all topics",
        "reliability of its ranking of the systems with the world's topics (generalizability "
        "coefficient E(rho^2))",
    ),
]

#: The best value a battery statistic can take, and what reaching it means: an interval that
#: reaches it cannot tell measures apart.
BOUNDS = {
    "tau_b": (1.0, "tau 1 (the same ranking)"),
    "tau_subset": (1.0, "tau 1 (the same ranking)"),
    "power": (1.0, "power 1 (every pair of systems told apart)"),
    "rms": (0.0, "RMS 0 (the precision-recall curve exactly)"),
    "erho2": (1.0, "E(rho^2) 1 (a perfectly reliable ranking)"),
}
#: The statistics that share one axis in the card's figure (one unit, one scale).
SCALES = {
    "tau_b": "tau",
    "tau_subset": "tau",
    "power": "power",
    "rms": "rms",
    "erho2": "reliability",
}
#: A difference smaller than this is rounding (a tau of 0.9999999999999999 is 1): it never
#: orders two measures, nor keeps a value off its bound.
NOISE = 1e-9


def _world_block(world: str) -> str:
    """A TOML [[worlds]] block: a simulator preset, or ``STUDY.toml:WORLD_ID`` (a world of a
    study file, as :func:`metaeval.study.load_spec` reads it: its paths absolute)."""
    from metaeval.study import load_spec
    from metaeval.study.spec import canonical_json
    from simulators.worlds import PRESETS

    if world in PRESETS:
        return (
            f'[[worlds]]\nid = "{world}"\nkind = "simulator"\npreset = "{world}"\n'
            "n_topics = 50\nn_systems = 30\nreplicates = 2\n"
        )
    path, _, wid = world.rpartition(":")
    if path and not Path(path).is_file():
        what = "is a directory" if Path(path).is_dir() else "no such file"
        raise ValueError(f"--world {world}: {path}: {what} (a study file was expected)")
    if not path:
        raise ValueError(
            f"--world must be a simulator preset ({', '.join(sorted(PRESETS))}) "
            f"or STUDY.toml:WORLD_ID, got {world!r}"
        )
    spec = load_spec(path)
    ids = [w.id for w in spec.worlds]
    if wid not in ids:
        raise ValueError(f"{path} has no world {wid!r}; worlds: {', '.join(ids)}")
    w = spec.world(wid)
    # its kind, and every key that is not at its default (a relevance level the file states
    # is kept even at 1: it is the collection's convention)
    keys = {"kind": w.kind} | {
        f.name: getattr(w, f.name)
        for f in dataclasses.fields(w)
        if f.init and f.name != "rel_stated" and getattr(w, f.name) != f.default
    }
    if getattr(w, "rel_stated", False):
        keys["rel"] = w.rel
    values = json.loads(canonical_json(keys))
    return "[[worlds]]\n" + "".join(f"{k} = {toml_value(v)}\n" for k, v in values.items())


def card_study(
    measure: str,
    against: list[str],
    world: str = "trec_like",
    plugins: list[str] = (),
    seed: int = 2024,
) -> str:
    """The study file (TOML text) of a measure's report card."""
    from metaeval.measures import canonical_name

    # measures keep the spelling they were given as their label (RBP(p=0.8) stays that,
    # where its canonical name, RBP, would hide the default p)
    given = [measure] + [m for m in against if canonical_name(m) != canonical_name(measure)]
    given = list({canonical_name(m): m.strip() for m in reversed(given)}.values())[::-1]
    names = [canonical_name(m) for m in given]
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", given[0]).strip("-")[:40] or "measure"
    lines = [
        "schema = 1",
        "",
        "[study]",
        f'name = "card-{slug}"',
        f"seed = {seed}",
        f'description = "Report card of {given[0]} against {", ".join(given[1:])}."',
        f"plugins = {json.dumps([str(Path(p).resolve()) for p in plugins])}",
        "",
        _world_block(world),
        '[[degraders]]\nid = "sampled"\nmethod = "stratified"\nlevels = [50, 20, 10]\ntrials = 5\n',
        '[[degraders]]\nid = "pool"\nmethod = "pool_depth"\nlevels = [20, 10, 5]\n',
        "[measures]",
        "names = ["
        + ", ".join(
            f"{{ name = {json.dumps(n)}, label = {json.dumps(g)} }}" for n, g in zip(names, given)
        )
        + "]",
        "",
        '[[criteria]]\nkind = "robustness"\nagainst = ["full", "truth"]\n'
        'statistics = ["tau_b", "tau_ap"]\n',
        '[[criteria]]\nkind = "discriminative_power"\nB = 500\nlevels = ["full", "10"]\n',
        '[[criteria]]\nkind = "stability"\nsizes = [5, 10, 20]\nrepeats = 30\n',
        '[[criteria]]\nkind = "informativeness"\n',
        '[[criteria]]\nkind = "reliability"\n',
        '[[criteria]]\nkind = "agreement"\nstatistics = ["tau_b", "tau_ap"]\n',
    ]
    return "\n".join(lines)

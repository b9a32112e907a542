"""The study file: every key checked, errors naming the file and the key path."""

from __future__ import annotations

from pathlib import Path

import pytest

from metaeval.study import SpecError, load_spec
from tests.study.conftest import SMALL, write_spec

MEASURES = '["AP", "P@5"]'


def spec_text(**replace) -> str:
    text = SMALL.format(measures=MEASURES)
    for old, new in replace.items():
        old = old.replace("__", " ")
        assert old in text, old
        text = text.replace(old, new)
    return text


def test_small_spec_loads(tmp_path):
    spec = load_spec(write_spec(tmp_path, spec_text()))
    assert spec.name == "small" and spec.seed == 7
    assert [w.id for w in spec.worlds] == ["sim"]
    assert spec.degraders[0].levels == (50, 20)
    assert spec.labels == ("AP", "P@5")
    assert [c.kind for c in spec.criteria] == [
        "robustness",
        "discriminative_power",
        "significance_changes",
        "stability",
        "agreement",
    ]


@pytest.mark.parametrize(
    "old, new, where",
    [
        ("levels = [50, 20]", "levels = [50, 120]", r"degraders\[0\]\.levels\[1\]"),
        ("levels = [50, 20]", "levels = []", r"degraders\[0\]\.levels: must list"),
        ("trials = 2", "trials = 0", r"degraders\[0\]\.trials: must be a positive integer"),
        ("trials = 2", "trials = 2\nbogus = 1", r"degraders\[0\]"),
        (
            'method = "stratified"',
            'method = "stratify"',
            r"degraders\[0\]\.method: unknown degrader",
        ),
        ("seed = 7", "seed = -1", r"study\.seed: must be a non-negative integer"),
        ("seed = 7", 'seed = "7"', r"study\.seed: must be an integer"),
        ('name = "small"', 'name = "my study"', r"study\.name"),
        ("n_topics = 10", "n_topics = 0", r"worlds\[0\]\.n_topics"),
        ('preset = "trec_like"', 'preset = "trec"', r"worlds\[0\]\.preset: must be one of"),
        ("rel_median = 15.0", "rel_mediam = 15.0", r"worlds\[0\]\.params\.rel_mediam: unknown"),
        ('kind = "simulator"', 'kind = "simulated"', r"worlds\[0\]\.kind"),
        ("B = 200", "B = 0", r"criteria\[1\]\.B"),
        (
            'kind = "agreement"',
            'kind = "agreement"\nstatistics = ["rho"]',
            r"criteria\[4\]\.statistics",
        ),
        ('kind = "agreement"', 'kind = "agreemnt"', r"criteria\[4\]\.kind: unknown criterion"),
        (
            'kind = "robustness"',
            'kind = "robustness"\nlevels = [30]',
            r"criteria\[0\]\.levels\[0\]",
        ),
        (
            'kind = "robustness"',
            'kind = "robustness"\nsizes = [3]',
            r"criteria\[0\]\.sizes: not a parameter",
        ),
        ("schema = 1", "schema = 2", r"schema: this metaeval reads schema 1"),
        ("[study]", "[study]\ncolour = 1", r"study\.colour: unknown key"),
        ("n_systems = 6", "n_systems = 1", r"worlds\[0\]\.n_systems: must be at least 2"),
    ],
)
def test_errors_name_the_key_path(tmp_path, old, new, where):
    text = SMALL.format(measures=MEASURES)
    assert old in text
    path = write_spec(tmp_path, text.replace(old, new, 1))
    with pytest.raises(SpecError, match=r"^study\.toml: " + where):
        load_spec(path)


def test_bad_measure_names_its_index(tmp_path):
    path = write_spec(tmp_path, SMALL.format(measures='["AP", "P@x"]'))
    with pytest.raises(SpecError, match=r"measures\.names\[1\]"):
        load_spec(path)


def test_duplicate_ids(tmp_path):
    text = SMALL.format(measures=MEASURES) + '\n[[criteria]]\nkind = "agreement"\n'
    with pytest.raises(SpecError, match=r"criteria\[5\]: id 'agreement' is used twice"):
        load_spec(write_spec(tmp_path, text))


def test_measure_names_are_canonical(tmp_path):
    path = write_spec(tmp_path, SMALL.format(measures='["Q(gains={1:1,2:3},beta=1)", "P@5"]'))
    assert load_spec(path).labels[0] == "Q(gains={1:1,2:3})"


def test_not_toml(tmp_path):
    with pytest.raises(SpecError, match="not valid TOML"):
        load_spec(write_spec(tmp_path, "schema = = 1"))


def trec_spec(trec_files, *, measures: str, criterion: str, extra: str = "") -> str:
    """A study of one TREC world on the test collection's files."""
    return f"""
schema = 1
[study]
name = "t"
seed = 1
[[worlds]]
id = "w"
kind = "trec"
qrels = "{trec_files}/qrels.txt"
runs = "{trec_files}/runs/*"
{extra}
[measures]
names = {measures}
[[criteria]]
kind = "{criterion}"
"""


def test_trec_world_paths_relative_to_the_file(tmp_path, trec_files):
    text = trec_spec(
        trec_files, measures='["AP"]', criterion="agreement", extra='topics = "q001,q002,q003"'
    )
    # agreement needs two measures: an error about the plan, not the file
    spec = load_spec(write_spec(tmp_path, text))
    assert len(spec.worlds[0].runs) == 8
    missing = text.replace("runs/*", "nothing/*")
    with pytest.raises(SpecError, match=r"worlds\[0\]\.runs.*matches no file"):
        load_spec(write_spec(tmp_path, missing))
    absent = text.replace("qrels.txt", "nope.txt")
    with pytest.raises(SpecError, match=r"worlds\[0\]\.qrels.*no such file"):
        load_spec(write_spec(tmp_path, absent))
    unknown = text.replace('"q001,q002,q003"', '"q001,q999"')  # found by the plan, not by the tasks
    with pytest.raises(SpecError, match=r"worlds\[0\]\.topics: .*q999"):
        load_spec(write_spec(tmp_path, unknown))


def test_a_criterion_can_run_on_some_worlds_only(tmp_path):
    from metaeval.study import make_plan

    second = '[[worlds]]\nid = "other"\nkind = "simulator"\npreset = "trec_like"\nn_topics = 8\nn_systems = 5\n\n[[degraders]]'
    text = spec_text().replace("[[degraders]]", second, 1)
    text = text.replace('kind = "stability"\n', 'kind = "stability"\nworlds = ["other"]\n')
    claim = (
        '\n[[claims]]\nid = "C"\ntext = "t"\ncheck = { kind = "threshold", criterion = "stability",'
        ' statistic = "tau_subset", measures = ["AP"], above = 0.5 }\n'
    )
    spec = load_spec(write_spec(tmp_path, text + claim))
    stability = spec.criterion("stability")
    assert stability.worlds == ("other",)
    assert list(spec.claims[0].check_dict()["worlds"]) == ["other"]  # judged where it runs
    units = make_plan(spec).units
    assert {u.world for u in units if u.criterion == "stability"} == {"other"}
    assert {u.world for u in units if u.criterion == "robustness"} == {"sim", "other"}
    # the restriction leaves what the criterion computes on its worlds unchanged
    unrestricted = load_spec(write_spec(tmp_path, text.replace('worlds = ["other"]\n', "")))
    ids = {u.id for u in make_plan(unrestricted).units if u.criterion == "stability"}
    assert {u.id for u in units if u.criterion == "stability"} < ids
    with pytest.raises(SpecError, match=r"criteria\[3\]\.worlds\[0\]: 'nope' is not a world"):
        load_spec(write_spec(tmp_path, text.replace('["other"]', '["nope"]')))
    elsewhere = claim.replace("above = 0.5", 'above = 0.5, worlds = ["sim"]')
    with pytest.raises(SpecError, match=r"does not run on world 'sim'"):
        load_spec(write_spec(tmp_path, text + elsewhere))


def test_a_claim_names_a_statistic_its_criterion_gives(tmp_path):
    claim = (
        '\n[[claims]]\nid = "C"\ntext = "t"\ncheck = { kind = "threshold", criterion = '
        '"robustness", statistic = "{stat}", measures = ["AP"], above = 0.5 }}\n'
    )
    ok = spec_text() + claim.replace("{stat}", "mean_drift").replace("}}", "}")
    assert load_spec(write_spec(tmp_path, ok)).claims[0].id == "C"
    bad = spec_text() + claim.replace("{stat}", "tau_c").replace("}}", "}")
    with pytest.raises(SpecError, match=r"claims\[0\]\.check\.statistic: .*no statistic 'tau_c'"):
        load_spec(write_spec(tmp_path, bad))


def test_a_misspelt_section_is_named_before_the_claims_that_need_it(tmp_path):
    claim = (
        '\n[[claims]]\nid = "C"\ntext = "t"\ncheck = { kind = "threshold", criterion = '
        '"robustness", statistic = "tau_b", measures = ["AP"], level = "20", above = 0.5 }\n'
    )
    text = spec_text().replace("[[degraders]]", "[[degrader]]") + claim
    with pytest.raises(
        SpecError, match=r"^study\.toml: degrader: unknown key; did you mean 'degraders'\?"
    ):
        load_spec(write_spec(tmp_path, text))


CHECK = (
    '\n[[claims]]\nid = "C"\ntext = "t"\ncheck = {{ kind = "{kind}", criterion = "robustness", '
    'statistic = "tau_b", {keys} }}\n'
)


@pytest.mark.parametrize(
    "kind, keys, where",
    [
        (
            "order",
            'greater = ["AP"], than = ["P@5"], tolerance = "x"',
            r"check\.tolerance: must be a finite number >= 0, got 'x'",
        ),
        (
            "order",
            'greater = ["AP"], than = ["P@5"], tolerance = -0.1',
            r"check\.tolerance: must be a finite number >= 0, got -0\.1",
        ),
        (
            "order",
            'like = ["AP"], than = ["P@5"], within = 0',
            r"check\.within: must be a finite number > 0, got 0",
        ),
        (
            "trend",
            'measures = ["AP"], to = "20", direction = "falls", tolerance = nan',
            r"check\.tolerance: must be a finite number >= 0, got nan",
        ),
        ("threshold", 'measures = ["AP"], above = inf', r"check\.above: must be a finite number"),
        (
            "order",
            'greater = ["AP"], than = ["P@5"], level = "50", degrader = "zz"',
            r"check\.degrader: 'zz' is not a degrader of the study; degraders: bv",
        ),
        (
            "order",
            'greater = ["AP"], than = ["AP"]',
            r"check\.than: names the same measures as greater \(AP\)",
        ),
        (
            "order",
            'greater = ["AP", "P@5"], than = ["P@5", "AP"], mode = "mean"',
            r"check\.than: names the same measures as greater",
        ),
        (
            "order",
            'greater = [], than = ["AP"]',
            r"check\.greater: must name at least one measure",
        ),
        ("threshold", "measures = [], above = 0.5", r"check\.measures: must name at least one"),
    ],
    ids=[
        "tolerance-string",
        "tolerance-negative",
        "within-zero",
        "tolerance-nan",
        "above-inf",
        "degrader-unknown",
        "measure-against-itself",
        "same-groups",
        "greater-empty",
        "measures-empty",
    ],
)
def test_a_claim_that_could_never_be_judged_is_refused(tmp_path, kind, keys, where):
    """Found when the study file is read, not left inconclusive (or failing) in the report."""
    path = write_spec(tmp_path, spec_text() + CHECK.format(kind=kind, keys=keys))
    with pytest.raises(SpecError, match=r"^study\.toml: claims\[0\]\." + where):
        load_spec(path)


def test_a_claim_names_a_degrader_of_the_study_and_its_levels(tmp_path):
    keys = 'greater = ["AP"], than = ["P@5"], level = "50", degrader = "bv", tolerance = 0.01'
    spec = load_spec(write_spec(tmp_path, spec_text() + CHECK.format(kind="order", keys=keys)))
    assert spec.claims[0].check_dict()["degrader"] == "bv"
    second = '[[degraders]]\nid = "u"\nmethod = "uniform"\nlevels = [30]\n\n[measures]'
    text = spec_text().replace("[measures]", second, 1)
    other = keys.replace('level = "50"', 'level = "30"')  # a level of degrader u, not of bv
    with pytest.raises(SpecError, match=r"check\.level: '30' is not a level of degrader 'bv'"):
        load_spec(write_spec(tmp_path, text + CHECK.format(kind="order", keys=other)))


def test_a_trec_world_needs_two_runs_and_has_no_truth(tmp_path, trec_files):
    first = sorted(Path(trec_files, "runs").iterdir())[0].name
    text = trec_spec(trec_files, measures='["AP", "P@5"]', criterion="robustness")
    one = text.replace("runs/*", f"runs/{first}")
    with pytest.raises(SpecError, match=r"worlds\[0\]\.runs: .*needs at least 2 runs"):
        load_spec(write_spec(tmp_path, one))
    truth = CHECK.format(kind="order", keys='greater = ["AP"], than = ["P@5"], against = "truth"')
    with pytest.raises(
        SpecError, match=r"claims\[0\]\.check\.against: 'truth' is known on simulated worlds only"
    ):
        load_spec(write_spec(tmp_path, text + truth))
    # with a simulated world beside it, the claim is judged there
    sim = '[[worlds]]\nid = "sim"\nkind = "simulator"\nn_topics = 8\nn_systems = 5\n[measures]'
    spec = load_spec(write_spec(tmp_path, text.replace("[measures]", sim) + truth))
    assert spec.claims[0].check_dict()["against"] == "truth"


def test_a_criterion_that_would_compute_nothing_is_refused(tmp_path, trec_files):
    # Under full judgments robustness compares only with a simulated world's truth or
    # latent effect: at full judgments alone, against the full ranking or on a TREC
    # collection, its units would be saved empty.
    from metaeval.study import make_plan

    on_trec = trec_spec(trec_files, measures='["AP"]', criterion="robustness")
    with pytest.raises(SpecError, match=r"robustness \(robustness\) runs at full judgments only"):
        make_plan(load_spec(write_spec(tmp_path, on_trec + 'levels = ["full"]\n')))
    simulated = spec_text().replace(
        'against = ["full", "truth", "effect"]', 'against = ["full"]\nlevels = ["full"]'
    )
    with pytest.raises(SpecError, match=r"against = \['full'\] on its simulator worlds"):
        make_plan(load_spec(write_spec(tmp_path, simulated)))
    # with the truth to compare with, or with damaged levels, it runs
    for fine in (
        simulated.replace('against = ["full"]', 'against = ["truth"]'),
        simulated.replace('levels = ["full"]', 'levels = "all"'),
    ):
        assert make_plan(load_spec(write_spec(tmp_path, fine))).units

"""The criteria of the statistics module in a study: error rates of the tests, reliability
(generalizability theory) and topic set size design."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval.study import SpecError, load_results, load_spec, run_study
from metaeval.study.criteria import make_criterion
from tests.study.conftest import write_spec

STUDY = """
schema = 1

[study]
name = "stats-criteria"
seed = 11
topic_resamples = 20

[[worlds]]
id = "null"
kind = "simulator"
preset = "null"
n_topics = 16
n_systems = 5
replicates = 2
params = {{ n_candidates = 300, rel_median = 15.0, depth = 100, pool_depth = 20 }}

[[worlds]]
id = "sim"
kind = "simulator"
preset = "trec_like"
n_topics = 16
n_systems = 5
replicates = 2
params = {{ n_candidates = 300, rel_median = 15.0, depth = 100, pool_depth = 20 }}

[[degraders]]
id = "bv"
method = "stratified"
levels = [50]
trials = 1

[measures]
names = ["AP", "P@5"]

[[criteria]]
kind = "error_rates"
sizes = [5, 10, 40]
repeats = 4
B = 200{error_rates}

[[criteria]]
kind = "reliability"
n_topics = [10, 50]
targets = [0.9, 0.95]{reliability}

[[criteria]]
kind = "topic_set_size"
min_diff = [0.05, 0.1]
ci_width = [0.1]{topic_set_size}
"""


def study_text(**extra) -> str:
    keys = ("error_rates", "reliability", "topic_set_size")
    return STUDY.format(**{k: "\n" + extra[k] if k in extra else "" for k in keys})


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("stats-criteria")
    spec = load_spec(write_spec(folder, study_text()))
    summary = run_study(spec, folder / "out", quiet=True)
    assert not summary.failures, summary.failures
    return spec, folder / "out"


@pytest.fixture(scope="module")
def results(saved):
    spec, out = saved
    return spec, load_results(out), load_results(out, "resamples")


def test_rows_have_the_declared_statistics(results):
    spec, res, _ = results
    for c in spec.criteria:
        declared = set(c.make().produces())
        for world in ("null", "sim"):
            got = set(res[(res["criterion"] == c.id) & (res["world"] == world)]["statistic"])
            rates = {"type1_rate", "type2_rate", "type3_rate", "power"}
            if c.kind != "error_rates":
                assert got == declared, (c.id, world)
            elif world == "null":  # every pair is null: no true difference to miss
                assert got == declared - (rates - {"type1_rate"})
            else:  # no pair of continuous effects is null
                assert got == declared - {"type1_rate"}
    assert set(res["level"]) == {"full"}  # computed under the full judgments by default


def test_error_rates_rows(results):
    _, res, resamples = results
    er = res[res["criterion"] == "error_rates"]
    # sizes above the world's 16 topics are skipped; every test at every size, measure and
    # replicate
    assert sorted(set(er["x"])) == [5.0, 10.0]
    assert set(er["other"]) == {"t", "wilcoxon", "sign", "randomization", "bootstrap"}
    null = er[(er["world"] == "null")].pivot_table(
        index=["replicate", "measure", "other", "x"], columns="statistic", values="value"
    )
    assert (null["n_null"] == 10 * 4).all() and (null["n_different"] == 0).all()
    assert np.allclose(null["type1_rate"], null["n_type1"] / null["n_null"])
    sim = er[(er["world"] == "sim")].pivot_table(
        index=["replicate", "measure", "other", "x"], columns="statistic", values="value"
    )
    assert (sim["n_different"] == 40).all()
    assert np.allclose(sim["power"] + sim["type2_rate"] + sim["type3_rate"], 1.0)
    # not recomputed on topic resamples: its uncertainty is over replicates
    assert "error_rates" not in set(resamples["criterion"])


def test_reliability_and_topic_set_size_rows(results):
    _, res, resamples = results
    rel = res[(res["criterion"] == "reliability") & (res["world"] == "sim")]
    one = rel[(rel["measure"] == "AP") & (rel["replicate"] == 0)].set_index(["statistic", "x"])
    v = one["value"]
    s, t, e = v["var_system"].iloc[0], v["var_topic"].iloc[0], v["var_residual"].iloc[0]
    assert v["erho2"].iloc[0] == pytest.approx(s / (s + e / 16))
    assert v[("erho2_at", 50.0)] == pytest.approx(s / (s + e / 50))
    assert v[("phi_at", 10.0)] == pytest.approx(s / (s + (t + e) / 10))
    assert v[("topics_erho2", 0.95)] == np.ceil(0.95 / 0.05 * e / s - 1e-9)
    assert v[("topics_erho2", 0.9)] <= v[("topics_erho2", 0.95)] <= v[("topics_phi", 0.95)]
    tss = res[(res["criterion"] == "topic_set_size") & (res["world"] == "sim")]
    w = tss[(tss["measure"] == "AP") & (tss["replicate"] == 0)].set_index(["statistic", "x"])
    w = w["value"]
    assert w["residual_variance"].iloc[0] == pytest.approx(e)  # V_E is the residual component
    assert w[("topics_paired_t", 0.1)] < w[("topics_paired_t", 0.05)]
    assert 0 < w[("power_paired_t", 0.05)] < w[("power_paired_t", 0.1)] < 1
    # both are recomputed on every topic resample
    for kind in ("reliability", "topic_set_size"):
        r = resamples[resamples["criterion"] == kind]
        assert len(r) == len(res[res["criterion"] == kind])
        values = np.stack(r["values"].to_numpy())
        assert values.shape[1] == 20
        spread = r[r["statistic"].isin(["erho2", "residual_variance"])]
        assert np.nanstd(np.stack(spread["values"].to_numpy()), axis=1).min() > 0


def test_error_rates_skip_real_collections(tmp_path, trec_files):
    text = f"""
schema = 1
[study]
name = "t"
seed = 1
topic_resamples = 0
[[worlds]]
id = "w"
kind = "trec"
qrels = "{trec_files}/qrels.txt"
rel = 1
runs = "{trec_files}/runs/*"
[measures]
names = ["AP"]
[[criteria]]
kind = "error_rates"
sizes = [5]
repeats = 2
B = 100
[[criteria]]
kind = "reliability"
"""
    spec = load_spec(write_spec(tmp_path, text))
    summary = run_study(spec, tmp_path / "out", quiet=True)
    assert not summary.failures
    res = load_results(tmp_path / "out")
    assert set(res["criterion"]) == {"reliability"}  # no truth: no error rates


@pytest.mark.parametrize(
    "criterion, line, where",
    [
        ("error_rates", "alpha = 1.5", r"criteria\[0\]\.alpha: must be in \(0, 1\)"),
        ("error_rates", "alpha = 0", r"criteria\[0\]\.alpha"),
        ("error_rates", "sizes = [5, 1]", r"criteria\[0\]\.sizes\[1\]: must be an integer >= 2"),
        ("error_rates", "sizes = []", r"criteria\[0\]\.sizes: must not be empty"),
        ("error_rates", "sizes = 10", r"criteria\[0\]\.sizes: must be a list"),
        ("error_rates", "sizes = [5, 5]", r"criteria\[0\]\.sizes: must not repeat"),
        ("error_rates", 'tests = ["t", "z"]', r"criteria\[0\]\.tests\[1\]: must be one of"),
        ("error_rates", "repeats = 0", r"criteria\[0\]\.repeats"),
        ("error_rates", "null_tolerance = -1.0", r"criteria\[0\]\.null_tolerance"),
        ("reliability", "n_topics = [0]", r"criteria\[1\]\.n_topics\[0\]"),
        ("reliability", "targets = [0.9, 1.0]", r"criteria\[1\]\.targets\[1\]"),
        ("topic_set_size", "power = 0.01", r"criteria\[2\]\.power: must be above alpha"),
        ("topic_set_size", "min_diff = [0.0]", r"criteria\[2\]\.min_diff\[0\]"),
        ("topic_set_size", "ci_width = [-0.1]", r"criteria\[2\]\.ci_width\[0\]"),
        ("topic_set_size", "alpha = 2", r"criteria\[2\]\.alpha"),
    ],
)
def test_spec_errors_name_the_parameter(tmp_path, criterion, line, where):
    # replace the criterion's own value of the key when it has one
    text = study_text(**{criterion: line})
    key = line.split(" =")[0]
    block = text.split(f'kind = "{criterion}"')[1].split("[[criteria]]")[0]
    for old in [b for b in block.splitlines() if b.startswith(f"{key} =") and b != line]:
        text = text.replace(old + "\n", "", 1)
    with pytest.raises(SpecError, match=r"^study\.toml: " + where):
        load_spec(write_spec(tmp_path, text))


def test_a_claim_on_an_undeclared_statistic_is_an_error(tmp_path):
    claim = """
[[claims]]
id = "E1"
text = "x"
check = { kind = "threshold", criterion = "error_rates", statistic = "type4_rate", measures = ["AP"], below = 0.06 }
"""
    with pytest.raises(SpecError, match="gives no statistic 'type4_rate'"):
        load_spec(write_spec(tmp_path, study_text() + claim))


def test_declared_statistics_follow_the_parameters():
    assert "erho2_at" not in make_criterion("reliability", n_topics=[]).produces()
    assert "topics_phi" not in make_criterion("reliability", targets=[]).produces()
    tss = make_criterion("topic_set_size", ci_width=[]).produces()
    assert "topics_ci" not in tss and "topics_anova" in tss
    assert not make_criterion("error_rates").resampled
    assert make_criterion("reliability").resampled and make_criterion("topic_set_size").resampled


def test_the_report_shows_each_statistic_with_its_interval(saved):
    from metaeval.report import build

    _, blocks, frames = build(saved[1])
    headings = [b.text for b in blocks if b.kind == "heading"]
    for title in (
        "Error rates of the tests",
        "Reliability (generalizability theory)",
        "Topic-set size",
    ):
        assert title in headings
    tables = {b.name: b.frame for b in blocks if b.kind == "table"}
    rates = tables["error_rates"]
    assert set(rates["test"]) == {"t", "wilcoxon", "sign", "randomization", "bootstrap"}
    assert rates["type I"].dropna().str.fullmatch(r"\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]").all()
    reliability = tables["reliability"]
    assert reliability["E(rho^2)"].str.contains(r"\[").all()
    # the interval of E(rho^2) is the summary's
    s = frames["summary"]
    row = s[(s["statistic"] == "erho2") & (s["world"] == "sim") & (s["measure"] == "AP")]
    assert (
        f"{row['low'].iloc[0]:.3f}"
        in reliability.set_index(["world", "measure"]).loc[("sim", "AP"), "E(rho^2)"]
    )

"""Top-heaviness curves (Sakai & Kando 2008, Fig. 1): one relevant document moving from rank 1 to 20."""

from __future__ import annotations

import math

import numpy as np
import pytest

from metaeval.measures.curves import plot_top_heaviness, top_heaviness, top_heaviness_world


@pytest.fixture(scope="module")
def curves():
    return top_heaviness()


def test_shape_and_columns(curves):
    assert list(curves.columns) == ["measure", "n_relevant", "rank", "value", "relative"]
    assert set(curves["measure"]) == {"RBP(p=0.5)", "RBP", "RBP(p=0.95)", "AP", "Q", "nDCG"}
    assert len(curves) == 6 * 2 * 20
    assert sorted(curves["n_relevant"].unique()) == [10, 100]
    assert (
        curves.groupby(["measure", "n_relevant"])["rank"]
        .apply(list)
        .map(lambda r: r == list(range(1, 21)))
        .all()
    )


def _curve(frame, measure, big_r):
    sub = frame[(frame["measure"] == measure) & (frame["n_relevant"] == big_r)]
    return sub.sort_values("rank")["value"].to_numpy()


@pytest.mark.parametrize("big_r", [10, 100])
def test_values_follow_the_formulas(curves, big_r):
    k = np.arange(1, 21)
    np.testing.assert_allclose(_curve(curves, "AP", big_r), 1 / (k * big_r), rtol=1e-12)
    for p, name in ((0.5, "RBP(p=0.5)"), (0.8, "RBP"), (0.95, "RBP(p=0.95)")):
        np.testing.assert_allclose(_curve(curves, name, big_r), (1 - p) * p ** (k - 1), rtol=1e-12)
    ideal = sum(1 / math.log2(i + 1) for i in range(1, big_r + 1))
    np.testing.assert_allclose(
        _curve(curves, "nDCG", big_r), 1 / np.log2(k + 1) / ideal, rtol=1e-12
    )
    # Q with gain 1: BR(k) = (1 + 1)/(k + CG*(k)), CG*(k) = min(k, R).
    np.testing.assert_allclose(
        _curve(curves, "Q", big_r), 2 / (k + np.minimum(k, big_r)) / big_r, rtol=1e-12
    )


def test_top_heaviness_ordering(curves):
    # Share of the rank-1 value left at rank 10: 0.5^9 < 1/10 (AP) < 0.8^9 < 1/log2(11) < 0.95^9.
    at10 = curves[(curves["rank"] == 10) & (curves["n_relevant"] == 10)].set_index("measure")
    rel = at10["relative"]
    assert rel["RBP(p=0.5)"] < rel["AP"] < rel["RBP"] < rel["nDCG"] < rel["RBP(p=0.95)"]
    assert rel["AP"] == pytest.approx(0.1)
    assert rel["nDCG"] == pytest.approx(1 / math.log2(11))
    # Q equals AP while the document is within the top R, then decays more slowly.
    r10 = curves[curves["n_relevant"] == 10].pivot(index="rank", columns="measure", values="value")
    np.testing.assert_allclose(r10.loc[1:10, "Q"], r10.loc[1:10, "AP"], rtol=1e-12)
    assert (r10.loc[11:, "Q"] > r10.loc[11:, "AP"]).all()
    assert (
        curves["relative"].groupby([curves["measure"], curves["n_relevant"]]).first() == 1
    ).all()


def test_world_is_what_it_claims():
    qrels, run, cells = top_heaviness_world((3,), max_rank=4)
    assert len(cells) == 4
    d = run.to_dict()
    for topic, rank in zip(cells["topic"], cells["rank"]):
        ordered = sorted(d[topic], key=lambda doc: -d[topic][doc])
        assert ordered.index("rel0") == rank - 1 and len(ordered) == 4
    assert qrels.to_dict()[cells["topic"][0]] == {
        "rel0": 1,
        "rel1": 1,
        "rel2": 1,
        "non0": 0,
        "non1": 0,
        "non2": 0,
        "non3": 0,
    }


def test_figure(tmp_path, curves):
    fig = plot_top_heaviness(curves)
    assert len(fig.axes) == 2
    assert [ax.get_title() for ax in fig.axes] == ["R = 10", "R = 100"]
    assert len(fig.axes[0].get_lines()) >= 6
    out = tmp_path / "curves.png"
    fig.savefig(out)
    assert out.stat().st_size > 1000
    rel = plot_top_heaviness(measures=["AP", "nDCG"], n_relevant=(5,), max_rank=8, y="relative")
    assert len(rel.axes) == 1


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_relevant": (0,)}, "n_relevant must be positive integers"),
        ({"max_rank": 0}, "max_rank must be a positive integer"),
        ({"measures": []}, "measures is empty"),
    ],
)
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        top_heaviness(**kwargs)
    with pytest.raises(ValueError, match="y must be"):
        plot_top_heaviness(y="log")

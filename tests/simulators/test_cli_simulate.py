"""``metaeval simulate`` and ``metaeval degrade``, run as the console script runs them."""

import json

import numpy as np
import pytest

import metaeval
from simulators import StratifiedSampling, UniformSampling, make_world

SMALL = [
    "--param",
    "n_candidates=300",
    "--param",
    "depth=100",
    "--param",
    "pool_depth=20",
    "--param",
    "team_size=2",
]


def simulate(cli, out, seed=7, *extra):
    result = cli(
        [
            "simulate",
            "--preset",
            "dl_like",
            "--topics",
            "5",
            "--systems",
            "4",
            "--seed",
            str(seed),
            "--out",
            str(out),
            *SMALL,
            *extra,
        ],
    )
    assert result.exit_code == 0, result.output
    return result


def folder_bytes(folder):
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_simulate_writes_world_and_is_seeded(cli, tmp_path):
    simulate(cli, tmp_path / "a")
    simulate(cli, tmp_path / "b")
    simulate(cli, tmp_path / "c", 8)
    a, b, c = (folder_bytes(tmp_path / x) for x in "abc")
    assert set(a) == {
        "truth.qrels",
        "qrels.txt",
        "world.json",
        "runs/sys001.run",
        "runs/sys002.run",
        "runs/sys003.run",
        "runs/sys004.run",
    }
    assert a == b
    assert a["truth.qrels"] != c["truth.qrels"] and a["runs/sys001.run"] != c["runs/sys001.run"]
    meta = json.loads(a["world.json"])
    assert meta["preset"] == "dl_like" and meta["seed"] == 7
    assert meta["params"]["pool_depth"] == 20 and meta["params"]["n_candidates"] == 300
    assert set(meta["groups"]) == {"sys001", "sys002", "sys003", "sys004"}
    # The files are the world the library makes with the same seed.
    w = make_world(
        "dl_like",
        n_topics=5,
        n_systems=4,
        rng=np.random.default_rng(7),
        n_candidates=300,
        depth=100,
        pool_depth=20,
        team_size=2,
    )
    assert metaeval.read_qrels(tmp_path / "a" / "qrels.txt") == w.qrels
    assert metaeval.read_qrels(tmp_path / "a" / "truth.qrels") == w.truth
    run = metaeval.read_run(tmp_path / "a" / "runs" / "sys002.run")
    assert run.to_df().equals(w.runs["sys002"].to_df())


def test_simulate_bad_input(cli, tmp_path):
    r = cli(["simulate", "--preset", "nope", "--out", str(tmp_path / "x")])
    assert r.exit_code == 2 and "--preset must be one of" in r.output
    r = cli(["simulate", "--out", str(tmp_path / "x"), "--param", "bogus=1"])
    assert r.exit_code == 2 and "unknown world parameter" in r.output
    r = cli(["simulate", "--out", str(tmp_path / "x"), "--param", "depth"])
    assert r.exit_code == 2 and "NAME=VALUE" in r.output


@pytest.fixture(scope="module")
def world_dir(cli, tmp_path_factory):
    out = tmp_path_factory.mktemp("world")
    simulate(cli, out)
    return out


def degrade(cli, world_dir, tmp_path, *args):
    out = tmp_path / "d.qrels"
    r = cli(["degrade", str(world_dir / "qrels.txt"), *args, "--out", str(out)])
    return r, out


def test_degrade_stratified_matches_library(cli, world_dir, tmp_path):
    r, out = degrade(
        cli, world_dir, tmp_path, "--method", "stratified", "--rate", "10", "--seed", "7"
    )
    assert r.exit_code == 0, r.output
    q = metaeval.read_qrels(world_dir / "qrels.txt")
    j = StratifiedSampling(rates=[10]).generate(q, rng=np.random.default_rng(7))[0]
    assert metaeval.read_qrels(out) == j.to_qrels()
    assert "stratified level 10:" in r.output
    (tmp_path / "again").mkdir()
    r2, out2 = degrade(
        cli, world_dir, tmp_path / "again", "--method", "stratified", "--rate", "10", "--seed", "7"
    )
    assert out2.read_bytes() == out.read_bytes()


def test_degrade_takes_the_other_options_of_its_degrader(cli, world_dir, tmp_path):
    args = ("--rate", "10", "--seed", "7", "--param", "strata=grade", "--param", "rounding=round")
    r, out = degrade(cli, world_dir, tmp_path, *args)
    assert r.exit_code == 0, r.output
    q = metaeval.read_qrels(world_dir / "qrels.txt")
    sampler = StratifiedSampling(rates=[10], strata="grade", rounding="round")
    assert (
        metaeval.read_qrels(out) == sampler.generate(q, rng=np.random.default_rng(7))[0].to_qrels()
    )
    for param, said in (
        ("strata=bogus", "--param strata=bogus: strata must be one of"),
        ("nope=1", "--param nope=1: stratified: nope is not a parameter"),
        ("rates=[5]", "--param rates=[5]: rates is set by its own option (--rate)"),
    ):
        r, _ = degrade(cli, world_dir, tmp_path, "--rate", "10", "--seed", "7", "--param", param)
        assert r.exit_code == 2 and said in r.output, r.output


def test_degrade_uniform_writes_unjudged(cli, world_dir, tmp_path):
    r, out = degrade(cli, world_dir, tmp_path, "--method", "uniform", "--rate", "30", "--seed", "1")
    assert r.exit_code == 0, r.output
    q = metaeval.read_qrels(world_dir / "qrels.txt")
    d = metaeval.read_qrels(out)
    j = UniformSampling(rates=[30]).generate(q, rng=np.random.default_rng(1))[0]
    assert d == j.to_qrels() and len(d) == len(q) and (d.grades == -1).sum() > 0


def test_degrade_pooling_methods_need_runs(cli, world_dir, tmp_path):
    runs = sorted((world_dir / "runs").glob("*.run"))
    r, _ = degrade(cli, world_dir, tmp_path, "--method", "pool_depth", "--depth", "5")
    assert r.exit_code == 2 and "--runs" in r.output
    args = [a for p in runs for a in ("--runs", str(p))]
    r, out = degrade(cli, world_dir, tmp_path, "--method", "pool_depth", "--depth", "5", *args)
    assert r.exit_code == 0, r.output
    q = metaeval.read_qrels(world_dir / "qrels.txt")
    assert 0 < len(metaeval.read_qrels(out)) < len(q)
    r, out = degrade(
        cli,
        world_dir,
        tmp_path,
        "--method",
        "leave_one_group_out",
        "--group",
        "team01",
        "--groups",
        str(world_dir / "world.json"),
        *args,
    )
    assert r.exit_code == 0, r.output
    assert len(metaeval.read_qrels(out)) < len(q)
    r, _ = degrade(
        cli,
        world_dir,
        tmp_path,
        "--method",
        "leave_one_group_out",
        "--group",
        "nope",
        "--groups",
        str(world_dir / "world.json"),
        *args,
    )
    assert r.exit_code == 2 and "not a team" in r.output
    # one team holding every run: leaving it out removes every judgment -> clear error
    one = tmp_path / "one.txt"
    one.write_text("".join(f"sys00{i} all\n" for i in range(1, 5)))
    r, _ = degrade(
        cli,
        world_dir,
        tmp_path,
        "--method",
        "leave_one_group_out",
        "--group",
        "all",
        "--groups",
        str(one),
        *args,
    )
    assert r.exit_code == 2 and "removes every judgment" in r.output
    r, out = degrade(
        cli,
        world_dir,
        tmp_path,
        "--method",
        "fewer_teams",
        "--k",
        "1",
        "--groups",
        str(world_dir / "world.json"),
        *args,
    )
    assert r.exit_code == 0, r.output


def test_degrade_bad_method_and_missing_rate(cli, world_dir, tmp_path):
    r, _ = degrade(cli, world_dir, tmp_path, "--method", "nope")
    assert r.exit_code == 2 and "--method must be one of" in r.output
    r, _ = degrade(cli, world_dir, tmp_path, "--method", "stratified")
    assert r.exit_code == 2 and "--rate is required" in r.output
    r, _ = degrade(cli, world_dir, tmp_path, "--method", "stratified", "--rate", "0")
    assert r.exit_code == 2 and "rates" in r.output
    r, out = degrade(cli, world_dir, tmp_path, "--method", "assessor_noise", "--rate", "0.2")
    assert r.exit_code == 0, r.output
    assert len(metaeval.read_qrels(out)) == len(metaeval.read_qrels(world_dir / "qrels.txt"))

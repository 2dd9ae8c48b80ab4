"""``[packet] init = "fluid"``: a replication starts with flows in progress drawn from the
fluid Markov model's stationary law π (BR §4.1), not measured. Its law against the
solver's, determinism, the default left alone (keys, records, stored scenario), bad input,
and the option reaching the engine from a scenario file and from the command line."""

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import FIG3_CLASSES, make_scenario
from naive import generator_flux
from scipy import stats as sps

from mrfq import simulate
from mrfq.errors import InputError
from mrfq.fluid.markov import service_rates, stationary_distribution
from mrfq.kinds.packet import initial_law, packet_point
from mrfq.packet.engine import run_replication
from mrfq.packet.initial import draw_initial_flows
from mrfq.packet.model import PacketModel
from mrfq.scenario import scenario_from_dict
from mrfq.seeds import run_seed as replication_seed
from mrfq.stats import replication_table
from mrfq.sweeps import Point, point_key, run_sweep

LOAD = 0.5  # on the max axis: a small Markov solve (a second or two)


def _fluid(**packet):
    return make_scenario(init="fluid", **packet)


def test_stationary_distribution_is_the_solvers():
    """π sums to 1 and its mean is the solver's E[n_k] (up to the truncation the
    solver's tail correction adds: below 1e-3 relative at tolerance 1e-5)."""
    s = make_scenario()
    rho = s.class_loads(LOAD)
    states, pi = stationary_distribution("bmf", s.requirements, rho, s.weights, 1e-5)
    assert states.shape == (pi.shape[0], 3) and np.isclose(pi.sum(), 1.0, atol=1e-12)
    # global balance π Q = 0 on the solver's truncation, with Q built by the twin (the
    # solver clips π at 0, so a sign check could not fail; the balance can)
    flux = generator_flux("bmf", s.requirements, rho, states, pi, s.weights)
    assert np.abs(flux).sum() < 1e-10, np.abs(flux).sum()
    solved = service_rates("bmf", s.requirements, rho, s.weights, 1e-5)
    np.testing.assert_allclose(pi @ states, solved.mean_in_progress, rtol=1e-3)
    # the known anchor: orthogonal classes are independent M/M/1-PS queues, so π is a
    # product of geometric laws, P(n_k = i) = (1 − ρ_k) ρ_k^i
    states, pi = stationary_distribution("pf", np.eye(2), np.array([0.3, 0.6]), None, 1e-6)
    exact = (0.7 * 0.3 ** states[:, 0]) * (0.4 * 0.6 ** states[:, 1])
    np.testing.assert_allclose(pi, exact / exact.sum(), rtol=1e-6, atol=1e-12)


def test_initial_occupancy_follows_pi():
    """Over 3000 replications' draws: the per-class mean matches π's E[n_k] within 4
    standard errors, the level distribution Σ_k n_k passes a chi-square test against π's,
    and the sizes are geometric of mean m."""
    s = _fluid(mean_size=50)
    states, pi = initial_law(s, "bmf", LOAD)
    draws, sizes = [], []
    for r in range(3000):
        classes, size = draw_initial_flows(replication_seed(1, r), states, pi, 50)
        draws.append(np.bincount(classes, minlength=3))
        sizes.append(size)
    draws = np.array(draws)
    mean, var = pi @ states, pi @ states**2 - (pi @ states) ** 2
    z = (draws.mean(axis=0) - mean) / np.sqrt(var / len(draws))
    assert np.all(np.abs(z) < 4), z
    level = states.sum(axis=1)
    expected = np.bincount(level, weights=pi)
    observed = np.bincount(draws.sum(axis=1), minlength=expected.size)[: expected.size]
    cells = np.flatnonzero(expected * len(draws) >= 5)  # pool the sparse tail
    exp_cells = np.append(expected[cells], 1 - expected[cells].sum()) * len(draws)
    obs_cells = np.append(observed[cells], len(draws) - observed[cells].sum())
    keep = exp_cells > 0
    assert sps.chisquare(obs_cells[keep], exp_cells[keep]).pvalue > 1e-3
    all_sizes = np.concatenate(sizes)
    assert all_sizes.min() >= 1
    assert abs(all_sizes.mean() - 50) < 4 * 50 / np.sqrt(all_sizes.size)


def test_initial_flows_are_placed_at_zero_and_not_measured():
    """The engine with initial flows: the stream's flows are the same arrivals (times,
    classes, sizes) as without; the initial ones complete (finite, positive), and the
    stream's first flows wait behind them (their sojourns change)."""
    s = make_scenario(mean_size=20)
    model, rho, seed = PacketModel.from_scenario(s), s.class_loads(LOAD), replication_seed(1, 0)
    plain = run_replication(model, "bmf", rho, seed, flows=300, mean_size=20, window=5)
    initial = (np.array([0, 2, 0, 1]), np.array([40, 5, 300, 12]))
    early = run_replication(model, "bmf", rho, seed, flows=300, mean_size=20, window=5,
                            initial=initial)
    for name in ("arrival", "flow_class", "size"):
        np.testing.assert_array_equal(getattr(early, name), getattr(plain, name))
    assert early.completion.shape == (300,) and np.isfinite(early.completion).all()
    assert early.initial_completion.shape == (4,)
    assert (early.initial_completion > 0).all()
    assert early.initial_completion[2] > early.initial_completion[1]  # 300 packets vs 5
    assert not np.array_equal(early.completion, plain.completion)
    # none of them: the same run as without the argument, bit for bit
    none = run_replication(model, "bmf", rho, seed, flows=300, mean_size=20, window=5,
                           initial=(np.zeros(0, np.int64), np.zeros(0, np.int64)))
    np.testing.assert_array_equal(none.completion, plain.completion)
    assert none.services == plain.services


def test_in_progress_average_counts_the_initial_flows_while_they_last():
    arrival = np.array([1.0, 2.0, 3.0, 4.0])
    completion = np.array([5.0, 6.0, 7.0, 8.0])
    flow_class = np.array([0, 0, 0, 0])
    size = np.ones(4)
    args = (arrival, completion, flow_class, size, ["a"], np.array([0.5]), 1.0, 0.0, 2)
    without = replication_table(*args)
    with_initial = replication_table(*args, initial=(np.array([0, 0]), np.array([2.0, 9.0])))
    # over [1, 4]: the one ending at 2 adds 1/3, the one ending at 9 adds 1
    assert with_initial["mean_in_progress"].iloc[0] == pytest.approx(
        without["mean_in_progress"].iloc[0] + 1 / 3 + 1)
    assert with_initial["initial_flows"].iloc[0] == 2 and "initial_flows" not in without
    for column in ("gamma", "flows_measured", "sojourn_sum", "warmup_cut"):
        assert with_initial[column].iloc[0] == without[column].iloc[0]


def test_fluid_start_is_deterministic_and_keeps_the_arrival_stream():
    s = _fluid(flows=300, mean_size=20, warmup=0.0)
    first = packet_point(s, "bmf", LOAD, 3)
    again = packet_point(s, "bmf", LOAD, 3)  # the same record, wall time aside
    for a, b in zip(first["classes"], again["classes"], strict=True):
        assert json.dumps(a, default=float) == json.dumps(b, default=float)
    empty = packet_point(make_scenario(flows=300, mean_size=20, warmup=0.0), "bmf", LOAD, 3)
    assert all("initial_flows" not in c for c in empty["classes"])
    # same stream: every class has the same measured flows and sizes as from empty
    for a, b in zip(first["classes"], empty["classes"], strict=True):
        assert a["flows_measured"] == b["flows_measured"] and a["size_sum"] == b["size_sum"]
    # replications draw their own initial state: what each placed is the draw from π for
    # its own seed, and over 20 of them they are not all the same
    law = initial_law(s, "bmf", LOAD)
    draws = set()
    for r in range(20):
        record = first if r == 3 else packet_point(s, "bmf", LOAD, r)
        placed = [c["initial_flows"] for c in record["classes"]]
        classes, _ = draw_initial_flows(replication_seed(s.packet.seed, r), *law, 20)
        assert placed == np.bincount(classes, minlength=3).tolist(), r
        draws.add(tuple(placed))
    assert len(draws) > 1


def test_default_keys_records_and_stored_scenario_unchanged():
    """init = "empty" (the default, or written out): the key is the formula from before
    the option, written out here; the stored scenario has no ``init``; fluid changes the
    key, and so does the Markov tolerance then (π depends on it)."""
    from mrfq.packet.kernel import ENGINE_VERSION
    from mrfq.stats import STATS_VERSION

    base = make_scenario()
    point = Point("packet", "bmf", LOAD, 2)
    cfg = base.packet
    parts = {"resources": 2,
             "classes": [{"packets": [float(v) for v in c.packet_requirements.ravel()],
                          "probabilities": [float(v) for v in c.packet_probabilities],
                          "order": c.packet_order, "weight": c.weight, "rtt": c.rtt}
                         for c in base.classes],
             "rho": [float(v) for v in base.class_loads(LOAD)], "mean_size": cfg.mean_size,
             "window": cfg.window, "flows": cfg.flows, "seed": cfg.seed, "replication": 2,
             "engine": ENGINE_VERSION, "warmup": cfg.warmup, "batches": cfg.batches,
             "statistics": STATS_VERSION, "kind": "packet", "policy": "bmf"}
    old = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]
    assert point_key(base, point) == old
    assert point_key(make_scenario(init="empty"), point) == old
    assert "init" not in base.to_dict()["packet"]
    fluid = _fluid()
    assert point_key(fluid, point) != old
    assert fluid.to_dict()["packet"]["init"] == "fluid"
    assert scenario_from_dict(fluid.to_dict()).packet.init == "fluid"
    tighter = scenario_from_dict({**fluid.to_dict(), "fluid": {"tolerance": 1e-6}})
    assert point_key(tighter, point) != point_key(fluid, point)
    assert point_key(make_scenario(init="empty"), Point("fluid", "bmf", LOAD)) == \
        point_key(fluid, Point("fluid", "bmf", LOAD))


@pytest.mark.parametrize("packet, classes, field", [
    ({"init": "hot"}, None, "packet.init"),
    ({"init": 1}, None, "packet.init"),
    ({"init": "fluid"}, [{**FIG3_CLASSES[0], "size": {"distribution": "pareto",
                                                      "shape": 2.5}}, *FIG3_CLASSES[1:]],
     "packet.init"),
    ({"init": "fluid", "policies": ["bmf", "fifo"]}, None, "packet.init"),
])
def test_bad_init_in_a_scenario(packet, classes, field):
    with pytest.raises(InputError) as err:
        make_scenario(classes=classes, **packet)
    assert err.value.field == field


def test_bad_init_at_a_point(monkeypatch, tmp_path):
    s = make_scenario()
    with pytest.raises(InputError) as err:  # no fluid counterpart: the argument's value
        simulate(s, "fifo", LOAD, init="fluid", flows=50)
    assert err.value.field == "init"
    with pytest.raises(InputError) as err:  # the same in the scenario: the file's field
        simulate(s.with_overrides(init="fluid"), "fifo", LOAD, flows=50)
    assert err.value.field == "packet.init"
    with pytest.raises(InputError) as err:
        simulate(s, "bmf", LOAD, init="warm", flows=50)
    assert err.value.field == "init"
    # beyond the Markov solver's budget (predicted states at load 0.999 on the max axis)
    crowded = scenario_from_dict({"resources": ["cpu", "link"], "classes": FIG3_CLASSES,
                                  "load": {"values": [0.5, 0.999]},
                                  "packet": {"init": "fluid", "flows": 50}})
    with pytest.raises(InputError) as err:
        simulate(crowded, "bmf", 0.999)
    assert err.value.field == "packet.init" and "budget" in str(err.value)
    import mrfq.executor

    def computing(*args, **kwargs):
        raise AssertionError("a point was computed")

    monkeypatch.setattr(mrfq.executor, "execute", computing)
    with pytest.raises(InputError) as err:  # a sweep says so before computing anything
        run_sweep(crowded, tmp_path / "res", jobs=1, kinds=("packet",))
    assert err.value.field == "packet.init" and not (tmp_path / "res").exists()


def _run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "mrfq.cli", *args], capture_output=True,
                          text=True, cwd=cwd)


def _scenario_file(tmp_path, packet_lines):
    text = ('resources = ["cpu", "link"]\n'
            + "".join(f'[[classes]]\nname = "{c["name"]}"\nrequirements = '
                      f'{c["requirements"]}\nload_share = {c["load_share"]}\n'
                      for c in FIG3_CLASSES)
            + '[load]\nvalues = [0.5]\n[packet]\npolicies = ["bmf"]\nflows = 300\n'
            + 'mean_size = 20\nwindow = 5\n' + packet_lines)
    path = tmp_path / "s.toml"
    path.write_text(text)
    return path


def test_cli_init_reaches_the_engine(tmp_path):
    path = _scenario_file(tmp_path, "")
    out = tmp_path / "o.csv"
    result = _run("simulate", str(path), "--policy", "bmf", "--load", "0.5", "--init",
                  "fluid", "-o", str(out))
    assert result.returncode == 0, result.stderr
    header, *rows = out.read_text().splitlines()
    column = header.split(",").index("initial_flows")
    placed = [int(float(r.split(",")[column])) for r in rows]
    # the same draw through the Python API (what the engine was fed)
    s = make_scenario(flows=300, mean_size=20, window=5, init="fluid")
    classes, _ = draw_initial_flows(replication_seed(1, 0), *initial_law(s, "bmf", LOAD), 20)
    assert placed == np.bincount(classes, minlength=3).tolist()
    plain = tmp_path / "p.csv"
    assert _run("simulate", str(path), "--policy", "bmf", "--load", "0.5", "-o",
                str(plain)).returncode == 0
    assert "initial_flows" not in plain.read_text().splitlines()[0]
    bad = _run("simulate", str(path), "--policy", "bmf", "--load", "0.5", "--init", "hot")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.strip().splitlines() == [bad.stderr.strip()]
    assert bad.stderr.startswith("error: --init: ")


def test_scenario_file_init_reaches_the_sweep(tmp_path):
    path = _scenario_file(tmp_path, 'init = "fluid"\n')
    result = _run("sweep", str(path), "-o", str(tmp_path / "res"), "--jobs", "1")
    assert result.returncode == 0, result.stderr
    header, *rows = (tmp_path / "res" / "summary.csv").read_text().splitlines()
    column = header.split(",").index("initial_flows")
    packet = [r.split(",") for r in rows if r.startswith("packet")]
    assert len(packet) == 3 and all(r[column] != "" for r in packet)
    s = make_scenario(flows=300, mean_size=20, window=5, init="fluid", policies=["bmf"])
    classes, _ = draw_initial_flows(replication_seed(1, 0), *initial_law(s, "bmf", LOAD), 20)
    assert [int(float(r[column])) for r in packet] == np.bincount(classes, minlength=3).tolist()
    bad = _scenario_file(tmp_path, 'init = "warm"\n')
    result = _run("sweep", str(bad), "-o", str(tmp_path / "r2"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"error: {bad}: packet.init: ")
    assert not (tmp_path / "r2").exists()


def test_stored_records_say_what_was_placed(tmp_path):
    s = _fluid(flows=200, mean_size=20, seed=2)  # seed 2: flows placed, classes unalike
    summary = run_sweep(s, tmp_path / "r", jobs=1, kinds=("packet",))
    stored = [json.loads(p.read_text()) for p in (tmp_path / "r" / "points").iterdir()]
    placed = {}
    for record in stored:
        counts = [c["initial_flows"] for c in record["classes"]]
        expected, _ = draw_initial_flows(replication_seed(2, record["replication"]),
                                         *initial_law(s, record["policy"], LOAD), 20)
        assert counts == np.bincount(expected, minlength=3).tolist()
        total = placed.setdefault(record["policy"], np.zeros(3, np.int64))
        total += counts
    # the summary's column is the records' counts, summed over each point's replications
    assert sorted(placed) == sorted(set(summary["policy"]))
    assert all(total.sum() > 0 and total[0] != total[2] for total in placed.values())
    for policy, total in placed.items():
        rows = summary[summary["policy"] == policy]
        assert rows["class"].tolist() == s.class_names
        assert rows["initial_flows"].tolist() == total.tolist(), policy
    assert Path(tmp_path / "r" / "scenario.json").read_text().count('"init": "fluid"') == 1


def test_fluid_start_sweep_identical_over_jobs(tmp_path):
    """The same numbers with one or two worker processes (each solves π itself)."""
    s = scenario_from_dict({"resources": ["cpu", "link"], "classes": FIG3_CLASSES,
                            "load": {"values": [0.5, 0.7]},
                            "packet": {"init": "fluid", "policies": ["bmf", "drfq"],
                                       "flows": 200, "mean_size": 20, "window": 5,
                                       "replications": 2}})
    one = run_sweep(s, tmp_path / "one", jobs=1, kinds=("packet",))
    two = run_sweep(s, tmp_path / "two", jobs=2, kinds=("packet",))
    import pandas as pd

    pd.testing.assert_frame_equal(one.drop(columns="wall_s", errors="ignore"),
                                  two.drop(columns="wall_s", errors="ignore"),
                                  check_exact=True)
    assert one["initial_flows"].sum() > 0


def test_coverage_campaign_compares_the_starts(tmp_path):
    """benchmarks/interval_coverage.py --init fluid: the paired change is the mean of the
    per-run differences from the cached records of both starts."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import interval_coverage as coverage

    argv = ["--runs", "3", "--jobs", "1", "--policies", "bmf", "--loads", "0.7",
            "--mean-size", "10", "--window", "4", "--flows", "300", "--replications", "2",
            "--replication-flows", "150", "--reference-runs", "2", "--reference-factor", "2",
            "--modes", "replications", "--cache", str(tmp_path / "cache")]
    assert coverage.main(argv + ["--json", str(tmp_path / "e.json")]) == 0
    assert coverage.main(argv + ["--init", "fluid", "--json", str(tmp_path / "f.json")]) == 0
    empty = json.loads((tmp_path / "e.json").read_text())
    fluid = json.loads((tmp_path / "f.json").read_text())
    settings = {"mean_size": 10.0, "window": 4, "flows": 300, "replication_flows": 150,
                "reference_factor": 2, "warmup": "auto", "runs": 3, "replications": 2}
    for e, f in zip(empty, fluid, strict=True):
        k = int(f["class"]) - 1
        gammas, placed = {}, {}
        for init in ("empty", "fluid"):
            chosen = {**settings, "init": init}
            tables = [coverage.combine_packet_records(
                coverage.scenario_for(chosen, "replications", i),
                [json.loads(coverage.cache_path(
                    tmp_path / "cache", chosen, ("replications", "bmf", 0.7, i, r)
                ).read_text()) for r in range(2)]) for i in range(3)]
            gammas[init] = np.array([t["gamma"].iloc[k] for t in tables])
            placed[init] = [t["initial_flows"].iloc[k] for t in tables
                            if "initial_flows" in t]
        assert f["init"] == "fluid" and e["init"] == "empty"
        assert f["bias_change"] == pytest.approx(
            ((gammas["fluid"] - gammas["empty"]) / f["reference"]).mean(), rel=1e-12)
        assert np.isnan(e["bias_change"])
        # the mean over the runs of this class's flows placed at t = 0 (none from empty)
        assert placed["empty"] == [] and e["initial_flows"] == 0
        assert len(placed["fluid"]) == 3
        assert f["initial_flows"] == pytest.approx(np.mean(placed["fluid"]), rel=1e-15)
    assert sum(f["initial_flows"] for f in fluid) > 0

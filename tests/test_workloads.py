"""The ``cdf`` size law and the bundled workloads (mrfq.workloads): closed-form moments of
small tables, samples against the table's CDF (Kolmogorov–Smirnov), bad tables rejected
with one line, and a packaged scenario that uses a bundled workload end to end."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from mrfq import workloads
from mrfq.errors import InputError
from mrfq.scenario import load_scenario
from mrfq.sizes import parse_size


def test_uniform_table_has_the_uniform_moments():
    # one segment [1, 3]: uniform, mean 2, E[X²] = (3³ − 1³)/(3 · 2) = 13/3
    x, f = np.array([1.0, 3.0]), np.array([0.0, 1.0])
    assert workloads.raw_moment(x, f, 1) == pytest.approx(2.0)
    assert workloads.raw_moment(x, f, 2) == pytest.approx(13 / 3)
    law = parse_size({"distribution": "cdf", "points": [[1, 0], [3, 1]]})
    assert law.mean == pytest.approx(1.0)  # rescaled to mean 1
    assert law.scv == pytest.approx((13 / 3) / 4 - 1)  # Var/mean² = (1/3)/4 = 1/12


def test_a_table_built_with_numpy_reads_as_the_same_list():
    """From Python a CDF table is often numpy: an n × 2 array, or numpy integers in a
    list. Both were refused ("must be a list of ..." / "a pair of numbers"); numpy
    booleans still are, as Python's are."""
    listed = parse_size({"distribution": "cdf", "points": [[1, 0], [3, 1]]})
    for points in (np.array([[1, 0], [3, 1]]), [[np.int64(1), np.int64(0)], [3, 1.0]]):
        law = parse_size({"distribution": "cdf", "points": points})
        assert law == listed and law.params == listed.params
    with pytest.raises(InputError, match="must be a pair of numbers"):
        parse_size({"distribution": "cdf", "points": [[np.bool_(True), 0], [3, 1]]})


def test_an_atom_and_a_flat_stretch():
    # mass 1/2 on x = 1, none on (1, 2), 1/2 uniform on [2, 3]: mean 1/2 + 5/4 = 7/4
    law = parse_size({"distribution": "cdf", "points": [[1, 0.5], [2, 0.5], [3, 1]],
                      "rescale": False})
    assert law.mean == pytest.approx(1.75)
    draws = law.sample(np.random.default_rng(5), 20000)
    assert not ((draws > 1) & (draws < 2)).any()  # nothing where the CDF is flat
    assert np.mean(draws == 1.0) == pytest.approx(0.5, abs=0.02)
    assert draws.mean() == pytest.approx(1.75, rel=0.02)
    assert workloads.cdf(*law.values, np.array([0.5, 1.0, 1.5, 2.5, 4.0])).tolist() == [
        0.0, 0.5, 0.5, 0.75, 1.0]


@pytest.mark.parametrize("name", sorted(workloads.BUNDLED))
def test_bundled_samples_follow_their_table(name):
    law = parse_size({"distribution": "cdf", "workload": name})
    n = 20000
    draws = np.sort(law.sample(np.random.default_rng(11), n))
    ecdf = np.arange(1, n + 1) / n
    model = law.cdf(draws)
    statistic = max(np.max(ecdf - model), np.max(model - (ecdf - 1 / n)))
    assert statistic < 1.63 / np.sqrt(n)  # Kolmogorov–Smirnov at 1%
    assert law.mean == pytest.approx(1.0)
    # the table's own points: the law's CDF goes through them (after rescaling)
    x, f = workloads.bundled(name, "w", None)
    assert np.allclose(law.cdf(x / workloads.raw_moment(x, f, 1)), f)


def test_websearch_mean_is_the_published_one():
    x, f = workloads.bundled("websearch", "w", None)
    # DCTCP's web-search background flows: mean about 1.5 MB (pFabric §5 quotes 1.6 MB
    # for its trace-driven version); the table's exact mean
    assert workloads.raw_moment(x, f, 1) == pytest.approx(1.49003e6, rel=1e-5)


@pytest.mark.parametrize("spec, field, problem", [
    ({"points": [[1, 0], [1, 1]]}, "size.points", "increase strictly"),
    ({"points": [[1, 0], [2, 0.9]]}, "size.points", "last cdf value must be 1"),
    ({"points": [[1, 0.5], [2, 0.4], [3, 1]]}, "size.points", "must not decrease"),
    ({"points": [[1, 0], [2, 1.5]]}, "size.points", "in [0, 1]"),
    ({"points": [[0, 0], [2, 1]]}, "size.points", "positive"),
    ({"points": [3, 4]}, "size.points", "pair of numbers"),
    ({"points": [[1, 0], [2, 1]], "workload": "websearch"}, "size.points", "exactly one"),
    ({}, "size.points", "exactly one"),
    ({"workload": "websearh"}, "size.workload", "did you mean 'websearch'"),
    ({"file": "missing.csv"}, "size.file", "cannot read"),
])
def test_bad_tables_are_rejected(spec, field, problem):
    with pytest.raises(InputError) as err:
        parse_size({"distribution": "cdf", **spec})
    assert field in err.value.message and problem in err.value.message


def test_a_table_from_a_file(tmp_path):
    (tmp_path / "t.csv").write_text("# comment\nsize,cdf\n10,0\n20,0.5\n40,1\n")
    law = parse_size({"distribution": "cdf", "file": "t.csv", "rescale": False},
                     base_dir=tmp_path)
    assert law.mean == pytest.approx(0.5 * 15 + 0.5 * 30)
    (tmp_path / "bad.csv").write_text("size,cdf\n10,0\n20,x\n")
    with pytest.raises(InputError, match="line 3: expected two numbers"):
        parse_size({"distribution": "cdf", "file": "bad.csv"}, base_dir=tmp_path)


def test_a_bad_table_in_a_scenario_is_one_line_exit_2(tmp_path):
    text = load_scenario("websearch_mix").source
    scenario = (tmp_path / "s.toml")
    body = open(text).read().replace('workload = "websearch"', 'workload = "web"', 1)
    scenario.write_text(body)
    result = subprocess.run([sys.executable, "-m", "mrfq", "simulate", str(scenario),
                             "--policy", "bmf", "--load", "0.3"], capture_output=True,
                            text=True)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "classes[0].size.workload" in lines[0], lines


def test_packaged_workload_scenario_runs_end_to_end():
    from mrfq import simulate

    result = simulate("websearch_mix", "bmf", 0.3, flows=3000, mean_size=50)
    assert (result.classes["gamma"] > 0).all()
    sizes = result.flows["size"].to_numpy()
    # sizes in packets: the web-search law has SCV 5.5, so the spread is wide
    assert sizes.std() / sizes.mean() > 1.5


def test_the_tours_workload_scenario_runs_validates_and_plots(tmp_path):
    """``mrfq run websearch_mix`` as the README's tour runs it — flow-level fluid model,
    packet sweep, validation, plots — on one load and shorter runs (the tour's own run
    takes ~40 s): every point validates against the fluid model of the web-search law."""
    import json

    from mrfq.scenario import load_scenario

    body = open(load_scenario("websearch_mix").source).read()
    for old, new in (("values = [0.3, 0.6]", "values = [0.3]"),
                     ("flows = 100000", "flows = 20000"),
                     ('policies = ["drf", "pf", "bmf"]',
                      'policies = ["drf", "pf", "bmf"]\nflows = 100000\nreplications = 4')):
        assert old in body
        body = body.replace(old, new, 1)
    scenario = tmp_path / "websearch_small.toml"
    scenario.write_text(body)
    result = subprocess.run([sys.executable, "-m", "mrfq", "run", str(scenario), "-o",
                             str(tmp_path / "res"), "--jobs", "1"], capture_output=True,
                            text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "9/9 points pass" in result.stdout
    stored = json.loads((tmp_path / "res" / "scenario.json").read_text())
    assert {c["size"]["workload"] for c in stored["classes"]} == {"websearch"}
    for figure in ("websearch_mix.png", "websearch_mix_fluid.png", "websearch_mix_delays.png"):
        assert (tmp_path / "res" / figure).stat().st_size > 10_000

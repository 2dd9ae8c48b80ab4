"""Defects a new user of the Python API found (review of 2026-11-28, twenty-second
session): each test failed on the code before its fix."""

import pytest

import mrfq
from mrfq.errors import InputError


def test_a_run_of_fewer_flows_than_batches_reads_back():
    """to_dict() wrote the default ``batches = 20`` as if the user had set it, so a
    scenario of 10 flows did not read back, and ``mrfq.run`` of such a scenario failed
    after its work on its own scenario.json (validate and plot then failed too)."""
    small = mrfq.load_scenario("quickstart").with_overrides(flows=10)
    assert mrfq.scenario_from_dict(small.to_dict()) == small
    assert "batches" not in small.to_dict()["packet"]
    batches = mrfq.load_scenario("quickstart").with_overrides(batches=15)
    assert batches.to_dict()["packet"]["batches"] == 15
    assert mrfq.scenario_from_dict(batches.to_dict()) == batches
    # batches set by the user and flows overridden below them: refused at the override,
    # naming what was given (a review: it named batches, which the user had not given)
    with pytest.raises(InputError, match=r"too few flows for the scenario's \[packet\] "
                       "batches = 15 \\(must be <= 10, the flows measured") as err:
        batches.with_overrides(flows=10)
    assert err.value.field == "flows"
    # a results directory stored before: the default batches written out, fewer flows
    stored = small.to_dict()
    stored["packet"]["batches"] = 20
    with pytest.raises(InputError, match="batches"):
        mrfq.scenario_from_dict(stored)


@pytest.mark.parametrize("given, expected", [("drfq", ("drfq",)),
                                             ("drfq,pf", ("drfq", "pf")),
                                             ("bmf, pf", ("bmf", "pf")),
                                             (["pf"], ("pf",))])
def test_with_overrides_takes_policies_as_the_verbs_do(given, expected):
    """A string was split letter by letter ("unknown policy 'd'")."""
    scenario = mrfq.load_scenario("fig3_quick").with_overrides(policies=given)
    assert scenario.packet.policies == expected


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_validate_fails_a_point_without_a_simulated_value(bad):
    """γ NaN or infinite with a finite interval around the fluid value passed as "fluid
    in CI"."""
    import pandas as pd

    rows = [{"kind": "fluid", "policy": "drf", "load": 0.5, "class": "1", "gamma": 0.6,
             "ci_low": 0.6, "ci_high": 0.6, "method": "markov"},
            {"kind": "packet", "policy": "drfq", "load": 0.5, "class": "1", "gamma": bad,
             "ci_low": 0.55, "ci_high": 0.65}]
    table = mrfq.validate(pd.DataFrame(rows))
    assert list(table["passed"]) == [False]
    assert table["verdict"].iloc[0] == "no simulated value"


def test_a_load_of_one_is_unstable_whatever_the_rounding():
    """Figure 1's resource loads at axis value 1.0 sum to 0.9999999999999999: accepted,
    and "solved" (γ ≈ 3·10⁻⁴ with a warning), while other scenarios refused load 1."""
    with pytest.raises(InputError, match="unstable") as err:
        mrfq.fluid("fig1_balanced", loads=[1.0], policies="drf", jobs=1)
    assert err.value.field == "loads"
    with pytest.raises(InputError, match="unstable"):
        mrfq.fluid.service_rates("drf", [[1.0], [1.0]], [0.5, 0.4999999999999999])


def test_numpy_scalars_are_numbers():
    """np.int64 seeds, np.int32 flows, np.float32 loads were refused with "must be an
    integer / a number", while other verbs took them; ``True`` was taken as load 1."""
    import numpy as np

    scenario = mrfq.load_scenario("fig3_quick").with_overrides(
        seed=np.int64(3), flows=np.int32(200), window=np.int64(3), mean_size=np.float64(10))
    assert (scenario.packet.seed, scenario.packet.flows, scenario.packet.window) == (3, 200, 3)
    assert all(type(v) is int for v in (scenario.packet.seed, scenario.packet.flows))
    plain = mrfq.simulate("fig3_quick", "drfq", 0.5, seed=1, flows=200, mean_size=10)
    numpy = mrfq.simulate("fig3_quick", "drfq", np.float64(0.5), seed=np.int64(1),
                          flows=np.int32(200), mean_size=np.int64(10))
    assert list(numpy.classes["gamma"]) == list(plain.classes["gamma"])
    raw = mrfq.load_scenario("quickstart").to_dict()
    raw["classes"][0]["load_share"] = np.int64(4)
    assert mrfq.scenario_from_dict(raw).classes[0].load_share == 4.0
    with pytest.raises(InputError, match="positive number, got True"):
        mrfq.simulate("fig3_quick", "drfq", True, flows=200)
    with pytest.raises(InputError, match="must be an integer"):
        mrfq.load_scenario("fig3_quick").with_overrides(flows=np.bool_(True))


@pytest.mark.parametrize("call, field", [
    (lambda f: f.allocate("drf", [[0.1, 1], [1]]), "requirements"),
    (lambda f: f.allocate("drf", "abc"), "requirements"),
    (lambda f: f.service_rates("pf", [[0.1, 1], [1, 0.1]], [0.3, 0.3], tolerance="1e-5"),
     "tolerance"),
    (lambda f: f.service_rates("pf", [[0.1, 1], [1, 0.1]], [0.3, 0.3], max_level=-1),
     "max_level"),
    (lambda f: f.service_rates("pf", [[0.1, 1], [1, 0.1]], [0.0, 0.0]), "loads"),
    (lambda f: f.flow_service_rates([[0.1, 1], [1, 0.1]], [0.3, 0.3], "pf", flows=100,
                                    warmup="auto"), "warmup"),
    (lambda f: f.flow_service_rates([[0.1, 1], [1, 0.1]], [0.3, 0.3], "pf", 5, flows=100),
     "sizes"),
    (lambda f: f.flow_service_rates([[0.1, 1], [1, 0.1]], [0.3, 0.3], "pf", "pareto",
                                    flows=100), "size"),
])
def test_the_low_level_functions_raise_input_errors(call, field):
    """A ragged matrix, text, a tolerance as a string, a negative max_level: bare
    ValueError, TypeError or IndexError from NumPy and SciPy; all-zero loads: γ NaN."""
    from mrfq import fluid

    with pytest.raises(InputError) as err:
        call(fluid)
    assert err.value.field == field


def test_balanced_fairness_refuses_all_zero_loads():
    from mrfq.fluid.balanced import bf_service_rates

    with pytest.raises(InputError, match="not all zero"):
        bf_service_rates([[0.1, 1], [1, 0.1]], [0.0, 0.0])


def test_plot_takes_a_sweeps_summary_csv(tmp_path):
    """``mrfq.plot("r/summary.csv")`` ended in KeyError ('fluid', 'drfq'): the summary was
    read as a fluid table. It now draws the results directory's figures; a summary
    elsewhere (a copy) draws its fluid rows; a table of other policies is an error."""
    import pandas as pd

    results = tmp_path / "r"
    mrfq.sweep(mrfq.load_scenario("quickstart").with_overrides(flows=300, mean_size=20),
               results, jobs=1)
    written = mrfq.plot(results / "summary.csv", output=tmp_path / "fig.png")
    assert written[0] == tmp_path / "fig.png" and len(written) >= 2
    copy = tmp_path / "copy.csv"
    copy.write_bytes((results / "summary.csv").read_bytes())
    assert mrfq.plot(copy, output=tmp_path / "fluid.png") == [tmp_path / "fluid.png"]
    table = pd.read_csv(copy)
    table[table["kind"] == "packet"].drop(columns="kind").to_csv(copy, index=False)
    with pytest.raises(InputError, match="not fluid policies: drfq ") as err:
        mrfq.plot(copy, output=tmp_path / "x.png")
    assert err.value.source == str(copy)
    with pytest.raises(InputError, match="whole number") as err:
        mrfq.plot(output=tmp_path / "p", jobs="x")
    assert err.value.field == "jobs"


def test_simulate_takes_every_documented_override_and_names_an_unknown_one():
    """``fq_resource`` and ``batches`` (documented [packet] keys) and a misspelt keyword
    ended in a bare TypeError."""
    fq = mrfq.simulate("fig3_quick", "bottleneck-fq", 0.5, flows=300, mean_size=20,
                       fq_resource="cpu")
    assert fq.classes["gamma"].notna().all()
    few = mrfq.simulate("fig3_quick", "bmf", 0.5, flows=300, mean_size=20, batches=10)
    assert few.classes["gamma"].notna().all()
    with pytest.raises(InputError, match="only bottleneck-fq reads it") as err:
        mrfq.simulate("fig3_quick", "bmf", 0.5, flows=300, fq_resource="cpu")
    assert err.value.field == "fq_resource"
    with pytest.raises(InputError, match="unknown keyword 'flow'") as err:
        mrfq.simulate("fig3_quick", "bmf", 0.5, flow=100)
    assert err.value.field == "flow" and "flows" in err.value.problem


def test_scenario_arguments_that_name_no_file():
    """A directory was "no such file"; "" was ".: no such file"; cluster(None) blamed
    fig3_quick's missing [cluster] section."""
    with pytest.raises(InputError, match="is a directory, not a scenario file"):
        mrfq.load_scenario("/tmp")
    with pytest.raises(InputError, match="an empty path") as err:
        mrfq.simulate("", "drfq", 0.5)
    assert err.value.field == "scenario"
    with pytest.raises(InputError, match="must be given") as err:
        mrfq.cluster(None)
    assert err.value.field == "scenario"


def test_a_cluster_run_keeps_the_packet_points_of_an_earlier_run(tmp_path):
    """``mrfq run`` then ``mrfq cluster`` into the same directory (both default to
    results/<name>): the summary was rewritten with the fluid and cluster points only,
    size_bins.csv deleted, and validate said 4/4 where it had said 12/12."""
    scenario = mrfq.load_scenario("quickstart").with_overrides(flows=300, mean_size=20)
    results = tmp_path / "r"
    mrfq.sweep(scenario, results, jobs=1)
    before = (results / "summary.csv").read_text()
    mrfq.cluster(scenario, results, jobs=1)
    assert (results / "summary.csv").read_text() == before
    assert (results / "size_bins.csv").is_file()
    assert set(mrfq.validate(results)["kind"]) == {"packet", "cluster"}


def test_an_empty_server_list_is_refused_and_old_results_still_read():
    """``servers = []`` ran the pooled cluster without a word, where every other empty
    list is refused; results directories stored it for a pool, and still read."""
    from mrfq.sweeps import stored_scenario

    raw = mrfq.load_scenario("quickstart").to_dict()
    assert "servers" not in raw["cluster"]
    raw["cluster"]["servers"] = []
    with pytest.raises(InputError, match="at least one server") as err:
        mrfq.scenario_from_dict(raw)
    assert err.value.field == "cluster.servers"
    from pathlib import Path

    old = stored_scenario(Path(__file__).resolve().parent.parent / "reproduction"
                          / "cluster_task_laws" / "runs" / "fixed")
    assert old.cluster.servers == ()


def test_a_policy_named_twice_is_refused_as_a_load_given_twice_is():
    """``policies = ["drfq", "drfq"]`` ran drfq once without a word; ``values = [0.3,
    0.3]`` was refused."""
    with pytest.raises(InputError, match="distinct: names the policy 'drfq' twice"):
        mrfq.load_scenario("fig3_quick").with_overrides(policies="drfq,drfq")
    raw = mrfq.load_scenario("fig3_quick").to_dict()
    raw["fluid"]["policies"] = ["drf", "pf", "DRF"]
    with pytest.raises(InputError, match="names the policy 'DRF' twice") as err:
        mrfq.scenario_from_dict(raw)
    assert err.value.field == "fluid.policies"
    with pytest.raises(InputError, match="twice"):
        mrfq.fluid("fig3_quick", policies=["drf", "drf"], loads=[0.5], jobs=1)


def test_plotting_a_scenario_file_says_what_to_do(tmp_path):
    """It said "missing columns ['class', 'gamma', 'load', 'policy']"."""
    from mrfq.scenario.files import PACKAGED_SCENARIOS

    path = tmp_path / "s.toml"
    path.write_text((PACKAGED_SCENARIOS / "quickstart.toml").read_text())
    with pytest.raises(InputError, match="is a scenario, not something to draw") as err:
        mrfq.plot(path, output=tmp_path / "x.png")
    assert err.value.source == str(path)


def test_max_level_cannot_bring_back_the_one_change_stop():
    """(A review of the fix above.) With max_level stopping the growth after one change,
    the solve returned Figure 1's PF γ at load 0.9 2·10⁻³ off, at tolerance 10⁻³."""
    a = [[0.1, 1.0], [1.0, 0.1], [1.0, 1.0]]
    with pytest.raises(InputError, match="fewer than two truncation changes") as err:
        mrfq.fluid.service_rates("pf", a, [0.9 / 2.1] * 3, tolerance=1e-3, max_level=43)
    assert err.value.field == "max_level"
    with pytest.raises(InputError) as err:
        mrfq.fluid.service_rates("pf", a, [0.3] * 3, max_level="abc")
    assert err.value.field == "max_level"


def test_with_overrides_splits_policies_on_spaces_too():
    scenario = mrfq.load_scenario("fig3_quick").with_overrides(policies="drfq pf")
    assert scenario.packet.policies == ("drfq", "pf")


def test_old_results_with_the_default_batches_written_out_still_read(tmp_path):
    """Stored scenarios wrote ``batches = 20`` even for 10 flows; they read back now."""
    import json

    from mrfq.sweeps import stored_scenario

    small = mrfq.load_scenario("quickstart").with_overrides(flows=10)
    raw = small.to_dict()
    raw["packet"]["batches"] = 20
    (tmp_path / "scenario.json").write_text(json.dumps(raw))
    assert stored_scenario(tmp_path) == small


def test_a_results_directory_of_balanced_fairness_alone_gets_its_fluid_figure(tmp_path):
    """The fluid figure needed a pair (BMF v DRF or v PF): a sweep whose fluid policy was
    BF alone drew none."""
    raw = mrfq.load_scenario("quickstart").with_overrides(flows=300, mean_size=20).to_dict()
    raw["fluid"]["policies"] = ["bf"]
    del raw["cluster"]
    results = tmp_path / "r"
    mrfq.sweep(mrfq.scenario_from_dict(raw), results, jobs=1)
    written = mrfq.plot(results, output=tmp_path / "f.png")
    assert tmp_path / "f_fluid.png" in written

"""Front-end fixes: the seed of ``plan`` and ``flows`` checked like ``simulate``'s, the
flow count bounded and the arrivals grown in amortised time, the progress line's ETA of
a resumed run, and the docs' figures that come from a run."""

import math
import types
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_one_line_error, run_cli

import mrfq
from mrfq import progress as progress_module
from mrfq import seeds
from mrfq.errors import InputError
from mrfq.packet import engine
from mrfq.packet.engine import _ArrivalRecords, check_flows, run_replication
from mrfq.packet.flows import run_flows
from mrfq.packet.model import ARRIVAL_BLOCK, ArrivalStream, PacketModel
from mrfq.progress import Progress, eta_seconds
from mrfq.scenario import load_scenario
from mrfq.scenario.files import packaged_scenarios

ROOT = Path(__file__).resolve().parent.parent


_cli = run_cli
_one_line_error = assert_one_line_error


# --- 1. the seed of plan and flows ------------------------------------------------------

@pytest.mark.parametrize("args", [
    ("plan", "fig3_quick", "--policies", "bmf", "--loads", "0.5", "--seed", "-2"),
    ("flows", "isolation_rogue", "-o", "fl", "--seed", "-1"),
])
def test_a_negative_seed_on_the_command_line_is_a_one_line_error(tmp_path, args):
    _one_line_error(_cli(*args, cwd=tmp_path), "error: --seed: must be >= 0")
    assert not (tmp_path / "fl").exists()  # refused before anything is written


@pytest.mark.parametrize("seed", [-1, "a", True, 1.5])
def test_plan_and_flows_refuse_a_seed_that_is_not_an_integer_from_0(tmp_path, seed):
    with pytest.raises(InputError) as plan_error:
        mrfq.plan("fig3_quick", policies=["bmf"], loads=[0.5], seed=seed)
    with pytest.raises(InputError) as flows_error:
        mrfq.flows("isolation_rogue", tmp_path / "fl", seed=seed)
    assert plan_error.value.field == flows_error.value.field == "seed"
    assert plan_error.value.source is None and flows_error.value.source is None


def test_a_whole_float_seed_is_the_integer_seed():
    scenario = load_scenario("isolation_rogue")
    policy = scenario.packet.policies[0]
    as_float, as_int = run_flows(scenario, policy, 2.0), run_flows(scenario, policy, 2)
    assert as_float.flows["completion"].tolist() == as_int.flows["completion"].tolist()


# --- 2. the flow count and the arrivals' growth -----------------------------------------

@pytest.mark.parametrize("flows", [engine.MAX_FLOWS + 1, 10**19, 10**30, 10**400])
def test_more_flows_than_the_engine_can_number_are_refused(flows):
    with pytest.raises(InputError, match="must be <= 8,796,093,022,208 \\(2\\^43"):
        check_flows(flows)
    with pytest.raises(InputError) as error:
        check_flows(flows, "pilot_flows")
    assert error.value.field == "pilot_flows"


def test_more_flows_than_memory_holds_are_refused(monkeypatch):
    monkeypatch.setattr(engine, "_physical_memory", lambda: 2**30)  # a 1 GiB machine
    check_flows(2**30 // engine.BYTES_PER_FLOW)  # fits
    with pytest.raises(InputError, match="more than this machine's 1 GiB"):
        check_flows(2**30 // engine.BYTES_PER_FLOW + 1)
    monkeypatch.setattr(engine, "_physical_memory", lambda: 0)  # the system does not say
    check_flows(engine.MAX_FLOWS)


def test_huge_flow_counts_are_one_line_errors_not_endless_runs(tmp_path):
    for count in ("1e19", "1e30"):
        result = _cli("simulate", "fig3_quick", "--policy", "fifo", "--load", "0.5",
                      "--flows", count, cwd=tmp_path)
        _one_line_error(result, "error: --flows: must be <= 8,796,093,022,208 (2^43")
    with pytest.raises(InputError) as error:
        mrfq.simulate("fig3_quick", "fifo", 0.5, flows=10**19)
    assert error.value.field == "flows"
    with pytest.raises(InputError) as error:
        mrfq.plan("fig3_quick", policies=["bmf"], loads=[0.5], pilot_flows=10**19)
    assert error.value.field == "pilot_flows"


def test_arrival_records_grow_geometrically_and_keep_every_block():
    rng = np.random.default_rng(3)
    blocks = [(rng.random(ARRIVAL_BLOCK), rng.integers(0, 3, ARRIVAL_BLOCK),
               rng.integers(1, 100, ARRIVAL_BLOCK)) for _ in range(300)]
    records = _ArrivalRecords(128)
    copied = grown = 0
    for block in blocks:
        capacity = records.time.shape[0]
        before = records.n
        records.append(block)
        if records.time.shape[0] != capacity:
            grown += 1
            copied += before  # a growth copies what was there
    n = 300 * ARRIVAL_BLOCK
    assert records.n == n
    # each growth is by 1/4 at least: O(log n) growths, and the copies sum to at most the
    # capacities' geometric series, 5 × the last (< 1.25 n): O(n) (re-concatenating at
    # every append copied ~ n²/(2·block), 150 n here)
    assert grown <= math.ceil(math.log(n / 128) / math.log(1.25)) + 1
    assert copied <= 6.25 * n
    for got, parts in zip(records.views(), zip(*blocks, strict=True), strict=True):
        assert np.array_equal(got, np.concatenate(parts))
    assert [a.dtype for a in records.views()] == [np.float64, np.int64, np.int64]


def test_a_run_takes_its_arrivals_from_the_stream_in_order_after_the_initial_flows():
    scenario = load_scenario("fig3_quick").with_overrides(flows=9000, mean_size=5)
    rho = scenario.class_loads(0.5)
    initial = (np.array([0, 2, 1]), np.array([4, 1, 7]))
    run = run_replication(PacketModel.from_scenario(scenario), "fifo", rho,
                          seeds.run_seed(7, 0), flows=9000, mean_size=5, window=10,
                          initial=initial)
    stream = ArrivalStream(seeds.run_seed(7, 0), rho, 5)
    blocks = [stream.next_block() for _ in range(3)]
    expected = [np.concatenate(parts)[:9000] for parts in zip(*blocks, strict=True)]
    for got, want in zip((run.arrival, run.flow_class, run.size), expected, strict=True):
        assert np.array_equal(got, want)
    assert run.initial_completion.shape == (3,) and np.all(run.initial_completion > 0)


# --- 3. the ETA of a resumed run ---------------------------------------------------------

def test_the_eta_counts_only_what_this_run_computed():
    # a resumed sweep: 2 of 54 points stored, 3 computed in 17.9 s → 49 left at 5.97 s
    assert eta_seconds(5, 54, 2, 17.9) == pytest.approx(17.9 / 3 * 49)
    assert eta_seconds(5, 10, 0, 10.0) == pytest.approx(10.0)  # a fresh run: as before
    assert eta_seconds(2, 54, 2, 5.0) is None  # nothing computed yet: no rate
    assert eta_seconds(3, 54, 2, 0.0) is None


def test_the_progress_line_of_a_resumed_sweep(monkeypatch, capsys):
    now = [100.0]
    monkeypatch.setattr(progress_module, "time", types.SimpleNamespace(
        perf_counter=lambda: now[0]))
    line = Progress("sweep", always=True)

    def report(done, total, at):
        now[0] = 100.0 + at
        line(done, total)
        return capsys.readouterr().err.rsplit("\r", 1)[-1]

    assert report(2, 54, 0.0).endswith("eta      ?")  # the stored points: no rate yet
    assert report(5, 54, 17.9).endswith(f"eta {17.9 / 3 * 49:6.1f}s")  # not 175.4 s
    assert report(54, 54, 30.0).endswith("eta    0.0s\n")
    # the same display over a second sweep: its own stored points, its own rate
    report(10, 20, 40.0)
    assert report(12, 20, 44.0).endswith(f"eta {4.0 / 2 * 8:6.1f}s")


def test_plan_reports_its_start_so_that_every_pilot_is_in_the_rate():
    seen = []
    table = mrfq.plan("fig3_quick", policies=["bmf"], loads=[0.5], pilot_flows=800,
                      seed=2.0, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(0, 1), (1, 1)]
    assert set(table["class"]) == {"1", "2", "3"}


# --- 4-6. docs ---------------------------------------------------------------------------

def test_the_packet_guide_quotes_the_interval_the_pf_example_prints():
    result = mrfq.simulate("fig3_quick", "pf", 0.3, mean_size=100)
    row = result.classes.set_index("class").loc["3"]
    text = " ".join((ROOT / "docs" / "guide" / "packet.md").read_text().split())
    assert f"γ = {row['gamma']:.3f}" in text
    assert f"interval [{row['ci_low']:.3f}, {row['ci_high']:.3f}] (`ci_low`, `ci_high`)" in text
    table = mrfq.fluid("fig3_quick", loads=[0.3], policies=["pf"], jobs=1)
    fluid = float(table.set_index("class").loc["3", "gamma"])
    assert f"against the fluid {fluid:.3f}, −{100 * (1 - row['gamma'] / fluid):.1f}%" in text
    low, high = (100 * (row[c] / fluid - 1) for c in ("ci_low", "ci_high"))
    assert f"−{-low:.1f}% to −{-high:.1f}%" in text
    low, high = (100 * (row[c] / fluid - 1) for c in ("ci_low_data", "ci_high_data"))
    assert f"`ci_low_data` to `ci_high_data`, is −{-low:.1f}% to −{-high:.1f}%" in text
    # the size-bin table's columns, as the guide names them
    columns = ", ".join(result.size_bins.columns)
    assert f"`{columns}` in `mrfq simulate" in text


def test_the_scenario_guide_names_every_packaged_scenario():
    intro = (ROOT / "docs" / "guide" / "scenarios.md").read_text().split("```")[0]
    missing = [name for name in packaged_scenarios() if f"`{name}`" not in intro]
    assert not missing, missing
    assert "`mrfq list`" in intro and "above" not in intro

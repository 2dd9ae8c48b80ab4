"""Explicit flows (per-flow windows, stop times, open-loop "rogue" flows) and the service
timeline: the kernel against the reference simulator, exactly, and isolation."""

import numpy as np
import pytest
from conftest import FIG3_CLASSES, make_scenario
from naive import simulate_reference
from test_packet_reference import kernel_histogram

from mrfq.packet.engine import run_replication
from mrfq.packet.model import PacketModel

POLICIES = ["drfq", "drfq-dovetail", "pf", "bmf", "fifo", "bottleneck-fq", "mr3"]


def _explicit(policy, classes, starts, sizes, windows, periods, stops, interval=2.0, bins=40,
              resources=("cpu", "link")):
    """Kernel (debug and production loops) and reference on one flow per class."""
    scenario = make_scenario(classes=classes, resources=resources)
    model = PacketModel.from_scenario(scenario)
    K = len(classes)
    trace = (starts, list(range(K)), sizes)
    settings = dict(class_window=windows, class_period=periods, class_stop=stops,
                    interval=interval, bins=bins)
    seed = np.random.SeedSequence(5)
    runs = [run_replication(model, policy, scenario.class_loads(0.5), seed, flows=K,
                            mean_size=10, window=max(windows), arrivals=trace, debug=debug,
                            **settings) for debug in (True, False)]
    record = {}
    slow = simulate_reference(scenario, policy, scenario.class_loads(0.5), seed, flows=K,
                              mean_size=10, window=max(windows), arrivals=trace,
                              record=record, **settings)
    hist, sums = kernel_histogram(record["sojourns"], K, K)
    for run in runs:
        np.testing.assert_array_equal(run.completion, slow)
        np.testing.assert_array_equal(run.timeline, record["timeline"])
        np.testing.assert_array_equal(run.dropped, record["dropped"])
        # every packet's sojourn, of open-loop flows too (MR3: from the ingress)
        np.testing.assert_array_equal(run.sojourn_hist, hist)
        np.testing.assert_allclose(run.sojourn_sum, sums, rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(run.work, record["work"], rtol=1e-10)  # busy time
    return runs[0], record


@pytest.mark.parametrize("policy", POLICIES)
def test_explicit_flows_match_reference(policy):
    """Three windowed flows with different windows and stop times, and an open-loop flow
    offering a packet every 0.4 (2.5 per time unit, more than any resource can serve)
    with a buffer (window) of 6: it drops packets."""
    classes = [*FIG3_CLASSES, {"name": "rogue", "requirements": [1.0, 0.5],
                               "load_share": 1}]
    run, record = _explicit(policy, classes, starts=[0.0, 0.0, 5.0, 2.0],
                            sizes=[10**9, 10**9, 10**9, 150], windows=[3, 8, 2, 6],
                            periods=[0.0, 0.0, 0.0, 0.4], stops=[60.0, 40.0, 70.0, np.inf])
    assert record["dropped"][3] > 0
    assert np.all(np.isfinite(run.completion))
    # every packet's services are recorded: totals per class are whole packets' work
    assert run.timeline.sum() > 0


def test_a_timeline_far_shorter_than_the_run_stays_in_its_array():
    """Intervals of 1e-20 (a 1e-19 timeline) and services at times ~1: t / interval is
    ~1e20, beyond an int64, and its conversion wrapped the bin index outside the
    timeline array (memory corruption). The services that start at 0 span the whole
    timeline, so each busy resource's intervals hold 1e-20 each, as the reference says."""
    run, record = _explicit("bmf", FIG3_CLASSES[:2], starts=[0.0, 0.0], sizes=[30, 30],
                            windows=[3, 3], periods=[0.0, 0.0], stops=[np.inf, np.inf],
                            interval=1e-20, bins=10)
    busy = run.timeline.sum(axis=0) / 1e-20  # [resource, bin]: the resource's busy share
    assert np.all((busy == 0) | (np.abs(busy - 1) < 1e-9)) and busy.any()
    assert np.all(np.isfinite(run.completion))


@pytest.mark.parametrize("policy", ["drfq", "bmf", "mr3"])
def test_an_interval_shorter_than_a_service_splits_it(policy):
    """Intervals of 0.3 against services of up to 1 time unit: each interval holds the
    time the resource spent on the flow in it, so no share exceeds 1 (a service counted
    whole where it ended gave shares of 2 and 3 beside 0); the total is every packet's
    service (two flows of 40 packets of the Figure 3 classes 1 and 2, all done inside the
    120-unit timeline), and the kernel matches the reference exactly."""
    run, _ = _explicit(policy, FIG3_CLASSES[:2], starts=[0.0, 0.7], sizes=[40, 40],
                       windows=[4, 4], periods=[0.0, 0.0], stops=[np.inf, np.inf],
                       interval=0.3, bins=400)
    assert np.all(run.completion < 120)
    busy = run.timeline.sum(axis=0) / 0.3  # [resource, bin]
    assert busy.max() <= 1 + 1e-9 and busy.max() > 1 - 1e-9  # a busy interval: exactly 1
    work = 40 * (np.array(FIG3_CLASSES[0]["requirements"])
                 + np.array(FIG3_CLASSES[1]["requirements"]))
    np.testing.assert_allclose(run.timeline.sum(axis=(0, 2)), work, rtol=1e-9)


@pytest.mark.parametrize("policy", ["mr3", "bmf", "fifo"])
def test_open_loop_packet_mix_matches_reference(policy):
    classes = [{"name": "mix", "load_share": 1, "packets": [
                   {"requirements": [1, 0.2], "probability": 0.3},
                   {"requirements": [0.1, 1], "probability": 0.7}]},
               {"name": "plain", "requirements": [1, 1], "load_share": 1, "weight": 2.0}]
    _explicit(policy, classes, starts=[1.0, 0.0], sizes=[80, 10**9], windows=[4, 5],
              periods=[0.3, 0.0], stops=[np.inf, 50.0])


def _served_shares(policy, t0=100.0, t1=400.0):
    """Dominant share of every flow of the packaged isolation scenario over [t0, t1): the
    largest over resources of its mean share there (not the mean of the per-interval
    maxima, which a few packets per interval bias upwards)."""
    from mrfq.packet.flows import run_flows
    from mrfq.scenario import load_scenario

    scenario = load_scenario("isolation_rogue")
    timeline = run_flows(scenario, policy).timeline
    part = timeline[(timeline["resource"] != "dominant") & (timeline["time"] >= t0)
                    & (timeline["time"] < t1)]
    means = part.groupby(["flow", "resource"], sort=False)["share"].mean()
    return scenario, means.groupby(level="flow", sort=False).max()


def test_isolation_scenario_offers_ten_times_the_fair_share():
    from mrfq.fluid import allocate
    from mrfq.scenario import load_scenario

    scenario = load_scenario("isolation_rogue")
    a = [scenario.classes[[c.name for c in scenario.classes].index(f.class_name)].requirements
         for f in scenario.flows]
    fair = allocate("drf", a)
    assert fair == pytest.approx([1 / 3.1] * 4)
    assert scenario.flows[3].rate == pytest.approx(10 * fair[3], rel=1e-12)


@pytest.mark.parametrize("policy", ["drfq", "mr3", "bmf"])
def test_rogue_flow_is_isolated(policy):
    """Three windowed flows and an open-loop flow offering 10× its fair share (buffer of
    300 packets): under DRFQ, MR3 and BMF the compliant flows keep ≥ 95% of their fair
    share (1/3.1 each: DRF and BMF agree here), and the rogue gets no more than ~its own."""
    _, shares = _served_shares(policy)
    fair = 1 / 3.1
    for flow in ("A", "B", "C"):
        assert shares[flow] >= 0.95 * fair, (flow, shares.to_dict())
    assert shares["rogue"] <= 1.05 * fair, shares.to_dict()


def test_fifo_does_not_isolate():
    """FIFO: the rogue's 300 queued packets take most of each resource's time."""
    _, shares = _served_shares("fifo")
    fair = 1 / 3.1
    assert all(shares[f] < 0.5 * fair for f in ("A", "B", "C")), shares.to_dict()
    assert shares["rogue"] > 2 * fair, shares.to_dict()


def test_bottleneck_fq_fails_a_flow_whose_bottleneck_is_not_scheduled():
    """Bottleneck FQ on the link: flow B ⟨1, 0.1⟩ (dominant resource the CPU, which is
    FIFO) gets 0.088 against its DRF share 1/3.1 = 0.323 (measured 27%): the rogue's
    packets fill the CPU queue ahead of it, and the fair link never sees the contest."""
    scenario, shares = _served_shares("bottleneck-fq")
    assert scenario.fq_resource_index == 1  # the link
    assert shares["B"] < 0.5 / 3.1, shares.to_dict()


def test_pf_gives_an_open_loop_flow_more_than_its_share():
    """A finding about BR's PF realisation (tags divided by the flow's queue length Q):
    the rogue's queue is up to its 300-packet buffer, the windowed flows' at most 30, so
    PF weighs the rogue ~10× and it takes 0.644 (2.0× its fair share 0.323); C, which
    shares both resources with it, keeps 0.147 (45%), B 0.213, A 0.379 (measured)."""
    _, shares = _served_shares("pf")
    fair = 1 / 3.1
    assert shares["rogue"] > 1.5 * fair, shares.to_dict()
    assert shares["C"] < 0.6 * fair, shares.to_dict()


def test_flows_command_writes_the_timeline_and_the_plot(tmp_path):
    import subprocess
    import sys

    import pandas as pd

    out = tmp_path / "iso"
    result = subprocess.run([sys.executable, "-m", "mrfq", "flows", "isolation_rogue", "-o",
                             str(out), "--policies", "mr3,fifo"], capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr
    flows = pd.read_csv(out / "flows.csv")
    assert list(flows["policy"].unique()) == ["mr3", "fifo"] and len(flows) == 8
    assert (flows.loc[flows["flow"] == "rogue", "dropped"] > 0).all()
    timeline = pd.read_csv(out / "timeline.csv")
    assert set(timeline["resource"]) == {"cpu", "link", "dominant"}
    assert (out / "isolation_rogue_dominant.png").stat().st_size > 0
    from mrfq import pipeline  # what `mrfq plot DIR` calls, in this process

    # `mrfq plot DIR` redraws the file `mrfq flows` wrote (it used to write
    # dominant_share.png, untitled); a directory without scenario.json keeps that name
    (out / "isolation_rogue_dominant.png").unlink()
    assert pipeline.plot(out)[0] == out / "isolation_rogue_dominant.png"
    assert (out / "isolation_rogue_dominant.png").stat().st_size > 0
    (out / "scenario.json").unlink()
    assert pipeline.plot(out)[0] == out / "dominant_share.png"


def test_explicit_flows_survive_the_stored_scenario_round_trip():
    """Results directories store ``scenario.to_dict()`` as JSON; explicit flows and the
    timeline must come back unchanged (defaults filled in)."""
    import json

    from mrfq.scenario import load_scenario, scenario_from_dict

    scenario = load_scenario("isolation_rogue")
    again = scenario_from_dict(json.loads(json.dumps(scenario.to_dict())))
    assert again.flows == scenario.flows and again.timeline == scenario.timeline
    assert [f.window for f in again.flows] == [30, 30, 30, 300]
    assert [f.stop for f in again.flows] == [400.0] * 4


@pytest.mark.parametrize("policy", POLICIES)
def test_a_lone_backlogged_flow_waits_behind_its_own_window(policy):
    """One backlogged flow with window W through one resource (service 1 per packet):
    its i-th packet (i ≤ W) leaves at i, and every later one enters at a departure with
    W − 1 packets ahead, so it stays exactly W. With N packets sent the mean sojourn is
    (W(W+1)/2 + (N − W)·W) / N, whatever the policy; under MR3 too, whose ingress holds
    all but 2 of them (its sojourn counts the ingress: inside the tandem alone it would
    be at most 2)."""
    from mrfq.packet.flows import run_flows
    from mrfq.scenario import scenario_from_dict

    W, duration = 8, 100.0
    scenario = scenario_from_dict({
        "name": "lone", "resources": ["link"],
        "classes": [{"name": "a", "requirements": [1.0], "load_share": 1}],
        "load": {"axis": "link", "values": [0.5]},
        "packet": {"flows": 10, "mean_size": 5, "window": W},
        "timeline": {"duration": duration, "interval": 10.0},
        "flows": [{"class": "a", "start": 0.0, "stop": duration, "name": "lone"}]})
    run = run_flows(scenario, policy)
    row = run.flows.iloc[0]
    # departures at 1, 2, …; injections stop at the first departure at or after the stop
    N = int(duration) + W - 1
    assert row["packets"] == N
    assert row["completion"] == pytest.approx(N)
    exact = (W * (W + 1) / 2 + (N - W) * W) / N
    assert row["mean_packet_sojourn"] == pytest.approx(exact, rel=1e-12)
    assert run.utilisation == {"link": pytest.approx(1.0, rel=1e-12)}  # never idle
    # W = 8 is a bin's lower edge: the percentiles sit in [8, 8.25)
    for q in ("p50_sojourn", "p95_sojourn", "p99_sojourn"):
        assert W <= row[q] < W * (1 + 1 / 32)


def test_memoryless_drfq_gives_a_light_flow_no_delay_protection():
    """A finding (docs/models.md, "Delay protection"): a backlogged flow (W = 30) and an
    open-loop flow at 0.4 packets per time unit, below its fair link share 0.5, both
    ⟨0.5, 1⟩. Each gets what it offers under every policy, but the light flow's packets
    wait behind the bulk flow's link queue under memoryless DRFQ (either clock), PF and
    FIFO (~48 time units, the bulk flow's own), and pass it under BMF and dovetailing
    (< 3) and MR3 (< 8): the bulk flow's newest packet, in service at the CPU, sets V."""
    from mrfq.packet.flows import run_flows
    from mrfq.scenario import scenario_from_dict

    raw = {"resources": ["cpu", "link"],
           "classes": [{"name": "a", "requirements": [0.5, 1.0]}],
           "packet": {"window": 30, "seed": 1},
           "timeline": {"duration": 1500, "interval": 50},
           "flows": [{"name": "bulk", "class": "a"},
                     {"name": "light", "class": "a", "rate": 0.4}]}
    sojourn = {}
    for clock in ("in-service", "started"):
        scenario = scenario_from_dict({**raw, "packet": {**raw["packet"],
                                                         "virtual_time": clock}})
        for policy in ("drfq", "pf", "fifo", "bmf", "drfq-dovetail", "mr3"):
            if clock == "started" and policy != "drfq":
                continue
            flows = run_flows(scenario, policy).flows.set_index("flow")
            assert flows.loc["light", "dropped"] == 0
            sojourn[policy if clock == "in-service" else "drfq:started"] = (
                flows.loc["light", "mean_packet_sojourn"] / flows.loc["bulk",
                                                                      "mean_packet_sojourn"])
    for policy in ("drfq", "drfq:started", "pf", "fifo"):
        assert sojourn[policy] > 0.9, sojourn
    for policy, bound in (("bmf", 0.06), ("drfq-dovetail", 0.06), ("mr3", 0.16)):
        assert sojourn[policy] < bound, sojourn


def test_a_service_straddling_the_timelines_end_counts_up_to_it():
    """An independent expectation, not the twin's: one flow of 10 one-unit packets on one
    resource, window 1, served back to back over [0, 10]; a timeline of 20 intervals of
    0.3 ends at 6, inside the seventh packet's service: every interval is busy exactly
    0.3, so the total is 6, the service up to the timeline's end (counted whole where it
    ended, the intervals held 0, 0, 0, 1, 0, 0, 1, ... and the seventh packet was lost)."""
    run, _ = _explicit("fifo", [{"name": "a", "requirements": [1.0], "load_share": 1}],
                       starts=[0.0], sizes=[10], windows=[1], periods=[0.0],
                       stops=[np.inf], interval=0.3, bins=20, resources=("link",))
    np.testing.assert_allclose(run.timeline[0, 0], np.full(20, 0.3), rtol=1e-12)
    assert run.completion[0] == pytest.approx(10.0)

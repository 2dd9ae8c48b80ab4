"""Flow-level simulator throughput: flow events (arrivals + departures) per CPU-second.

Usage: python benchmarks/bench_flowsim.py [--flows N] [--repeats R] [--load L] [--no-cache]
       [--versus-markov] [--policies drf,pf,bmf,bf] [--markov-loads 0.9,0.95,0.98]
       [--max-flows N] [--skip-throughput]

Figure 3 classes (a = (0.1, 1), (1, 0.1), (1, 1); load shares 4, 1, 1), link (resource 2)
load 0.9, exponential sizes, policies DRF, PF, BMF and BF. Each policy is run ``repeats``
times with different seeds after a warm-up run (Numba compilation and cache loading not
counted); the median events per CPU-second (``time.process_time``) of the whole
``simulate_flows`` call is reported (arrival generation in NumPy included), with the
allocation cache's hit rate, and with ``--no-cache`` the same without the cache.
``--versus-markov`` also times, per policy and each of ``--markov-loads``, a flow-level
point whose ratio-estimator 95% half-widths are ≤ 0.5% (flows doubled until they are, at most
``--max-flows``) against the Markov solver (BF: its explicit stationary law) at tolerance
1e-5. Where the method choice (:func:`mrfq.fluid.method.predicted_states`) predicts more
states than the solver's budget, the solver is not run and the prediction is printed:
those are the points only the simulator reaches.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import numpy as np

from mrfq.fluid import service_rates
from mrfq.fluid.balanced import bf_service_rates
from mrfq.fluid.flowsim import flow_service_rates, simulate_flows
from mrfq.fluid.markov import MAX_STATES
from mrfq.fluid.method import predicted_states

REQUIREMENTS = np.array([[0.1, 1.0], [1.0, 0.1], [1.0, 1.0]])
SHARES = np.array([4.0, 1.0, 1.0])
POLICIES = ("drf", "pf", "bmf", "bf")


def class_loads(link_load: float) -> np.ndarray:
    return SHARES * link_load / float(SHARES @ REQUIREMENTS[:, 1])


def throughput(policy: str, loads: np.ndarray, flows: int, seed: int, cache: bool
               ) -> tuple[float, float]:
    started = time.process_time()
    run = simulate_flows(REQUIREMENTS, loads, policy, None, seed, flows, cache=cache)
    cpu = time.process_time() - started
    lookups = run.cache_hits + run.cache_misses
    return run.events / cpu, (run.cache_hits / lookups if lookups else float("nan"))


def versus_markov(policy: str, loads: np.ndarray, max_flows: int) -> None:
    predicted = predicted_states(REQUIREMENTS, loads, 1e-5)
    exact = None
    if policy == "bf" or predicted <= MAX_STATES:
        started = time.process_time()
        if policy == "bf":
            exact = bf_service_rates(REQUIREMENTS, loads).gamma
        else:
            exact = service_rates(policy, REQUIREMENTS, loads).gamma
        markov = f"exact {time.process_time() - started:7.2f} s CPU"
    else:
        markov = f"Markov not run: {predicted:.2e} states predicted > {MAX_STATES:.0e}"
    flows = 1_000_000
    while True:
        started = time.process_time()
        result = flow_service_rates(REQUIREMENTS, loads, policy, flows=flows, seed=1)
        cpu = time.process_time() - started
        # the ratio estimator Σ S / Σ T and its interval: what the pipeline reports
        half = float(np.max((result.ratio_high - result.ratio_low) / 2 / result.ratio))
        if half <= 0.005 or 2 * flows > max_flows:
            break
        flows *= 2
    worst = (f", max |γ/exact − 1| {float(np.max(np.abs(result.ratio / exact - 1))):.2%}"
             if exact is not None else "")
    print(f"  {policy:4s} {markov} | flow-level {flows:>11,d} flows {cpu:7.1f} s CPU, "
          f"max half-width {half:.2%}{worst}; γ = {np.round(result.ratio, 4).tolist()}",
          flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--flows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--load", type=float, default=0.9)
    parser.add_argument("--no-cache", action="store_true", help="also run without the cache")
    parser.add_argument("--versus-markov", action="store_true")
    parser.add_argument("--policies", default=",".join(POLICIES))
    parser.add_argument("--markov-loads", default="0.9")
    parser.add_argument("--max-flows", type=int, default=256_000_000)
    parser.add_argument("--skip-throughput", action="store_true")
    args = parser.parse_args()
    chosen = args.policies.split(",")
    loads = class_loads(args.load)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
          f"Figure 3 classes, link load {args.load}, {args.flows:,d} flows per run, "
          f"median of {args.repeats}")
    modes = [True, False] if args.no_cache else [True]
    for policy in chosen if not args.skip_throughput else ():
        for cache in modes:
            if policy == "bf" and not cache:
                continue  # BF reads Φ from its box, it has no cache
            throughput(policy, loads, 20_000, 0, cache)  # compile / load the Numba cache
            results = [throughput(policy, loads, args.flows, seed, cache)
                       for seed in range(1, args.repeats + 1)]
            rates = [r[0] for r in results]
            label = "Φ box" if policy == "bf" else ("cache" if cache else "no cache")
            hits = statistics.median(r[1] for r in results)
            print(f"{policy:4s} {label:8s} median {statistics.median(rates) / 1e6:5.2f} M "
                  f"events/CPU-s (min {min(rates) / 1e6:.2f}, max {max(rates) / 1e6:.2f})"
                  + (f"; cache hit rate {hits:.4f}" if hits == hits else ""))
    if args.versus_markov:
        for load in (float(v) for v in args.markov_loads.split(",")):
            print(f"link load {load}: one point at 95% half-width <= 0.5% against the "
                  "exact solver:", flush=True)
            for policy in chosen:
                versus_markov(policy, class_loads(load), args.max_flows)


if __name__ == "__main__":
    main()

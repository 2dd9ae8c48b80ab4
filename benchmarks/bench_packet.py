"""Packet engine benchmarks (issue 3), measured side by side in one process.

1. Throughput: Figure 3 scenario, BMF, load 0.8, m = 2000, W = 30, ≥ 1e8 packet-resource
   services; reported per CPU-second (time.process_time of the kernel run).
2. SimPy baseline: the same model written with SimPy (benchmarks/simpy_model.py) and
   mrfq on a smaller case; statistical agreement of γ_k (95% CIs over replications) and
   the speed ratio in services per second.

3. Side by side with another checkout (``--compare DIR``): rounds of one throughput run
   per policy in each tree, as separate processes (each tree's own package and Numba
   cache), the order alternating from round to round; per-policy min / median / max and
   the median of the per-round ratios, which is what survives the machine's drift.
   An entry ``BEFORE=AFTER`` runs policy BEFORE in the other checkout and AFTER in this
   one, e.g. ``drfq=drfq:started``: an older checkout's DRFQ (BR's started clock, its
   only one) against this one's DRFQ under the same clock (issue 22: same schedule).

A policy may name DRFQ's virtual-time clock after a colon: ``drfq:started`` (default
``in-service``, SPEC §3).

Usage: python benchmarks/bench_packet.py [--services 1e8] [--simpy-flows 1500]
       [--policies bmf,pf,drfq,drfq-dovetail,drfq:started] [--repeat 5] [--no-simpy]
       [--compare OTHER_CHECKOUT --rounds 10]
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from simpy_model import simulate_simpy  # noqa: E402

from mrfq.packet.engine import run_replication  # noqa: E402
from mrfq.packet.model import PacketModel  # noqa: E402
from mrfq.scenario import load_scenario  # noqa: E402
from mrfq.stats import t_interval  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def throughput(services_target: float, policy: str = "bmf") -> float:
    """One timed run; returns M packet-resource services per CPU-second. ``policy`` may
    end in ``:started`` or ``:in-service`` (DRFQ's clock)."""
    name, _, clock = policy.partition(":")
    clock_option = {"virtual_time": clock} if clock else {}
    scenario = load_scenario(ROOT / "scenarios" / "fig3_packet.toml")
    model = PacketModel.from_scenario(scenario)
    rho = scenario.class_loads(0.8)
    mean_size = 2000.0
    flows = int(services_target / (2 * mean_size)) + 1
    run_replication(model, name, rho, np.random.SeedSequence(0), flows=50,
                    mean_size=mean_size, window=30, **clock_option)  # compile / load the cache
    cpu0, wall0 = time.process_time(), time.perf_counter()
    run = run_replication(model, name, rho, np.random.SeedSequence(1), flows=flows,
                          mean_size=mean_size, window=30, **clock_option)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    rate = run.services / cpu / 1e6
    print(f"throughput: {policy} load 0.8 m=2000 W=30 flows={flows}: {run.services:.3e} "
          f"services in {cpu:.1f} CPU-s ({wall:.1f} s wall): {rate:.1f} M services per "
          f"CPU-second")
    return rate


def gamma_per_class(cls, arrival, completion, mean_size, K, warm):
    T = completion - arrival
    return [mean_size / T[warm:][cls[warm:] == k].mean() for k in range(K)]


def simpy_comparison(flows: int, replications: int) -> None:
    scenario = load_scenario(ROOT / "scenarios" / "fig3_packet.toml")
    model = PacketModel.from_scenario(scenario)
    rho = scenario.class_loads(0.8)
    mean_size, window, K = 100.0, 30, 3
    warm = int(0.05 * flows)
    fast_g, slow_g = [], []
    fast_s = slow_s = 0
    fast_t = slow_t = 0.0
    for rep in range(replications):
        t0 = time.perf_counter()
        run = run_replication(model, "bmf", rho, np.random.SeedSequence(100 + rep),
                              flows=flows, mean_size=mean_size, window=window)
        fast_t += time.perf_counter() - t0
        fast_s += run.services
        fast_g.append(gamma_per_class(run.flow_class, run.arrival, run.completion,
                                      mean_size, K, warm))
        t0 = time.perf_counter()
        out = simulate_simpy(scenario.requirements, rho, "bmf", flows=flows,
                             mean_size=mean_size, window=window, seed=200 + rep)
        slow_t += time.perf_counter() - t0
        slow_s += out["services"]
        slow_g.append(gamma_per_class(out["class"], out["arrival"], out["completion"],
                                      mean_size, K, warm))
    print(f"SimPy comparison: bmf load 0.8 m={mean_size:g} W={window} flows={flows} "
          f"x {replications} replications")
    for k in range(K):
        a = t_interval(np.array(fast_g)[:, k])
        b = t_interval(np.array(slow_g)[:, k])
        overlap = a[1] <= b[2] and b[1] <= a[2]
        print(f"  class {k + 1}: mrfq gamma {a[0]:.4f} [{a[1]:.4f}, {a[2]:.4f}]  "
              f"SimPy {b[0]:.4f} [{b[1]:.4f}, {b[2]:.4f}]  CIs overlap: {overlap}")
    fast_rate, slow_rate = fast_s / fast_t, slow_s / slow_t
    print(f"  mrfq {fast_rate / 1e6:.2f} M services/s, SimPy {slow_rate / 1e3:.1f} k "
          f"services/s: ratio {fast_rate / slow_rate:.0f}x")


def _rates(tree: Path, policies: str, services: float) -> dict[str, float]:
    """One process running this script's throughput part in checkout ``tree``."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    done = subprocess.run([sys.executable, "benchmarks/bench_packet.py", "--policies", policies,
                           "--services", str(services), "--no-simpy"], cwd=tree, env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:  # e.g. an older checkout that does not know drfq:started
        sys.exit(f"bench_packet: {tree} failed on --policies {policies}:\n"
                 f"{done.stderr.strip()}\n(an entry BEFORE=AFTER runs BEFORE in {tree})")
    out = done.stdout
    found = re.findall(r"throughput: (\S+) .*: ([\d.]+) M services per CPU-second", out)
    return {policy: float(rate) for policy, rate in found}


def compare(other: Path, rounds: int, policies: str, services: float) -> None:
    """This checkout against ``other``, interleaved (order alternating by round). An
    entry ``A=B`` of ``policies`` runs A in ``other`` and B here."""
    trees = {"before": other.resolve(), "after": ROOT}
    pairs = [entry.partition("=")[::2] for entry in policies.split(",")]
    pairs = [(before, after or before) for before, after in pairs]
    runs = {"before": ",".join(dict.fromkeys(b for b, _ in pairs)),
            "after": ",".join(dict.fromkeys(a for _, a in pairs))}
    for name, tree in trees.items():
        _rates(tree, runs[name], 1e6)  # compile / load each tree's cache outside the rounds
    rates = {name: [] for name in trees}
    for r in range(rounds):
        for name in (("before", "after") if r % 2 == 0 else ("after", "before")):
            rates[name].append(_rates(trees[name], runs[name], services))
    print(f"before: {trees['before']}\nafter: {trees['after']}\n{rounds} rounds, "
          f"{services:g} services per run, M services per CPU-second (min / median / max)")
    print("| policy | before | after | after / before, median of rounds [quartiles] "
          "| rounds after faster |\n|---|---|---|---|---|")
    for before, after in pairs:
        policy = before if before == after else f"{before} → {after}"
        b = [x[before] for x in rates["before"]]
        a = [x[after] for x in rates["after"]]
        ratios = sorted(y / x for x, y in zip(b, a, strict=True))
        q = statistics.quantiles(ratios, n=4) if rounds > 1 else [ratios[0]] * 3
        print(f"| {policy} | {min(b):.1f} / {statistics.median(b):.1f} / {max(b):.1f} "
              f"| {min(a):.1f} / {statistics.median(a):.1f} / {max(a):.1f} "
              f"| {statistics.median(ratios):.3f} [{q[0]:.3f}, {q[2]:.3f}] "
              f"| {sum(x > 1 for x in ratios)} of {rounds} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--services", type=float, default=1e8)
    parser.add_argument("--simpy-flows", type=int, default=1500)
    parser.add_argument("--replications", type=int, default=5)
    parser.add_argument("--policies", default="bmf",
                        help="comma-separated packet policies for the throughput runs")
    parser.add_argument("--repeat", type=int, default=1,
                        help="throughput runs per policy (the machine is noisy: report all)")
    parser.add_argument("--no-simpy", action="store_true", help="skip the SimPy comparison")
    parser.add_argument("--compare", type=Path, metavar="OTHER_CHECKOUT",
                        help="time this checkout against another, side by side, and stop")
    parser.add_argument("--rounds", type=int, default=10, help="rounds of --compare")
    args = parser.parse_args()
    if args.compare is not None:
        compare(args.compare, args.rounds, args.policies, args.services)
        return
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, "
          f"python {platform.python_version()}")
    for policy in args.policies.split(","):
        rates = sorted(throughput(args.services, policy) for _ in range(args.repeat))
        if args.repeat > 1:
            print(f"  {policy}: {args.repeat} runs, M services per CPU-second: min "
                  f"{rates[0]:.1f}, median {rates[len(rates) // 2]:.1f}, max {rates[-1]:.1f}")
    if not args.no_simpy:
        simpy_comparison(args.simpy_flows, args.replications)


if __name__ == "__main__":
    main()

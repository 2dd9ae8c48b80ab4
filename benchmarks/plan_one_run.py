"""Does a run of the length ``mrfq plan`` gives reach its precision? (an eighteenth-session
review: quickstart, fifo, load 0.6, ``--precision 0.04``: 40 runs of the planned length
reported a median largest-class relative half-width of 6.03%.) Plans one point, then runs
``RUNS`` single runs of ``flows_needed`` flows (seeds 500, 501, …) and prints the
largest-class relative half-width of each run's γ intervals: median, quartiles, the share
within the target, and 1.96 × the runs' relative SD of γ (the spread a normal interval
would need), and the length at which the median would be the target, n (median / h)²
(the half-width falls as 1/√n). ``PILOT_SEED`` (default 1) seeds the plan's pilot.

    PYTHONPATH=. python benchmarks/plan_one_run.py [SCENARIO POLICY LOAD PRECISION RUNS
                                                   [PILOT_SEED]]
"""

import sys

import numpy as np

from mrfq.advisor import advise
from mrfq.scenario import load_scenario
from mrfq.simulation import simulate

if __name__ == "__main__":
    name, policy, load, precision, runs, pilot_seed = (
        sys.argv[1:] + ["quickstart", "fifo", "0.6", "0.04", "40", "1"][len(sys.argv) - 1:])
    load, precision, runs = float(load), float(precision), int(runs)
    scenario = load_scenario(name)
    plan = advise(scenario, precision=precision, policy_names=[policy], loads=[load],
                  seed=int(pilot_seed))
    flows = int(plan["flows_needed"].max())
    widths, gammas = [], []
    for seed in range(500, 500 + runs):
        table = simulate(scenario, policy, load, seed=seed, flows=flows,
                         replications=1).classes
        widths.append(float(((table["ci_high"] - table["ci_low"]) / 2
                             / table["gamma"]).max()))
        gammas.append(table["gamma"].to_numpy())
    widths, gammas = np.array(widths), np.array(gammas)
    spread = 1.96 * gammas.std(axis=0, ddof=1) / gammas.mean(axis=0)
    q1, median, q3 = np.percentile(widths, [25, 50, 75])
    print(f"{name} {policy} load {load}: plan {flows} flows for {precision:.1%} (basis "
          f"{plan['basis'].iloc[0]}, pilot seed {pilot_seed}); {runs} runs: largest-class "
          f"half-width median {median:.2%} [{q1:.2%}, {q3:.2%}], within the target "
          f"{np.mean(widths <= precision):.0%}; the median would be the target at about "
          f"{flows * (median / precision) ** 2:.0f} flows; 1.96 x relative SD of gamma per "
          f"class {np.round(spread * 100, 2)}%")

"""Coverage of the packet intervals on M/D/1 (FIFO, one resource, one-packet flows,
window 1), against the exact E[T] = 1 + ρ / (2 (1 − ρ)) and γ = 1 / E[T] (a finding of
the eighteenth session's review: the means' and percentiles' intervals cover less than
γ's at high load). Per seed one point (``flows`` × ``replications``, warm-up "auto");
prints, per interval, the seeds where it is given, the share covering the exact value
(and the shares of intervals wholly below and above it), and the median relative
half-width.

    PYTHONPATH=. python benchmarks/md1_interval_coverage.py RHO FLOWS REPLICATIONS SEEDS
"""

import sys
import warnings

import pandas as pd

from mrfq.scenario import scenario_from_dict
from mrfq.simulation import simulate

#: exact M/D/1 sojourn percentiles at ρ = 0.9 (VALIDATION.md)
PERCENTILES_09 = {"p50_sojourn": 4.0130, "p95_sojourn": 15.1287, "p99_sojourn": 22.8982}


def coverage(table: pd.DataFrame, low: str, high: str, exact: float) -> str:
    given = table[low].notna()
    inside = ((table[low] <= exact) & (exact <= table[high]))[given]
    below, above = (table[high] < exact)[given].mean(), (table[low] > exact)[given].mean()
    width = ((table[high] - table[low]) / 2 / exact)[given].median()
    return (f"{given.sum()} given, cover {inside.mean():.3f} (interval below the exact "
            f"value {below:.3f}, above {above:.3f}), median half-width {width:.4f}")


if __name__ == "__main__":
    warnings.filterwarnings("ignore")
    rho, flows, replications, seeds = (float(sys.argv[1]), int(sys.argv[2]),
                                       int(sys.argv[3]), int(sys.argv[4]))
    scenario = scenario_from_dict({
        "name": "md1", "resources": ["link"],
        "classes": [{"name": "a", "requirements": [1.0], "load_share": 1}],
        "load": {"axis": "link", "values": [rho]},
        "packet": {"flows": flows, "mean_size": 1, "window": 1, "warmup": "auto",
                   "replications": replications, "seed": 1}})
    table = pd.DataFrame([simulate(scenario, "fifo", rho, seed=1000 + s).classes.iloc[0]
                          for s in range(seeds)])
    sojourn = 1 + rho / (2 * (1 - rho))
    print(f"rho {rho}, {flows} flows x {replications}, {seeds} seeds")
    print("gamma               ", coverage(table, "ci_low", "ci_high", 1 / sojourn))
    print("mean FCT            ", coverage(table, "mean_fct_low", "mean_fct_high",
                                           sojourn))
    print("mean packet sojourn ", coverage(table, "packet_sojourn_low",
                                           "packet_sojourn_high", sojourn))
    # the link's busy fraction is ρ exactly (every packet's work is 1, offered at rate ρ)
    print("utilisation         ", coverage(table, "utilisation_link_low",
                                           "utilisation_link_high", rho))
    for name, exact in PERCENTILES_09.items() if rho == 0.9 else ():
        print(f"{name:20s}", coverage(table, f"{name}_low", f"{name}_high", exact))

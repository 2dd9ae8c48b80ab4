"""Coverage of the flow-level simulator's γ intervals where γ is exact for every size law:
two classes (load shares 3 : 1) on one resource, which every fair policy shares by
processor sharing, so γ_k = 1 − ρ (M/G/1-PS). Per seed one point of ``flows`` ×
``replications`` (seeds 100, 101, …); prints per class the share of the 95% intervals of
``ratio`` (the γ sweeps report) that contain 1 − ρ, how many miss from above and below,
the mean relative bias of the estimate, the median relative half-width and 1.96 times the
seeds' own relative spread (what a half-width should be).

    PYTHONPATH=. python benchmarks/flowsim_ps_coverage.py LOAD FLOWS REPLICATIONS SEEDS [LAW]

LAW: exponential (default), deterministic or a hyperexponential's scv (e.g. 4).
"""

import sys

import numpy as np

from mrfq.fluid import flow_service_rates
from mrfq.sizes import parse_size


def main(load: float, flows: int, replications: int, seeds: int, law: str) -> None:
    size = parse_size({"distribution": law} if law in ("exponential", "deterministic")
                      else {"distribution": "hyperexponential", "scv": float(law)})
    exact = 1.0 - load
    rows = []
    for seed in range(100, 100 + seeds):
        r = flow_service_rates([[1.0], [1.0]], [0.75 * load, 0.25 * load], "pf",
                               [size, size], flows=flows, replications=replications,
                               seed=seed)
        rows.append(np.c_[r.ratio, r.ratio_low, r.ratio_high])
    table = np.array(rows)  # seeds × classes × (estimate, low, high)
    for k in range(2):
        est, low, high = table[:, k, 0], table[:, k, 1], table[:, k, 2]
        cover = np.mean((low <= exact) & (exact <= high))
        print(f"load {load} flows {flows} replications {replications} law {law} class {k}: "
              f"cover {cover:.3f} (above {int(np.sum(low > exact))}, below "
              f"{int(np.sum(high < exact))}) bias {est.mean() / exact - 1:+.4f} median "
              f"half-width {np.median((high - low) / 2 / exact):.4f} 1.96 sd "
              f"{1.96 * est.std(ddof=1) / exact:.4f}")


if __name__ == "__main__":
    args = sys.argv[1:]
    main(float(args[0]), int(args[1]), int(args[2]), int(args[3]),
         args[4] if len(args) > 4 else "exponential")

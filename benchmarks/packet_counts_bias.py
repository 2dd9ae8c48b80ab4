"""Mean packets per flow against m (a finding of the eighteenth session's review): a flow
of size x carries N = 1 + ⌊x/θ⌋ packets (:func:`mrfq.sizes.packet_counts`), and the
packet run offers ρ · E[N] / (m E[x]) of its nominal load. Prints that ratio per size law
and m, from 4·10^6 draws.

    PYTHONPATH=. python benchmarks/packet_counts_bias.py
"""

import numpy as np

from mrfq.sizes import packet_counts, parse_size

LAWS = ({"distribution": "deterministic"}, {"distribution": "cdf", "workload": "websearch"},
        {"distribution": "cdf", "workload": "datamining"},
        {"distribution": "cdf", "workload": "fb_hadoop"},
        {"distribution": "lognormal", "sigma": 2})
MEAN_SIZES = (2.5, 10, 20, 100, 1000)

if __name__ == "__main__":
    rng = np.random.default_rng(2)
    print("law | " + " | ".join(f"m = {m:g}" for m in MEAN_SIZES))
    for spec in LAWS:
        x = parse_size(spec).sample(rng, 4_000_000)
        ratios = [packet_counts(x, m).mean() / (m * x.mean()) for m in MEAN_SIZES]
        name = spec.get("workload", spec["distribution"])
        print(f"{name} | " + " | ".join(f"{r:.4f}" for r in ratios))

"""Mean packets per flow against m: a flow of size x carries N = 1 + ⌊x/θ⌋ packets
(:func:`mrfq.counts.packet_counts`). Prints per size law and m the ratio E[N] / (m E[x])
from 4·10^6 draws: the factor by which a packet run whose flow rate was ρ / (m E[x]) (the
rule before :mod:`mrfq.counts`) offered more than its nominal load; and, after "/", the
same ratio from the exact :func:`mrfq.counts.mean_count` the engines now divide by.

    PYTHONPATH=. python benchmarks/packet_counts_bias.py
"""

import numpy as np

from mrfq.counts import mean_count, packet_counts
from mrfq.sizes import parse_size

LAWS = ({"distribution": "deterministic"}, {"distribution": "cdf", "workload": "websearch"},
        {"distribution": "cdf", "workload": "datamining"},
        {"distribution": "cdf", "workload": "fb_hadoop"},
        {"distribution": "lognormal", "sigma": 2})
MEAN_SIZES = (2.5, 10, 20, 100, 1000)

if __name__ == "__main__":
    rng = np.random.default_rng(2)
    print("law | " + " | ".join(f"m = {m:g}" for m in MEAN_SIZES))
    for spec in LAWS:
        law = parse_size(spec)
        x = law.sample(rng, 4_000_000)
        ratios = [(packet_counts(x, m).mean() / (m * x.mean()),
                   mean_count(law, m) / (m * law.mean)) for m in MEAN_SIZES]
        name = spec.get("workload", spec["distribution"])
        print(f"{name} | " + " | ".join(f"{r:.4f} / {e:.4f}" for r, e in ratios))

"""First-run (compilation) time of packet runs: CPU and wall seconds to import mrfq and
run one small replication per policy. Run it with a fresh cache and the checkout to
measure on the path, e.g.

    NUMBA_CACHE_DIR=$(mktemp -d) PYTHONPATH=/tmp/base python benchmarks/bench_compile.py \
        drfq,pf,bmf

(alternate the checkouts, as the machine drifts).
"""

import sys
import time

import numpy as np

started_wall, started_cpu = time.perf_counter(), time.process_time()
from mrfq.packet.engine import run_replication  # noqa: E402
from mrfq.packet.model import PacketModel  # noqa: E402
from mrfq.scenario import load_scenario  # noqa: E402

scenario = load_scenario("fig3_quick")
model = PacketModel.from_scenario(scenario)
chosen = sys.argv[1] if len(sys.argv) > 1 else "drfq,pf,bmf"
for policy in chosen.split(","):
    run_replication(model, policy, scenario.class_loads(0.5), np.random.SeedSequence(1),
                    flows=200, mean_size=50, window=30)
print(f"{chosen}: wall {time.perf_counter() - started_wall:.1f} s, "
      f"cpu {time.process_time() - started_cpu:.1f} s")

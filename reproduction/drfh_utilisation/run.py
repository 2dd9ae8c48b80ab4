"""A first look at DRFH's utilisation result (issue 24; not the paper's Google-trace
workload, which mrfq cannot load yet): 200 servers drawn from DRFH's Table I, DRFH
Fig. 4's three users as Poisson classes of jobs of 50 tasks (geometric; exponential
durations, mean 10), offered loads 0.7 and 0.9 of the busier resource's pool; Best-Fit
DRFH, First-Fit DRFH and slots (14 per largest server, the paper's best size). Prints the
CPU and memory utilisation over the measured window and the mean and 95th percentile job
completion time (jobs after the first 10%).

    cd <repo> && PYTHONPATH=. python reproduction/drfh_utilisation/run.py
"""

import numpy as np

from mrfq import policies
from mrfq.cluster import ClusterModel, run_cluster
from mrfq.cluster.servers import draw_servers

NAME = policies.named(policies.CLUSTER)
DEMAND = np.array([[0.2, 0.3], [0.5, 0.1], [0.1, 0.3]])


def main() -> None:
    capacity = draw_servers(200, 1)
    for load in (0.7, 0.9):
        for policy in (NAME.DRFH_BEST_FIT, NAME.DRFH_FIRST_FIT, NAME.SLOTS):
            unit = ClusterModel(capacity=capacity, demand=DEMAND, policy=policy,
                                rates=[1.0] * 3, mean_tasks=[50.0] * 3,
                                durations=[10.0] * 3)
            usage = (unit.demand / unit.total).T @ (unit.mean_tasks * unit.durations)
            model = ClusterModel(capacity=capacity, demand=DEMAND, policy=policy,
                                 rates=np.full(3, load / usage.max()),
                                 mean_tasks=[50.0] * 3, durations=[10.0] * 3,
                                 slots_per_server=14)
            run = run_cluster(model, 3000, seed=2)
            measured = run.sojourn[run.arrival >= run.arrival[300]]
            print(f"load {load}: {policy:15s} utilisation CPU {run.utilisation[0]:.1%} "
                  f"memory {run.utilisation[1]:.1%} | job completion time mean "
                  f"{measured.mean():.0f} s, 95th percentile "
                  f"{np.percentile(measured, 95):.0f} s")


if __name__ == "__main__":
    main()

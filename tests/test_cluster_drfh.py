"""DRFH's Table I shipped as data, clusters drawn from it, and Best-Fit DRFH over time on
such a cluster (DRFH Fig. 4's users): the properties the figure shows, checked exactly."""

import numpy as np
import pytest

from mrfq import policies
from mrfq.cluster import ClusterModel
from mrfq.cluster.model import simulate_jobs
from mrfq.cluster.servers import draw_servers, table_i

NAME = policies.named(policies.CLUSTER)
DEMAND = np.array([[0.2, 0.3], [0.5, 0.1], [0.1, 0.3]])


def test_table_i_is_the_papers():
    counts, configs = table_i()
    assert counts.sum() == 12583 and counts.size == 10
    assert configs.max(axis=0).tolist() == [1.0, 1.0]  # normalised to the largest server
    assert counts[np.all(configs == [0.5, 0.5], axis=1)].tolist() == [6732]


def test_draws_follow_the_table_and_the_seed():
    a, b = draw_servers(2000, 7), draw_servers(2000, 7)
    np.testing.assert_array_equal(a, b)
    counts, configs = table_i()
    half = np.mean(np.all(a == [0.5, 0.5], axis=1))
    p = counts[0] / counts.sum()
    assert abs(half - p) < 4 * np.sqrt(p * (1 - p) / 2000)


@pytest.fixture(scope="module")
def fig4():
    capacity = draw_servers(100, 186)  # a pool like the paper's: 52.75 CPU, 52.25 memory
    model = ClusterModel(capacity=capacity, demand=DEMAND, policy=NAME.DRFH_BEST_FIT,
                         rates=[1.0] * 3, durations=[10.0] * 3)
    finish, _, _, samples, _ = simulate_jobs(model, [0.0, 200.0, 500.0], [0, 1, 2],
                                             [6000, 12000, 8000], 186, sample_dt=5.0,
                                             n_samples=400)
    return capacity, finish, samples


def test_two_users_get_equal_global_dominant_shares_to_within_a_task(fig4):
    """DRFH's fairness while users 1 and 2 share the cluster (200–500 s): progressive
    filling keeps their global dominant shares within one task's share of each other."""
    capacity, _, samples = fig4
    pool = capacity.sum(axis=0)
    per_task = (DEMAND / pool).max(axis=1)
    t = np.arange(samples.shape[0]) * 5.0
    window = (t >= 300) & (t < 500)
    dominant = samples[window][:, :2] * per_task[:2]
    assert np.all(np.abs(dominant[:, 0] - dominant[:, 1]) <= per_task[:2].max() + 1e-12)
    assert dominant.mean() == pytest.approx(0.44, abs=0.03)  # DRFH Fig. 4: 44% each


def test_user_one_alone_matches_the_paper_on_a_paper_like_pool(fig4):
    capacity, _, samples = fig4
    t = np.arange(samples.shape[0]) * 5.0
    alone = samples[(t >= 100) & (t < 200), 0].mean() * DEMAND[0] / capacity.sum(axis=0)
    assert alone == pytest.approx([0.40, 0.62], abs=0.03)

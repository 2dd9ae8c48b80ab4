"""Write mrfq/scenarios/random_network.toml: 6 routers (CPU + link each) and 15 classes on
random routes, the "larger network" of issue 23 (BRV 2017 treat such networks only
numerically). Deterministic: numpy's default_rng(2017).

Each class enters at a random router and crosses 1–4 consecutive routers of a ring
(either direction, so some classes cross the same routers in opposite orders); at every
router it visits the CPU, then the link. Per-packet times: CPU U(0.1, 1), link
U(0.3, 1), normalised so the largest is 1. Relative loads: 1, 2 or 3.

    python reproduction/networks/make_random_network.py
"""

from pathlib import Path

import numpy as np

ROUTERS, CLASSES = 6, 15
OUT = Path(__file__).resolve().parents[2] / "mrfq" / "scenarios" / "random_network.toml"


def main() -> None:
    rng = np.random.default_rng(2017)
    resources = [f"{kind}{r}" for r in range(ROUTERS) for kind in ("cpu", "link")]
    lines = ['name = "random_network"',
             'description = """6 routers (CPU + link each) on a ring, 15 classes on random '
             'routes of 1-4 routers (reproduction/networks/make_random_network.py, '
             'seed 2017)"""',
             f"resources = {resources!r}".replace("'", '"'), "", "[routers]"]
    lines += [f'r{r} = ["cpu{r}", "link{r}"]' for r in range(ROUTERS)]
    for k in range(CLASSES):
        start = int(rng.integers(ROUTERS))
        hops = int(rng.integers(1, 5))
        step = 1 if rng.random() < 0.5 else -1
        path = [(start + step * h) % ROUTERS for h in range(hops)]
        req = np.zeros(2 * ROUTERS)
        for r in path:
            req[2 * r] = rng.uniform(0.1, 1.0)
            req[2 * r + 1] = rng.uniform(0.3, 1.0)
        req = np.round(req / req.max(), 3)
        route = [resources[2 * r + i] for r in path for i in (0, 1)]
        lines += ["", "[[classes]]", f'name = "c{k}"',
                  f"requirements = {req.tolist()!r}",
                  f"route = {route!r}".replace("'", '"'),
                  f"load_share = {int(rng.integers(1, 4))}"]
    lines += ["", "[load]", 'axis = "max"', "values = [0.3, 0.5, 0.7, 0.9]", "",
              "[fluid]", 'policies = ["bmf", "pf"]', 'method = "simulation"',
              "flows = 200000", "replications = 10", "",
              "[packet]", 'policies = ["bmf", "pf"]', "mean_size = 1000", "window = 30",
              "flows = 20000", 'warmup = "auto"', "replications = 5", "seed = 1", ""]
    OUT.write_text("\n".join(lines))


if __name__ == "__main__":
    main()

"""Servers drawn from a table in a scenario (``[cluster] servers = {table, count, seed}``):
DRFH's Table I or a user's CSV in its format. The drawn servers are
:func:`mrfq.cluster.servers.draw_servers`'s, a two-type table gives its weights'
frequencies (binomial check), a stored scenario rebuilds the same servers without the
table, and every bad input is one line naming its field (the table file's: file and row)."""


import numpy as np
import pytest
from conftest import assert_cluster_refuses

from mrfq import policies
from mrfq.cluster.servers import TABLE_I_FILE, draw_servers, read_table, table_i
from mrfq.errors import InputError
from mrfq.scenario import scenario_from_dict

NAME = policies.named(policies.CLUSTER)


def _raw(servers, resources=("cpu", "memory")):
    return {"resources": list(resources),
            "classes": [{"name": "a", "requirements": [1.0, 0.5], "load_share": 1}],
            "load": {"values": [0.5]},
            "cluster": {"policies": [NAME.DRF], "jobs": 400, "tasks_per_resource": 10000,
                        "servers": servers}}


def _capacities(scenario) -> np.ndarray:
    return np.array([cap for cap, count, _ in scenario.cluster.servers for _ in range(count)])


def test_table_i_is_drfh_table_i():
    counts, configs = table_i()
    assert counts.sum() == 12583 and counts.size == 10
    assert configs[0].tolist() == [0.5, 0.5] and configs[3].tolist() == [1.0, 1.0]
    assert read_table(TABLE_I_FILE)[2] == ("cpu", "memory")


@pytest.mark.parametrize("count,seed", [(1, 0), (100, 1), (37, 5)])
def test_google_servers_are_draw_servers(count, seed):
    from mrfq.kinds import cluster as kind  # the kind sits above the scenario layer

    scenario = scenario_from_dict(_raw({"table": "google", "count": count, "seed": seed}),
                                  "s.toml")
    expected = draw_servers(count, seed)
    assert np.array_equal(_capacities(scenario), expected)
    # what a run uses: the point's model has exactly these servers, in the order drawn
    assert np.array_equal(kind.model(scenario, NAME.DRF, 0.5).capacity, expected)


def test_the_seed_defaults_to_1_and_a_name_or_case_of_resource_may_differ():
    default = scenario_from_dict(_raw({"table": "google", "count": 50}), "s.toml")
    assert np.array_equal(_capacities(default), draw_servers(50, 1))
    # by position: a (cpu, link) scenario takes Table I's memory as its link
    other = scenario_from_dict(_raw({"table": "google", "count": 50}, ("CPU", "link")),
                               "s.toml")
    assert np.array_equal(_capacities(other), draw_servers(50, 1))


TWO_TYPES = "servers,cpu,memory\n3,1.0,0.25\n1,0.5,2.0\n"


def test_a_user_table_gives_its_weights_frequencies(tmp_path):
    """3 servers of type (1, 0.25) for 1 of (0.5, 2): each draw is the first type with
    p = 3/4, so of n = 4000 draws the count is Binomial(n, 3/4), sd = √(n p (1−p)) = 27.4;
    we accept ± 4 sd (110, a 2.7% band; a false alarm once in ~16 000 seeds)."""
    (tmp_path / "mine.csv").write_text(TWO_TYPES)
    path = tmp_path / "s.toml"
    path.write_text("")  # the scenario's folder: the table is found beside it
    n, p = 4000, 0.75
    sd = np.sqrt(n * p * (1 - p))
    for seed in (1, 2, 3):
        scenario = scenario_from_dict(_raw({"table": "mine.csv", "count": n, "seed": seed}),
                                      str(path))
        capacity = _capacities(scenario)
        assert capacity.shape == (n, 2)
        first = np.all(capacity == [1.0, 0.25], axis=1)
        assert np.all(first | np.all(capacity == [0.5, 2.0], axis=1))  # only the rows
        assert abs(first.sum() - n * p) <= 4 * sd, (seed, first.sum())
        assert np.array_equal(capacity, draw_servers(n, seed, tmp_path / "mine.csv"))


def test_a_stored_scenario_rebuilds_the_same_servers_without_the_table(tmp_path):
    """to_dict stores the drawn list (not the spec): it rebuilds the same servers where
    the table file is not (a results directory elsewhere, a table since edited)."""
    from mrfq.kinds import cluster as kind

    table = tmp_path / "mine.csv"
    table.write_text(TWO_TYPES)
    (tmp_path / "s.toml").write_text("")
    for spec, source in (({"table": "google", "count": 40, "seed": 2}, "s.toml"),
                         ({"table": "mine.csv", "count": 25, "seed": 9},
                          str(tmp_path / "s.toml"))):
        scenario = scenario_from_dict(_raw(spec), source)
        stored = scenario.to_dict()
        assert isinstance(stored["cluster"]["servers"], list)
        assert len(stored["cluster"]["servers"]) == spec["count"]
        table.write_text("servers,cpu,memory\n1,9,9\n")  # the table changes afterwards
        again = scenario_from_dict(stored, "elsewhere/s.json")
        assert again.cluster == scenario.cluster
        assert np.array_equal(_capacities(again), _capacities(scenario))
        assert kind.key_parts(again, _Point()) == kind.key_parts(scenario, _Point())
        table.write_text(TWO_TYPES)


class _Point:
    policy, load = NAME.DRF, 0.5


@pytest.mark.parametrize("servers,field,problem", [
    ({"table": "goggle", "count": 3}, "cluster.servers.table",
     "unknown table 'goggle' (names: google; or a CSV file's path)"),
    ({"table": "none.csv", "count": 3}, "cluster.servers.table",
     "no such server table file: none.csv (looked for "),
    ({"table": "google", "count": 0}, "cluster.servers.count", "must be >= 1, got 0"),
    ({"table": "google", "count": 2.5}, "cluster.servers.count",
     "must be an integer, got 2.5"),
    ({"table": "google", "count": 3, "seed": 1.5}, "cluster.servers.seed",
     "must be an integer, got 1.5"),
    ({"table": "google", "count": 3, "seed": "x"}, "cluster.servers.seed",
     "must be an integer, got 'x'"),
    ({"table": "google", "count": 3, "seed": -1}, "cluster.servers.seed",
     "must be >= 0, got -1"),
    ({"table": "google"}, "cluster.servers.count", "drawing servers needs a table and a"),
    ({"count": 3}, "cluster.servers.table", "drawing servers needs a table and a"),
    ({"table": 3, "count": 3}, "cluster.servers.table", "must be a string, got 3"),
    ({"table": "google", "count": 3, "n": 1}, "cluster.servers.n",
     "unknown key (known keys: count, seed, table)"),
])
def test_a_bad_draw_names_its_field(servers, field, problem):
    with pytest.raises(InputError) as info:
        scenario_from_dict(_raw(servers), "s.toml")
    assert str(info.value).startswith(f"s.toml: {field}: {problem}"), str(info.value)


@pytest.mark.parametrize("resources,problem", [
    (("memory", "cpu"), "column 1 of table google is cpu, the scenario's resource 2 "
                        "(memory, cpu): columns are matched to resources by position"),
    (("cpu", "memory", "disk"), "table google has 2 resources (cpu, memory), the "
                                "scenario 3 (cpu, memory, disk)"),
])
def test_a_table_whose_resources_do_not_match_is_refused(resources, problem):
    raw = _raw({"table": "google", "count": 3}, resources)
    raw["classes"][0]["requirements"] = [1.0] * len(resources)
    with pytest.raises(InputError) as info:
        scenario_from_dict(raw, "s.toml")
    assert str(info.value).startswith(f"s.toml: cluster.servers.table: {problem}"), \
        str(info.value)


ROWS = {
    "columns": ("servers,cpu,memory\n3,1,1\n2,0.5\n", "row 3: has 2 columns, the header 3"),
    "number": ("servers,cpu,memory\n3,1,x\n", "row 2, memory: must be a number, got 'x'"),
    "negative": ("servers,cpu,memory\n3,-1,1\n",
                 "row 2, cpu: must be a positive capacity, got -1"),
    "zero": ("servers,cpu,memory\n3,1,1\n4,0,1\n",
             "row 3, cpu: must be a positive capacity, got 0"),
    "count zero": ("servers,cpu,memory\n0,1,1\n", "row 2, servers: must be >= 1, got 0"),
    "count negative": ("servers,cpu,memory\n-2,1,1\n",
                       "row 2, servers: must be >= 1, got -2"),
    "count fraction": ("servers,cpu,memory\n1.5,1,1\n",
                       "row 2, servers: must be an integer >= 1, got '1.5'"),
    "header": ("count,cpu,memory\n1,1,1\n", "row 1: the header must be "
               "servers,<resource>,... (distinct names), got 'count,cpu,memory'"),
    "no rows": ("servers,cpu,memory\n", "has no server row"),
    "empty": ("", "is empty (a header servers,<resource>,... and rows)"),
}


@pytest.mark.parametrize("case", list(ROWS))
def test_a_malformed_table_names_file_and_row(tmp_path, case):
    text, problem = ROWS[case]
    table = tmp_path / "mine.csv"
    table.write_text(text)
    (tmp_path / "s.toml").write_text("")
    with pytest.raises(InputError) as info:
        scenario_from_dict(_raw({"table": "mine.csv", "count": 3}), str(tmp_path / "s.toml"))
    assert str(info.value) == f"{table.resolve()}: {problem}"


SCENARIO = ('resources = ["cpu", "memory"]\n[[classes]]\nname = "a"\n'
            'requirements = [1, 0.5]\nload_share = 1\n[cluster]\n')
BAD = {"name": ('servers = { table = "goggle", count = 10 }\n', None,
                "{path}: cluster.servers.table: unknown table 'goggle' (names: google; "
                "or a CSV file's path)"),
       "count": ('servers = { table = "google", count = 0 }\n', None,
                 "{path}: cluster.servers.count: must be >= 1, got 0"),
       "row": ('servers = { table = "mine.csv", count = 10, seed = 3 }\n',
               "servers,cpu,memory\n3,1,1\n2,0.5,zero\n",
               "{table}: row 3, memory: must be a number, got 'zero'")}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_draw_is_one_line_exit_2_and_nothing_written(tmp_path, case):
    text, table_text, message = BAD[case]
    path, table = tmp_path / "s.toml", tmp_path / "mine.csv"
    path.write_text(SCENARIO + text)
    if table_text:
        table.write_text(table_text)
    assert_cluster_refuses(path,
                           "error: " + message.format(path=path, table=table.resolve()))


def test_a_trace_scenario_runs_on_drawn_servers(tmp_path):
    """A trace needs servers; drawn ones do (its two resources are Table I's)."""
    from pathlib import Path

    trace = Path(__file__).resolve().parent / "data" / "task_events_small.csv"
    raw = {"resources": ["cpu", "memory"],
           "cluster": {"trace": str(trace), "policies": [NAME.DRF], "batches": 2,
                       "servers": {"table": "google", "count": 12, "seed": 4}}}
    scenario = scenario_from_dict(raw, "s.toml")
    assert np.array_equal(_capacities(scenario), draw_servers(12, 4))
    assert scenario_from_dict(scenario.to_dict()).cluster == scenario.cluster

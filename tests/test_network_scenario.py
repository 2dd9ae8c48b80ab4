"""Networks in scenario files (SPEC §3.2): ``[routers]`` and class routes, their defaults
(the tandem, unchanged), and every bad input as one line naming the field, exit 2."""

import subprocess
import sys

import pytest
from conftest import FIG3_CLASSES

from mrfq.errors import InputError
from mrfq.kinds import Point, point_filename
from mrfq.scenario import load_scenario, packaged_scenarios, scenario_from_dict

HEAD = ('resources = ["cpu1", "link1", "cpu2", "link2"]\n'
        '[load]\nvalues = [0.5]\n')


def _class(name, requirements, route=None):
    text = f'[[classes]]\nname = "{name}"\nrequirements = {requirements}\nload_share = 1\n'
    return text + (f"route = {route}\n" if route is not None else "")


GOOD_ROUTERS = '[routers]\nedge = ["cpu1", "link1"]\ncore = ["cpu2", "link2"]\n'

BAD = {
    "unknown resource in route": (
        _class("a", "[1, 1, 0, 0]", '["cpu1", "disk"]'), "classes[0].route[1]"),
    "resource twice": (
        _class("a", "[1, 1, 0, 0]", '["cpu1", "link1", "cpu1"]'), "classes[0].route"),
    "route through a zero requirement": (
        _class("a", "[1, 1, 0, 0]", '["cpu1", "link1", "cpu2"]'), "classes[0].route"),
    "route skips a nonzero requirement": (
        _class("a", "[1, 1, 0.5, 0]", '["cpu1", "link1"]'), "classes[0].route"),
    "route not a list": (_class("a", "[1, 1, 0, 0]", '"cpu1"'), "classes[0].route"),
    "router sharing a resource": (
        _class("a", "[1, 1, 0, 0]")
        + '[routers]\nedge = ["cpu1", "link1"]\ncore = ["link1", "cpu2", "link2"]\n',
        "routers.core"),
    "resource in no router": (
        _class("a", "[1, 1, 0, 0]") + '[routers]\nedge = ["cpu1", "link1"]\ncore = ["cpu2"]\n',
        "routers"),
    "router naming an unknown resource": (
        _class("a", "[1, 1, 0, 0]") + '[routers]\nedge = ["cpu1", "link1", "disk"]\n',
        "routers.edge[2]"),
    "empty router": (_class("a", "[1, 1, 0, 0]") + '[routers]\nedge = []\n', "routers.edge"),
    "no router": (_class("a", "[1, 1, 0, 0]") + '[routers]\n', "routers: is empty"),
    "router without a name": (
        _class("a", "[1, 1, 0, 0]") + '[routers]\n"" = ["cpu1", "link1"]\n'
        'core = ["cpu2", "link2"]\n', "routers"),
    "resource twice in one router": (
        _class("a", "[1, 1, 0, 0]") + '[routers]\nedge = ["cpu1", "link1", "cpu1"]\n'
        'core = ["cpu2", "link2"]\n', "routers.edge"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_networks_are_one_line_naming_the_field(tmp_path, case):
    body, field = BAD[case]
    path = tmp_path / "bad.toml"
    path.write_text(HEAD + body)
    out = tmp_path / "out.csv"
    result = subprocess.run([sys.executable, "-m", "mrfq.cli", "fluid", str(path), "-o",
                             str(out)], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}: {field}:"), lines
    assert not out.exists()


def test_mr3_on_several_routers_is_accepted(tmp_path):
    """MR3 runs one ingress per router (SPEC §3.2): a network scenario may list it."""
    path = tmp_path / "mr3.toml"
    path.write_text(HEAD + _class("a", "[1, 1, 0, 0]") + GOOD_ROUTERS
                    + '[packet]\npolicies = ["bmf", "mr3"]\n')
    scenario = load_scenario(str(path))
    assert scenario.network and "mr3" in scenario.packet.policies


def _raw(classes, routers=None):
    raw = {"resources": ["cpu1", "link1", "cpu2", "link2"], "classes": classes,
           "load": {"values": [0.5]}}
    if routers is not None:
        raw["routers"] = routers
    return raw


def test_routes_and_routers_parse_to_indices():
    s = scenario_from_dict(_raw(
        [{"name": "long", "requirements": [0.5, 1, 0.5, 1], "load_share": 1,
          "route": ["cpu2", "link2", "cpu1", "link1"]},
         {"name": "short", "requirements": [0, 0, 1, 0.5], "load_share": 1}],
        {"edge": ["link1", "cpu1"], "core": ["cpu2", "link2"]}))
    assert s.routes == [(2, 3, 0, 1), (2, 3)]
    assert s.routers == (("edge", (0, 1)), ("core", (2, 3)))
    assert s.router_index.tolist() == [0, 0, 1, 1]
    assert s.network
    again = scenario_from_dict(s.to_dict())  # the stored dict rebuilds the network
    assert again.routes == s.routes and again.routers == s.routers


def test_defaults_spelled_out_are_the_tandem():
    """A route equal to the default and one router holding every resource are the model
    without them: same stored dict, same point keys."""
    plain = scenario_from_dict(_raw([{"name": "a", "requirements": [1, 0, 0.5, 1],
                                      "load_share": 1}]))
    spelled = scenario_from_dict(_raw(
        [{"name": "a", "requirements": [1, 0, 0.5, 1], "load_share": 1,
          "route": ["cpu1", "cpu2", "link2"]}],
        {"all": ["link2", "cpu2", "link1", "cpu1"]}))
    assert not plain.network and not spelled.network
    stored = spelled.to_dict()  # the lone router's name is kept for drawings, nothing else
    assert stored.pop("routers") == {"all": ["cpu1", "link1", "cpu2", "link2"]}
    assert plain.to_dict() == stored
    assert "routers" not in plain.to_dict() and "route" not in plain.to_dict()["classes"][0]
    assert spelled.routers == () and spelled.drawn_routers == (("all", (0, 1, 2, 3)),)
    assert scenario_from_dict(spelled.to_dict()).drawn_routers == spelled.drawn_routers
    assert plain.drawn_routers == ()
    for point in (Point("packet", "bmf", 0.5, 0), Point("packet", "drfq", 0.5, 0),
                  Point("fluid", "drf", 0.5)):
        assert point_filename(plain, point) == point_filename(spelled, point)


def test_a_route_changes_packet_keys_not_fluid_keys():
    base = [{"name": "a", "requirements": [1, 1, 0, 0], "load_share": 1}]
    plain = scenario_from_dict(_raw(base))
    routed = scenario_from_dict(_raw([{**base[0], "route": ["link1", "cpu1"]}]))
    assert point_filename(plain, Point("fluid", "bmf", 0.5)) == point_filename(
        routed, Point("fluid", "bmf", 0.5))
    assert point_filename(plain, Point("packet", "bmf", 0.5, 0)) != point_filename(
        routed, Point("packet", "bmf", 0.5, 0))


def test_the_order_and_names_of_routers_keep_packet_keys_and_numbers():
    """Routers are a partition of the resources: listed in another order, or renamed, a
    network simulates the same numbers (every policy, bit for bit), so its points keep
    their keys (a review found a reordered [routers] table recomputing them); moving a
    resource to another router changes them."""
    from mrfq.simulation import simulate

    classes = [{"name": "long", "requirements": [1, 0.5, 0.5, 1], "load_share": 1},
               {"name": "back", "requirements": [0.5, 1, 1, 0.3], "load_share": 1,
                "route": ["cpu2", "link2", "cpu1", "link1"]},
               {"name": "local", "requirements": [0.5, 1, 0, 0], "load_share": 1}]
    packet = {"flows": 300, "mean_size": 10, "window": 4, "replications": 1, "seed": 3}

    def scenario(routers):
        return scenario_from_dict({**_raw(classes, routers), "packet": packet})

    listed = scenario({"edge": ["cpu1", "link1"], "core": ["cpu2", "link2"]})
    others = [scenario({"core": ["link2", "cpu2"], "edge": ["link1", "cpu1"]}),
              scenario({"b": ["cpu2", "link2"], "a": ["cpu1", "link1"]})]
    moved = scenario({"edge": ["cpu1"], "core": ["link1", "cpu2", "link2"]})
    for policy in ("drfq", "drfq-dovetail", "mr3", "bottleneck-fq", "bmf", "pf", "fifo"):
        point = Point("packet", policy, 0.5, 0)
        assert {point_filename(s, point) for s in others} == {point_filename(listed, point)}
        assert point_filename(moved, point) != point_filename(listed, point)
        gamma = simulate(listed, policy, 0.5, seed=5).classes["gamma"].tolist()
        for other in others:
            assert simulate(other, policy, 0.5, seed=5).classes["gamma"].tolist() == gamma


@pytest.mark.parametrize("name", [n for n in packaged_scenarios()
                                  if n not in ("linear_network", "nfv_chain", "triangle",
                                               "random_network")])
def test_every_existing_packaged_scenario_is_a_tandem(name):
    scenario = load_scenario(name)
    assert not scenario.network
    assert scenario.router_index.tolist() == [0] * len(scenario.resources)


def test_fig3_default_routes():
    s = scenario_from_dict({"resources": ["cpu", "link"], "classes": FIG3_CLASSES})
    assert s.routes == [(0, 1), (0, 1), (0, 1)]


def test_network_drawing_writes_png_and_pdf(tmp_path):
    from mrfq.plot_network import network_drawing  # matplotlib only for this test

    s = load_scenario("nfv_chain")
    written = network_drawing(list(s.resources), [(n, list(m)) for n, m in s.routers],
                              [list(r) for r in s.routes], s.class_names,
                              tmp_path / "net", s.name)  # no suffix: PNG and PDF
    assert [p.suffix for p in written] == [".png", ".pdf"]
    assert all(p.stat().st_size > 1000 for p in written)


def test_a_list_of_fq_resources_survives_overrides_and_the_stored_dict():
    """A valid fq_resource list was refused ("must be a resource name or a non-empty
    list of them, got ('y', 'z')") as soon as an option overrode any [packet] value, and
    scenario_from_dict(s.to_dict()) raised: the scenario keeps it as a tuple."""
    raw = {"name": "f", "resources": ["x", "y", "z"], "routers": {"r1": ["x"], "r2": ["y", "z"]},
           "classes": [{"name": "a", "requirements": [1, 0.5, 0.5], "load_share": 1}],
           "packet": {"fq_resource": ["y", "z"]}}
    s = scenario_from_dict(raw, "f.toml")
    assert s.with_overrides(flows=300, seed=4).packet.fq_resource == ("y", "z")
    assert s.to_dict()["packet"]["fq_resource"] == ["y", "z"]
    assert scenario_from_dict(s.to_dict()).fq_resources == s.fq_resources == (1, 2)


def test_a_cluster_section_beside_routes_or_routers_is_refused():
    """A [cluster] section in a network scenario ran its cluster points as if there were
    no routes or routers (the cluster model has none), without a word."""
    raw = {"resources": ["x", "y"], "routers": {"rx": ["x"], "ry": ["y"]},
           "classes": [{"name": "A", "requirements": [1.0, 0.5], "load_share": 1},
                       {"name": "B", "requirements": [0.5, 1.0], "route": ["y", "x"],
                        "load_share": 1}],
           "cluster": {"policies": ["drf"], "tasks_per_resource": 10, "jobs": 300}}
    with pytest.raises(InputError) as info:
        scenario_from_dict(raw, "c.toml")
    assert str(info.value).startswith("c.toml: cluster: a cluster (SPEC §6")
    del raw["routers"], raw["classes"][1]["route"]  # the tandem: a cluster is fine
    assert scenario_from_dict(raw, "c.toml").cluster.policies == ("drf",)


def test_an_override_naming_no_resource_for_bottleneck_fq_is_refused():
    """with_overrides(fq_resource="nope") was taken, and the run then failed with a
    traceback (tuple.index); a file's unknown name was already refused."""
    s = load_scenario("fig3_quick")
    with pytest.raises(InputError) as info:
        s.with_overrides(fq_resource="nope")
    assert str(info.value) == "fq_resource: unknown resource 'nope' (choose from cpu, link)"
    assert s.with_overrides(fq_resource="cpu").fq_resources == (0,)

"""Defects a review of the packet metrics a user reads found (2026-11-28, twenty-sixth
session), each fixed and pinned here (the timeline's split services are in
tests/test_packet_flows.py, the allocation lab's fixes in
tests/test_allocation_drfh_properties.py): a flows directory of another scenario kept
that scenario's figure; ``-o`` naming the scenario file lost its option; an unknown option
or command was reported as ``usage``; a flow starting at the timeline's end blamed its
``stop``; ``mrfq plot`` of a flows run without its timeline asked for a sweep;
``mrfq simulate`` called the mean flow completion time ``mean_sojourn``; explicit flows
needed a load_share they never use."""

from pathlib import Path

import pytest
from click.testing import CliRunner

import mrfq
from mrfq.cli import main
from mrfq.errors import InputError
from mrfq.scenario import load_scenario

SMALL = """name = "{name}"
resources = ["cpu", "link"]
[[classes]]
name = "1"
requirements = [0.1, 1.0]
{share}
[[classes]]
name = "2"
requirements = [1.0, 0.1]
{share}
[packet]
policies = ["drfq"]
window = 4
[timeline]
duration = 20
interval = 5
[[flows]]
name = "A"
class = "1"
[[flows]]
name = "B"
class = "2"
start = {start}
"""


def _scenario(tmp_path: Path, name: str = "small", share: str = "load_share = 1",
              start: float = 2.0) -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(SMALL.format(name=name, share=share, start=start))
    return path


def _cli(*args: str):
    return CliRunner().invoke(main, list(args))


def test_a_flows_directory_of_another_scenario_is_refused(tmp_path):
    """Its figure, named after the other scenario, stayed beside the new run's tables."""
    out = tmp_path / "out"
    mrfq.flows(_scenario(tmp_path), out)
    mrfq.flows(_scenario(tmp_path), out)  # the same scenario again: fine
    with pytest.raises(InputError, match=r"holds the run of scenario 'small' \(flows.csv, "
                                         r"timeline.csv\): give this run of 'other' a "
                                         "directory of its own"):
        mrfq.flows(_scenario(tmp_path, "other"), out)
    assert not list(out.glob("other*"))
    (out / "timeline.csv").unlink()  # flows.csv alone still marks the run
    with pytest.raises(InputError, match="holds the run of scenario 'small'"):
        mrfq.flows(_scenario(tmp_path, "other"), out)
    # a scenario.json that cannot be read (or that today's checks refuse) is replaced
    (out / "scenario.json").write_text("{bad")
    mrfq.flows(_scenario(tmp_path, "other"), out)
    assert (out / "other_dominant.png").is_file()


def test_output_naming_the_scenario_file_names_the_option(tmp_path):
    path = _scenario(tmp_path)
    result = _cli("flows", str(path), "-o", str(path))
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: {path}: --output: exists and is not a directory"


@pytest.mark.parametrize(("args", "line"), [
    (("flows", "x.toml", "--bogus"), "error: --bogus: no such option (see mrfq flows -h)"),
    (("--bogus",), "error: --bogus: no such option (see mrfq -h)"),
    (("bogus",), "error: bogus: no such command (see mrfq -h)"),
    (("flw",), "error: flw: no such command (did you mean flows?)"),
])
def test_unknown_options_and_commands_are_named(args, line):
    result = _cli(*args)
    assert result.exit_code == 2 and result.stderr.strip() == line


def test_a_flow_starting_at_the_timelines_end_blames_its_start(tmp_path):
    with pytest.raises(InputError) as caught:
        load_scenario(_scenario(tmp_path, start=20.0))
    assert caught.value.field == "flows[1].start"
    assert caught.value.problem.startswith("must be before timeline.duration (20)")


def test_plot_of_a_flows_run_without_its_timeline_says_so(tmp_path):
    out = tmp_path / "out"
    mrfq.flows(_scenario(tmp_path), out)
    (out / "timeline.csv").unlink()
    result = _cli("plot", str(out))
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"error: {out / 'timeline.csv'}: missing: this flows "
                                     "run's timeline (flows.csv is here): run mrfq flows "
                                     "again")


def test_simulate_names_the_mean_flow_completion_time_as_a_summary_does():
    point = mrfq.simulate("fig3_quick", "bmf", 0.5, flows=600, mean_size=20, window=4)
    for table in (point.classes, point.replications):
        assert "mean_fct" in table and "mean_sojourn" not in table
    assert {"mean_fct_low", "mean_fct_high"} <= set(point.classes)


def test_explicit_flows_need_no_load_share(tmp_path):
    """A class of a scenario with [[flows]] gets load_share 1 when it gives none; without
    [[flows]] it is still required."""
    scenario = load_scenario(_scenario(tmp_path, share=""))
    assert [c.load_share for c in scenario.classes] == [1.0, 1.0]
    assert len(mrfq.flows(scenario, tmp_path / "out").flows) == 2
    text = _scenario(tmp_path, share="").read_text()
    plain = tmp_path / "plain.toml"
    plain.write_text(text[:text.index("[timeline]")])
    with pytest.raises(InputError, match="load_share: missing"):
        load_scenario(plain)


def test_the_progress_line_at_its_total_shows_no_unknown_eta(capsys):
    """A run whose first report is its total (every point stored, or one chunk) said
    ``eta ?`` at 100%."""
    from mrfq.progress import Progress

    shown = Progress("points", always=True)
    shown(5, 5)
    line = capsys.readouterr().err
    assert "5/5 (100.0%)" in line and line.rstrip().endswith("eta    0.0s")


# --- the fluid side's review (2026-11-28): tolerances the solver cannot honour ---------


def test_a_tolerance_below_the_solvers_accuracy_is_refused_everywhere(tmp_path):
    """The linear solves stop at a relative residual of 1e-12, leaving γ up to ~1e-10 off
    (a review: 5e-10 at tolerance 1e-10, 1e-10 at 1e-14, where the truncation estimate
    said 5e-11 and 1e-17): a tolerance below 1e-9 was accepted and not met."""
    from mrfq.fluid.markov import service_rates

    with pytest.raises(InputError, match=r"must be >= 1e-9, got 1e-12") as caught:
        service_rates("pf", [[1.0]], [0.5], tolerance=1e-12)
    assert caught.value.field == "tolerance"
    text = Path(mrfq.__file__).parent.joinpath("scenarios", "quickstart.toml").read_text()
    path = tmp_path / "q.toml"
    path.write_text(text + "\n[fluid]\ntolerance = 1e-12\n" if "[fluid]" not in text
                    else text.replace("[fluid]", "[fluid]\ntolerance = 1e-12", 1))
    with pytest.raises(InputError) as caught:
        load_scenario(path)
    assert caught.value.field == "fluid.tolerance"
    # the CLI: one line naming the option, no numpy warning before it, nothing written
    plain = tmp_path / "plain.toml"
    plain.write_text(text)
    result = _cli("fluid", str(plain), "-o", str(tmp_path / "out.csv"), "--jobs", "1",
                  "--tolerance", "1e-20")
    assert result.exit_code == 2 and not (tmp_path / "out.csv").exists()
    assert result.stderr.splitlines() == ["error: --tolerance: must be >= 1e-9, got 1e-20: "
                                          "below it the Markov solver's linear solves (up "
                                          "to ~1e-10 off) would exceed it, unseen by its "
                                          "truncation estimate"]
    assert _cli("fluid", str(plain), "-o", str(tmp_path / "out.csv"), "--tolerance",
                "0").stderr.strip() == "error: --tolerance: must be in [1e-9, 1), got 0"
    # balanced fairness has no linear solve: its recursion takes a finer tolerance
    assert service_rates("bf", [[1.0]], [0.5], tolerance=1e-12).gamma[0] == pytest.approx(0.5)


def test_a_flow_has_no_dominant_share_where_it_is_absent(tmp_path):
    """The figure drew a flow that had not started at share 0 (a review): its dominant
    rows are now NaN in intervals wholly before its start (flow B starts at 12: [0, 5)
    and [5, 10)) or after its completion, and a share where it is present."""
    result = mrfq.flows(_scenario(tmp_path, start=12.0), tmp_path / "out")
    rows = result.timeline[(result.timeline["resource"] == "dominant")
                           & (result.timeline["flow"] == "B")].set_index("time")["share"]
    assert rows.loc[[0.0, 5.0]].isna().all() and rows.loc[[10.0, 15.0]].notna().all()
    a = result.timeline[(result.timeline["resource"] == "dominant")
                        & (result.timeline["flow"] == "A")]["share"]
    assert a.notna().all()  # present throughout (backlogged past the timeline's end)
    cpu = result.timeline[(result.timeline["resource"] == "cpu")
                          & (result.timeline["flow"] == "B")]["share"]
    assert cpu.notna().all()  # the per-resource service stays a number (0 before)

"""Bad input: one line `error: <file>: <field>: <problem>`, exit code 2, no output file."""

import subprocess
import sys
from pathlib import Path

import pytest

GOOD = Path(__file__).resolve().parent.parent / "scenarios" / "fig2_unbalanced.toml"


def _run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "mrfq.cli", *args], capture_output=True,
                          text=True, cwd=cwd)


def _scenario(tmp_path, text):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    return path


BAD = {
    "unknown key": ('[load]\naxis = "link"\nvalus = [0.5]\n', "load.valus"),
    "unknown policy": ('[fluid]\npolicies = ["dfr"]\n', "fluid.policies"),
    "wrong length": ("", "classes[0].requirements"),
    "negative": ("", "classes[0].requirements[0]"),
    "all zero": ("", "classes[0].requirements"),
    "unstable": ('[load]\naxis = "link"\nvalues = [1.2]\n', "load.values[0]"),
    "repeated load": ('[load]\naxis = "link"\nvalues = [0.4, 0.4]\n', "load.values"),
    "precision": ('[packet]\nprecision = 1.5\n', "packet.precision"),
    "budget": ('[packet]\nprecision = 0.1\nreplications = 20\nmax_replications = 10\n',
               "packet.max_replications"),
    # the lines below land in the second [[classes]] table
    "pareto shape 1": ('size = {distribution = "pareto", shape = 1}\n', "classes[1].size.shape"),
    "negative sigma": ('size = {distribution = "lognormal", sigma = -0.5}\n',
                       "classes[1].size.sigma"),
    "unknown law": ('size = {distribution = "zipf"}\n', "classes[1].size.distribution"),
    "unknown size key": ('size = {distribution = "pareto", shape = 2, scale = 1}\n',
                         "classes[1].size.scale"),
    "flow of unknown class": ('[timeline]\nduration = 10\ninterval = 1\n[[flows]]\n'
                              'class = "9"\n', "flows[0].class"),
    "flows without timeline": ('[[flows]]\nclass = "1"\n', "timeline"),
    "flow stops before start": ('[timeline]\nduration = 10\ninterval = 1\n[[flows]]\n'
                                'class = "1"\nstart = 5\nstop = 2\n', "flows[0].stop"),
    "negative flow rate": ('[timeline]\nduration = 10\ninterval = 1\n[[flows]]\n'
                           'class = "1"\nrate = -1\n', "flows[0].rate"),
    "unknown fq resource": ('[packet]\nfq_resource = "disk"\n', "packet.fq_resource"),
    "fq resource not a name": ('[packet]\nfq_resource = 1\n', "packet.fq_resource"),
    "unknown fq resource in a list": ('[packet]\nfq_resource = ["cpu", "disk"]\n',
                                      "packet.fq_resource"),
    "fq resource twice": ('[packet]\nfq_resource = ["cpu", "cpu"]\n', "packet.fq_resource"),
    "empty fq list": ('[packet]\nfq_resource = []\n', "packet.fq_resource"),
    "fq list with a number": ('[packet]\nfq_resource = ["cpu", 2]\n',
                              "packet.fq_resource[1]"),
}


def _text(case, extra):
    req = {"wrong length": "[0.1, 1.0, 3]", "negative": "[-0.1, 1.0]",
           "all zero": "[0, 0]"}.get(case, "[0.1, 1.0]")
    head = ('resources = ["cpu", "link"]\n'
            f'[[classes]]\nname = "1"\nrequirements = {req}\nload_share = 4\n'
            '[[classes]]\nname = "2"\nrequirements = [1.0, 0.1]\nload_share = 1\n')
    return head + extra


@pytest.mark.parametrize("case", list(BAD))
def test_bad_scenarios(tmp_path, case):
    extra, field = BAD[case]
    path = _scenario(tmp_path, _text(case, extra))
    out = tmp_path / "out.csv"
    result = _run("fluid", str(path), "-o", str(out), cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}: {field}:"), lines
    assert "Traceback" not in result.stderr
    assert not out.exists() and not (tmp_path / "results").exists()


@pytest.mark.parametrize("content", ["", "size\n", "1.5\nbig\n", "2\n-1\n"])
def test_bad_empirical_size_files(tmp_path, content):
    (tmp_path / "sizes.csv").write_text(content)
    path = _scenario(tmp_path, _text("", 'size = {distribution = "empirical", '
                                         'file = "sizes.csv"}\n'))
    result = _run("fluid", str(path), "-o", str(tmp_path / "o.csv"), cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}: classes[1].size.file: "
                                                   "'sizes.csv'"), lines
    assert not (tmp_path / "o.csv").exists()


def test_missing_file_and_syntax_error(tmp_path):
    result = _run("fluid", str(tmp_path / "nope.toml"), "-o", str(tmp_path / "o.csv"),
                  cwd=tmp_path)
    assert result.returncode == 2 and "no such file" in result.stderr
    # ... and the packaged scenarios it could have meant, every one of them
    from mrfq.scenario import packaged_scenarios
    assert all(name in result.stderr for name in packaged_scenarios()), result.stderr
    path = _scenario(tmp_path, "resources = [\n")
    result = _run("fluid", str(path), "-o", str(tmp_path / "o.csv"), cwd=tmp_path)
    assert result.returncode == 2 and "TOML syntax error" in result.stderr
    assert not (tmp_path / "o.csv").exists()


@pytest.mark.parametrize("args", [["--policy", "wfq", "--load", "0.5"],
                                  ["--policy", "pf", "--load", "1.0"],
                                  ["--policy", "pf", "--load", "0.5", "--window", "0"],
                                  ["--policy", "pf", "--load", "0.5", "--mean-size", "0.5"],
                                  ["--policy", "pf", "--load", "0.5", "--flows", "0"],
                                  ["--policy", "pf", "--load", "0.5", "--warmup", "soon"],
                                  ["--policy", "pf", "--load", "0.5", "--warmup", "1.0"],
                                  ["--policy", "pf", "--load", "0.5", "--precision", "0"],
                                  ["--policy", "pf", "--load", "0.5", "--precision", "nan"],
                                  ["--policy", "pf", "--load", "0.5", "--precision", "0.1",
                                   "--max-replications", "0"]])
def test_simulate_bad_options(tmp_path, args):
    out = tmp_path / "o.csv"
    result = _run("simulate", str(GOOD), *args, "-o", str(out))
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr
    assert not out.exists()


@pytest.mark.parametrize("args, line", [
    (["simulate", "--policy", "drfq", "--load", "0.5", "--flows", "0"],
     "error: --flows: must be >= 1, got 0"),
    (["simulate", "--policy", "pf", "--load", "0.5", "--mean-size", "0.5"],
     "error: --mean-size: must be >= 1 packet, got 0.5"),
    (["fluid", "--loads", "1.5"],
     "error: --loads: load 1.5 puts resource 'link' at 1.5 >= 1 (unstable)"),
    (["plan", "--precision", "1.5"], "error: --precision: must be in [1e-06, 1), got 1.5"),
])
def test_option_errors_name_the_option(tmp_path, args, line):
    """The layers below the CLI name the Python keyword (``mean_size``); the CLI shows
    the option it came from, and no file (the value is the option's)."""
    out = tmp_path / "o.csv"
    result = _run(args[0], str(GOOD), *args[1:], "-o", str(out))
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [line]
    assert not out.exists()


def test_cluster_checks_its_tolerance_before_any_work(tmp_path):
    out = tmp_path / "out"
    result = _run("cluster", "quickstart", "--tolerance", "-1", "-o", str(out))
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == ["error: --tolerance: must be a number >= 0, got -1.0"]
    assert not out.exists()


def test_fluid_and_simulate_write_tables(tmp_path):
    out = tmp_path / "fluid.csv"
    result = _run("fluid", str(GOOD), "-o", str(out), "--loads", "0.3", "--policies", "pf",
                  cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    header = out.read_text().splitlines()[0].split(",")
    assert {"policy", "load", "class", "gamma", "mean_in_progress",
            "error_estimate"} <= set(header)
    sim = tmp_path / "sim.csv"
    flows = tmp_path / "flows.csv"
    result = _run("simulate", str(GOOD), "--policy", "bmf", "--load", "0.5", "--flows",
                  "300", "--mean-size", "20", "-o", str(sim), "--flows-out", str(flows),
                  "--warmup", "auto", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert {"gamma", "ci_low", "ci_high", "services", "wall_s"} <= set(
        sim.read_text().splitlines()[0].split(","))
    assert len(flows.read_text().splitlines()) == 301


@pytest.mark.parametrize("verb", ["run", "sweep"])
def test_sweep_and_run_reject_a_bad_precision_before_writing(tmp_path, verb):
    result = _run(verb, str(GOOD), "-o", str(tmp_path / "res"), "--precision", "2",
                  cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == "error: --precision: must be a fraction in [1e-06, 1) of " \
        "gamma, got 2"
    assert not (tmp_path / "res").exists()


def test_run_with_nothing_to_validate_refuses_before_any_work(tmp_path):
    """`mrfq run` on packet baselines only (no fluid counterpart): one line, exit 2, no
    sweep started and nothing written (it used to sweep for a minute, then fail)."""
    path = tmp_path / "baselines.toml"  # GOOD has no [packet] table: this one is its own
    path.write_text(GOOD.read_text() + '\n[packet]\npolicies = ["bottleneck-fq", "fifo"]\n'
                    'flows = 300\nmean_size = 20\n')  # small, should the check ever go
    result = _run("run", str(path), "-o", str(tmp_path / "res"), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"error: {path}: packet.policies: no packet or cluster policy with a fluid "
        "counterpart to validate (bottleneck-fq, fifo); `mrfq sweep` computes their points "
        "without validating"), result.stderr
    assert result.stdout == "" and not (tmp_path / "res").exists()


@pytest.mark.parametrize(("command", "target", "field"), [
    (["plan", "fig3_quick", "--loads", "0.5", "--policies", "bmf"], "out.csv", "--output: "),
    (["fluid", "fig3_quick", "--loads", "0.5", "--policies", "pf"], "out.csv", "--output: "),
    (["simulate", "fig3_quick", "--policy", "bmf", "--load", "0.5", "--flows", "50"],
     "out.csv", "--output: "),
    # results directories (the runs would take seconds to minutes; none starts), named
    # by the option that gave them
    (["run", "fig3_quick"], "res", "--output: "),
    (["sweep", "fig3_quick"], "res", "--output: "),
    (["flows", "isolation_rogue"], "res", "--output: "),
    (["cluster", "google_like_trace"], "res", "--output: "),
    (["cluster", "quickstart"], "res", "--output: "),
], ids=lambda value: " ".join(value) if isinstance(value, list) else None)
def test_an_unwritable_output_is_refused_before_any_work(tmp_path, command, target, field):
    """Outputs, files and results directories alike, are checked first: under a regular
    file nothing can be written, and nothing runs (no table on stdout, no results
    directory) before the one-line error, exit 2; nor where a directory cannot be made."""
    blocker = tmp_path / "not_a_directory"
    blocker.write_text("")
    result = _run(*command, "-o", str(blocker / target), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == (f"error: {blocker / target}: {field}{blocker} is "
                                     "not a directory")
    assert result.stdout == ""
    result = _run(*command, "-o", f"/proc/mrfq-out/{target}", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"error: /proc/mrfq-out/{target}: {field}cannot be "
                                    "written"), result.stderr
    assert result.stdout == "" and sorted(p.name for p in tmp_path.iterdir()) == [
        "not_a_directory"]


@pytest.mark.parametrize("command", [
    ["simulate", "fig3_quick", "--policy", "bmf", "--load", "0.5", "-o"],
    ["simulate", "fig3_quick", "--policy", "bmf", "--load", "0.5", "--flows-out"],
    ["simulate", "fig3_quick", "--policy", "bmf", "--load", "0.5", "--size-bins-out"],
    ["fluid", "fig3_quick", "-o"], ["plan", "fig3_quick", "-o"], ["run", "fig3_quick", "-o"],
    ["sweep", "fig3_quick", "-o"], ["flows", "isolation_rogue", "-o"],
    ["cluster", "quickstart", "-o"], ["allocate", "drfh_two_servers", "-o"],
    ["plot", "-o"],
], ids=" ".join)
def test_an_empty_output_path_is_refused(tmp_path, command):
    """``-o ""`` (say an unset shell variable) is an error, not "no output": before, a
    simulation ran, printed its table and wrote nothing, with exit 0."""
    result = _run(*command, "", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    option = command[-1] if command[-1].startswith("--") else "--output"
    assert result.stderr.strip() == f"error: {option}: an empty path"
    assert result.stdout == "" and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [
    ["simulate", "fig3_quick", "--policy", "bmf", "--load", "0.5", "-o"],
    ["simulate", "fig3_quick", "--policy", "bmf", "--load", "0.5", "--flows-out"],
    ["simulate", "fig3_quick", "--policy", "bmf", "--load", "0.5", "--size-bins-out"],
    ["fluid", "fig3_quick", "-o"], ["plan", "fig3_quick", "-o"],
    ["allocate", "drfh_two_servers", "-o"],
], ids=" ".join)
@pytest.mark.parametrize("name", ["out.json", "out", "out.csv.gz"])
def test_a_table_output_not_named_csv_is_refused(tmp_path, command, name):
    """The table outputs are CSV: ``-o out.json`` used to write CSV into out.json (exit
    0); now one line naming the file and the option, before any work."""
    result = _run(*command, name, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    option = command[-1] if command[-1].startswith("--") else "--output"
    assert result.stderr.strip() == (f"error: {name}: {option}: is written as CSV: give a "
                                     "name ending in .csv")
    assert result.stdout == "" and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", [["fluid", "fig3_quick", "-o", "o.csv", "--loads", "0.5,,0.9"],
                                  ["fluid", "fig3_quick", "-o", "o.csv", "--loads", "0.5,"],
                                  ["plan", "fig3_quick", "--loads", ",0.5"],
                                  ["fluid", "fig3_quick", "-o", "o.csv", "--policies", "pf,,drf"],
                                  ["allocate", "drfh_two_servers", "--policies", "drf,"],
                                  ["plot", "--format", "png,,pdf"]],
                         ids=" ".join)
def test_an_empty_item_in_a_list_option_is_refused(tmp_path, args):
    """``--loads 0.5,,0.9`` (a typo) ran the two loads it could read, exit 0; now the
    option is named and nothing runs."""
    result = _run(*args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    option, value = args[-2:]
    assert result.stderr.strip() == f"error: {option}: an empty value in '{value}'"
    assert result.stdout == "" and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", [["simulate", "fig3_quick", "--bogus"], ["simulat"],
                                  ["simulate"], ["fluid", "fig3_quick", "--loads"]],
                         ids=" ".join)
def test_click_usage_errors_are_one_line(tmp_path, args):
    """Click's own usage errors (an unknown option or verb, a missing argument or option
    value) in the project's style: one ``error:`` line, exit 2, no usage block."""
    result = _run(*args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert result.stdout == "" and list(tmp_path.iterdir()) == []


def test_unwritable_output_is_one_line_error(tmp_path):
    directory = tmp_path / "a_directory"
    directory.mkdir()
    result = _run("fluid", str(GOOD), "-o", str(directory), "--loads", "0.3", "--policies",
                  "pf", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    bad_csv = tmp_path / "empty.csv"
    bad_csv.write_text("")
    result = _run("plot", str(bad_csv), cwd=tmp_path)
    assert result.returncode == 2 and result.stderr.startswith(f"error: {bad_csv}: ")
    assert "Traceback" not in result.stderr


# --- issue 26: one consistent command line ------------------------------------------------


def test_list_shows_what_is_packaged():
    result = _run("list")
    assert result.returncode == 0, result.stderr
    for name in ("fig3_quick", "isolation_rogue", "drf_slides", "drfq-dovetail", "mr3",
                 "drfh-best-fit", "pareto", "websearch", "fb_hadoop"):
        assert name in result.stdout, name


@pytest.mark.parametrize("args, field, hint", [
    (("simulate", "fig3_quik", "--policy", "bmf", "--load", "0.5"), "fig3_quik",
     "did you mean 'fig3_quick'"),
    (("simulate", "fig3_quick", "--policy", "drfg", "--load", "0.5"), "--policy",
     "did you mean 'drfq'"),
    (("simulate", "fig3_quick", "--policy", "bmf", "--load", "0.5", "--flows", "2.5"),
     "--flows", "must be a whole number, got"),
    (("allocate", "drf_slides", "--policies", "drf,dfr"), "--policies", "did you mean 'drf'"),
    (("run", "fig3_quick", "--format", "gif"), "--format", "unknown figure format 'gif'"),
])
def test_misspellings_get_one_line_with_a_suggestion(args, field, hint):
    result = _run(*args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and field in lines[0], lines
    assert hint in lines[0]


def test_counts_accept_the_float_notation_of_scenario_files(tmp_path):
    out = tmp_path / "s.csv"
    result = _run("simulate", "fig3_quick", "--policy", "bmf", "--load", "0.5", "--flows",
                  "4e2", "--mean-size", "20", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert "flows_measured" in out.read_text()


def test_fluid_without_results_leaves_no_directory(tmp_path):
    result = _run("fluid", "fig1_balanced", "--loads", "0.3", "--policies", "drf", "-o",
                  "f.csv", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.csv"]


def test_fluid_with_results_says_what_it_reuses(tmp_path):
    """A second ``fluid --results`` said nothing of the points it read back (``run``,
    ``sweep`` and ``cluster`` say it); without ``--results`` nothing is stored or said."""
    args = ("fluid", "fig1_balanced", "--loads", "0.3,0.5", "--policies", "drf", "-o",
            "f.csv", "--jobs", "1")
    first = _run(*args, "--results", "r", cwd=tmp_path)
    assert "2 points, 0 already done, 2 to compute" in first.stderr, first.stderr
    again = _run(*args, "--results", "r", cwd=tmp_path)
    assert "2 points, 2 already done, 0 to compute" in again.stderr, again.stderr
    bare = _run(*args, cwd=tmp_path)
    assert bare.returncode == 0 and "already done" not in bare.stderr


@pytest.mark.parametrize("verb, plan", [("run", "no SCENARIO: the main job"),
                                        ("plot", "no SOURCES: BR Figures 1-2")])
def test_verbs_without_arguments_print_their_plan_first(verb, plan, monkeypatch):
    from click.testing import CliRunner

    from mrfq import api, cli, pipeline
    from mrfq.errors import InputError

    def stop(*args, **kwargs):
        if "log" in kwargs:  # run: the plan comes with its first message, after the checks
            kwargs["log"]("12 points, 0 already done, 12 to compute")
        raise InputError("stopped by the test", "here")

    monkeypatch.setattr(pipeline, "run", stop)
    monkeypatch.setattr(api, "plot", stop)
    result = CliRunner().invoke(cli.main, [verb])
    assert result.exit_code == 2
    assert plan in result.output.splitlines()[0]
    assert "stopped by the test" in result.output


def test_help_and_choices_come_from_the_registry():
    from mrfq import policies as registry

    for flag in ("-h", "--help"):
        result = _run("simulate", flag)
        assert result.returncode == 0 and "Usage:" in result.stdout
    shown = _run("simulate", "-h").stdout.replace("\n", " ").replace(" ", "")
    for name in registry.names(registry.PACKET):
        assert name in shown, name
    assert "--init[empty|fluid]" in shown  # every closed set of values is a Choice
    result = _run("simulate", "fig3_quick", "--policy", "bmf", "--load", "0.5", "--init",
                  "fuid")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip() == "error: --init: 'fuid' is not one of 'empty', 'fluid'."


def test_a_bad_number_is_one_line():
    result = _run("simulate", "fig3_quick", "--policy", "bmf", "--load", "abc")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: --load: 'abc' is not a valid float."]


def test_one_jobs_default_everywhere():
    from mrfq.cli import main

    for name, command in main.commands.items():
        for param in command.params:
            if "--jobs" in getattr(param, "opts", []):
                # no number as default (None, or click's "unset"): all cores
                assert not isinstance(param.default, int), name
                assert "all cores" in param.help, name


def test_the_results_directory_check_leaves_nothing_behind(tmp_path):
    from mrfq.io import check_writable_dir

    check_writable_dir(tmp_path / "a" / "b")
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "kept").mkdir()
    check_writable_dir(tmp_path / "kept")
    assert [p.name for p in tmp_path.iterdir()] == ["kept"]
    assert list((tmp_path / "kept").iterdir()) == []


def test_plot_without_sources_checks_its_directory_and_honours_output_and_format(
        tmp_path, monkeypatch):
    """``mrfq plot`` with no SOURCES sweeps Figures 1–2 first (a minute): its figure
    directory is checked before that, and ``-o`` (the directory) and ``--format`` apply
    (checked here on one load per figure)."""
    (tmp_path / "plots").write_text("")
    result = _run("plot", "--jobs", "1", cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines()[-1] == (
        "error: plots: exists and is not a directory")
    assert not (tmp_path / "results").exists()
    import mrfq
    from mrfq import pipeline

    full = pipeline.fluid
    monkeypatch.setattr(pipeline, "fluid", lambda scenario, results, **kw: full(
        scenario, results, loads=[0.3], **kw))
    monkeypatch.chdir(tmp_path)
    written = mrfq.plot(output=tmp_path / "figs", formats="svg", jobs=1)
    assert sorted(p.name for p in written if p.suffix != ".csv") == ["fig1.svg", "fig2.svg"]
    assert all(p.parent == tmp_path / "figs" for p in written)


def test_fixed_choices_are_case_insensitive_as_in_scenario_files():
    """`--virtual-time Started` means what `virtual_time = "Started"` means in a file."""
    from mrfq.cli import main
    from mrfq.scenario import VIRTUAL_TIMES
    from mrfq.scenario.checks import parse_packet

    options = {p.name: p for p in main.commands["simulate"].params}
    for name, value in (("virtual_time", "Started"), ("init", "FLUID"), ("virtual_time",
                                                                         "IN-SERVICE")):
        assert options[name].type.convert(value, None, None) == value.lower()
    assert parse_packet({"virtual_time": "Started"}, "f.toml").virtual_time == "started"
    assert all(v == v.lower() for v in VIRTUAL_TIMES)


def test_a_resource_named_twice_in_fq_resource_is_named():
    from mrfq.errors import InputError
    from mrfq.scenario.checks import parse_packet

    with pytest.raises(InputError, match=r"^f.toml: packet.fq_resource: names a resource "
                                         r"twice: cpu1, link2$"):
        parse_packet({"fq_resource": ["cpu1", "link2", "cpu1", "link2", "cpu2"]}, "f.toml")


def test_a_figure_name_of_no_known_format_keeps_its_suffix(tmp_path):
    """``mrfq plot DIR -o fig.txt`` said ``--format: unknown figure format 'txt'`` (the
    user gave no --format), then ``--output: unknown figure format``, while ``mrfq plot
    table.csv -o fig.txt`` wrote fig.txt.png: a suffix naming no figure format is part of
    the name for every source (:func:`mrfq.io.figure_stem`), as in ``fig3.v2``."""
    results = tmp_path / "r"
    assert _run("sweep", "quickstart", "-o", str(results), "--jobs", "1").returncode == 0
    result = _run("plot", str(results), "-o", "fig.txt", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "wrote fig.txt.png" in result.stdout and (tmp_path / "fig.txt.pdf").is_file()
    result = _run("plot", str(results), "-o", "fig.svg", cwd=tmp_path)  # a format: only it
    assert result.returncode == 0 and (tmp_path / "fig.svg").is_file(), result.stderr
    assert not (tmp_path / "fig.png").exists()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
@pytest.mark.parametrize("command", [["sweep", "quickstart", "--jobs", "1", "-o"],
                                     ["fluid", "quickstart", "-o", "f.csv", "--results"]])
def test_a_points_folder_that_cannot_be_written_is_refused_before_any_work(tmp_path,
                                                                          command):
    """The results directory was probed, its ``points/`` only checked to be a directory:
    a read-only one (another user's, a link to a read-only place) was found when the
    first point was saved, after its computation (a review, 2026-11-29). Here ``points``
    links to /proc, where even root cannot create a file."""
    results = tmp_path / "res"
    results.mkdir()
    (results / "points").symlink_to("/proc")
    result = _run(*command, str(results), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"error: {results / 'points'}: cannot be written"), \
        result.stderr
    assert len(result.stderr.splitlines()) == 1 and result.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["res"]
    assert sorted(p.name for p in results.iterdir()) == ["points"]


def test_a_closed_stderr_stops_the_progress_display_not_the_sweep(tmp_path):
    """``mrfq sweep … 2>&1 | head -1``: the progress line's write to a closed pipe ended
    the sweep (exit 141) after every point was computed and before its summary was
    written. The display is cosmetic: it stops, and the results are saved."""
    process = subprocess.Popen([sys.executable, "-m", "mrfq.cli", "sweep", "quickstart",
                                "-o", str(tmp_path / "res"), "--jobs", "1"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               cwd=tmp_path)
    process.stderr.close()  # the reader is gone before the first progress line
    assert process.wait(timeout=300) == 0
    assert (tmp_path / "res" / "summary.csv").is_file()


def test_the_progress_display_survives_a_stderr_that_fails(monkeypatch):
    """A stderr whose reader is gone is given up, that stream only: a new one (a
    notebook's, a test's) is written again; no stderr at all (``2>&-``: None) is not an
    AttributeError."""
    import io

    from mrfq import progress

    class Closed:
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            raise BrokenPipeError(32, "Broken pipe")

        def isatty(self):
            return False

    monkeypatch.setitem(progress._state, "lost", None)
    closed = Closed()
    monkeypatch.setattr(sys, "stderr", closed)
    line = progress.Progress("sweep", always=True)
    line(1, 2)  # raised BrokenPipeError
    line(2, 2)
    line.finish()
    assert progress._state["lost"] is closed
    fresh = io.StringIO()
    monkeypatch.setattr(sys, "stderr", fresh)
    progress.to_stderr("again\n")
    assert fresh.getvalue() == "again\n"
    monkeypatch.setattr(sys, "stderr", None)
    line = progress.Progress("sweep", always=True)
    line(1, 2)
    line.finish()


def test_a_sweep_with_stderr_closed_from_the_start_runs(tmp_path):
    """``mrfq sweep … 2>&-``: Python's sys.stderr is None; the progress display read
    its isatty() and the command ended with a traceback (exit 3)."""
    command = f"'{sys.executable}' -m mrfq.cli sweep quickstart -o res --jobs 1 2>&-"
    result = subprocess.run(command, shell=True, stdout=subprocess.PIPE, text=True,
                            cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    assert (tmp_path / "res" / "summary.csv").is_file()

"""benchmarks/interval_coverage.py, the coverage campaign: on a tiny setting, its table agrees
with the intervals recomputed from its own cached records, and its binomial interval is
Clopper–Pearson's."""

import json
import sys
from pathlib import Path

import numpy as np
from scipy import stats as sps

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import interval_coverage as coverage  # noqa: E402


def test_coverage_table_counts_what_the_records_say(tmp_path, capsys):
    out = tmp_path / "rows.json"
    argv = ["--runs", "4", "--jobs", "1", "--policies", "bmf", "--loads", "0.5",
            "--mean-size", "10", "--window", "4", "--flows", "600", "--replications", "3",
            "--replication-flows", "200", "--reference-runs", "3", "--reference-factor", "4",
            "--cache", str(tmp_path / "cache"), "--json", str(out)]
    assert coverage.main(argv) == 0
    rows = json.loads(out.read_text())
    assert len(rows) == 2 * 3  # two modes, three classes
    cached = {p.name: json.loads(p.read_text()) for p in (tmp_path / "cache").iterdir()}
    assert len(cached) == 3 + 4 + 4 * 3
    settings = {"mean_size": 10, "window": 4, "flows": 600, "replication_flows": 200,
                "reference_factor": 4, "warmup": "auto", "reference_runs": 3}
    reference = coverage.combine_packet_records(
        coverage.scenario_for(settings, "reference", 0),
        [v for k, v in cached.items() if k.startswith("reference-")])
    for row in rows:
        k = int(row["class"]) - 1
        assert row["reference"] == reference["gamma"].iloc[k]
        mode_records = {}
        for name, record in cached.items():
            if name.startswith(row["mode"] + "-"):
                mode_records.setdefault(int(name.split("-")[3]), []).append(record)
        hits = 0
        for index, records in mode_records.items():
            table = coverage.combine_packet_records(
                coverage.scenario_for(settings, row["mode"], index), records)
            hits += table["ci_low"].iloc[k] <= row["reference"] <= table["ci_high"].iloc[k]
        assert row["covered"] == hits and row["runs"] == 4
    # a second call computes nothing new (every item cached)
    assert coverage.main(argv + ["--estimate-only"]) == 0
    assert "0 to compute" in capsys.readouterr().err


def test_clopper_pearson_interval():
    low, high = coverage.proportion_interval(190, 200)
    assert np.isclose(low, sps.beta.ppf(0.025, 190, 11))
    assert np.isclose(high, sps.beta.ppf(0.975, 191, 10))
    assert coverage.proportion_interval(0, 10)[0] == 0.0
    assert coverage.proportion_interval(10, 10)[1] == 1.0


def test_precision_mode_runs_the_sweeps_stopping_rule(tmp_path):
    out = tmp_path / "rows.json"
    argv = ["--runs", "3", "--jobs", "1", "--policies", "bmf", "--loads", "0.5",
            "--mean-size", "10", "--window", "4", "--flows", "600", "--replications", "10",
            "--replication-flows", "200", "--reference-runs", "3", "--reference-factor", "4",
            "--modes", "precision", "--precision", "0.1",
            "--cache", str(tmp_path / "cache"), "--json", str(out)]
    assert coverage.main(argv) == 0
    rows = json.loads(out.read_text())
    assert [r["mode"] for r in rows] == ["precision"] * 3
    for path in (tmp_path / "cache").glob("precision-*.json"):
        records = json.loads(path.read_text())["records"]
        assert [r["replication"] for r in records] == list(range(len(records)))
        assert len(records) >= 10
        scenario = coverage.scenario_for(
            {"mean_size": 10, "window": 4, "replication_flows": 200, "warmup": "auto",
             "flows": 600, "reference_factor": 4,
             "precision": 0.1, "replications": 10}, "precision",
            int(path.name.split("-")[3]))
        table = coverage.combine_packet_records(  # as a sweep reports it
            scenario, records, fluid_record=coverage.fluid_reference(scenario, "bmf", 0.5))
        assert table["precision_reached"].all() or len(records) == 1000
        assert (table["replications"] == len(records)).all()

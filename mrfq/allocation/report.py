"""What ``mrfq allocate`` prints and writes: every chosen policy's allocation of one
problem (tasks and dominant shares per user, utilisation per resource) and its property
checks (yes / NO with a counter-example / unknown with the reason)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from mrfq import fields
from mrfq.allocation.files import load_problem
from mrfq.allocation.policies import NAME, POLICIES, not_applicable
from mrfq.allocation.problem import Allocation, Problem
from mrfq.allocation.properties import Verdict, check_all
from mrfq.errors import InputError


@dataclass
class PolicyResult:
    policy: str
    allocation: Allocation
    checks: dict[str, Verdict] = field(default_factory=dict)


@dataclass
class AllocationReport:
    problem: Problem
    results: list[PolicyResult]
    #: policy -> why it was not run (default policy lists only: one that does not apply)
    skipped: dict[str, str] = field(default_factory=dict)

    def text(self) -> str:
        """The human-readable report, one block per policy, then the skipped ones."""
        p = self.problem
        lines = []
        for r in self.results:
            a = r.allocation
            lines.append(f"== {r.policy}")
            table = pd.DataFrame({"user": p.users, "tasks": a.user_tasks,
                                  "dominant_share": a.dominant_shares})
            lines.append(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
            lines.append("utilisation: " + ", ".join(
                f"{name} {u:.1%}" for name, u in zip(p.resources, a.utilisation, strict=True)))
            lines.extend(f"  {key:20s} {verdict.text}" for key, verdict in r.checks.items())
        lines.extend(f"skipped {name}: {why}" for name, why in self.skipped.items())
        return "\n".join(lines)

    def table(self) -> pd.DataFrame:
        """One row per (policy, user): tasks, dominant share, share of every resource and
        the policy's properties (True / False / "unknown")."""
        p = self.problem
        rows = []
        for r in self.results:
            a = r.allocation
            holds = {k: "unknown" if v.holds is None else bool(v.holds)
                     for k, v in r.checks.items()}
            for i, user in enumerate(p.users):
                rows.append({"policy": r.policy, "user": user,
                             "tasks": float(a.user_tasks[i]),
                             "dominant_share": float(a.dominant_shares[i]),
                             **{f"share_{name}": float(a.shares[i, k])
                                for k, name in enumerate(p.resources)},
                             **holds})
        return pd.DataFrame(rows)


def allocation_report(path: str | Path | Problem, policies: Sequence[str] = (),
                      properties: bool = True, probe_trials: int = 30) -> AllocationReport:
    """Run ``policies`` (default: the ones the problem lists, else all that apply to it —
    the others are listed in ``skipped`` with the reason) on the problem file at ``path``
    (or a :class:`Problem` itself), with the property checks unless ``properties`` is
    False. InputError (naming the file or the option) on any bad input, a
    policy asked for by name that does not apply included."""
    if isinstance(path, Problem):
        problem, path = path, "<problem>"
    else:
        problem = load_problem(path)
    chosen = list(POLICIES)
    if problem.policies:  # set by its file (checked there) or by hand: check the names
        value = problem.policies
        chosen = list(fields.name_list(value if isinstance(value, str) else list(value),
                                       "policies", str(path), allowed=tuple(POLICIES),
                                       what="policy", lower=True))
    skipped = {}
    if policies:
        chosen = list(fields.name_list(list(policies), "policies", None,
                                       allowed=tuple(POLICIES), what="policy", lower=True))
        for name in chosen:  # (before any policy runs: no work on a refused request)
            if name != NAME.IBAA and (why := not_applicable(name, problem)):
                raise InputError(why, "policies")  # (the option: the file may list none)
    else:  # the file's list (checked to apply) or all: leave out those that do not apply
        skipped = {name: why for name in chosen if (why := not_applicable(name, problem))}
        chosen = [name for name in chosen if name not in skipped]
    results = []
    for name in chosen:
        rule = POLICIES[name]
        try:
            allocation = rule(problem)
        except InputError as exc:  # e.g. IBAA on more than two resources
            raise exc.located(str(path)) from None
        checks = check_all(problem, rule, allocation, probe_trials) if properties else {}
        results.append(PolicyResult(name, allocation, checks))
    return AllocationReport(problem, results, skipped)

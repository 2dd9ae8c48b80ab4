"""Flow-size laws (issue 14): the work a flow brings, in fluid work units (mean 1 = m packets).

A law is given by a plain dict, as in a scenario's ``size = {...}`` per class (absent:
exponential, the Markov model's assumption, BR §4.1):

=================  =====================================  ==================================
``distribution``   parameters                              law (mean 1 unless stated)
=================  =====================================  ==================================
exponential        —                                       Exp(1); SCV 1
deterministic      —                                       1; SCV 0
hyperexponential   ``scv`` in [1, 1e12]                    two-phase H2, balanced means
lognormal          ``sigma`` in [0, 8]                     exp(N(−σ²/2, σ²)); SCV e^{σ²} − 1
pareto             ``shape`` α > 1, optional ``max`` ≤1e100  x_m U^{−1/α}, x_m = (α − 1)/α
empirical          ``file``, optional ``rescale`` = true   uniform over the file's sizes
cdf                ``points``, ``file`` or ``workload``;   a CDF table, linear between its
                   optional ``rescale`` = true             points (:mod:`mrfq.workloads`)
=================  =====================================  ==================================

* **Hyperexponential, balanced means** (Whitt): with probability p_i the size is
  Exp(rate μ_i), p_1 = (1 + √((c² − 1)/(c² + 1)))/2, p_2 = 1 − p_1, μ_i = 2 p_i, so each phase
  carries half the mean; the SCV is exactly c² (c² = 1 is the exponential law).
* **Bounded Pareto**: ``max`` = H bounds the *unbounded* law (mean 1, so H > x_m): the
  Pareto truncated to [x_m, H] (density ∝ x^{−α−1} there), divided by its own mean so that
  its mean is 1 again (support [x_m, H] / E[truncated], a slightly larger scale than the
  unbounded law's). The shape must still exceed 1 (the unbounded law's rule, kept).
* **Empirical**: ``file`` is a CSV file of positive sizes, one flow per row, the size in
  the first column; a first row that is not a number is a header; blank rows and rows
  starting with ``#`` are skipped. Relative paths are taken from ``base_dir`` (the
  scenario's folder). Draws are uniform over the rows, with replacement. ``rescale = true``
  (default) divides the sizes by their mean (mean 1, i.e. the class's mean size m packets);
  ``rescale = false`` uses them as they are, in work units (1 = m packets), and the law's
  mean is then the file's mean (the flow-level simulator keeps ρ_k = λ_k · mean).
* **CDF table** (:mod:`mrfq.workloads`): exactly one of ``points`` (inline pairs
  ``[[size, cdf], …]``), ``file`` (a two-column CSV: size, cdf) or ``workload`` (a
  bundled published distribution: ``websearch``, ``datamining``, ``fb_hadoop``). The law
  is the table's, linear between points; ``rescale = true`` (default) divides the sizes by
  the law's exact mean (bytes become work units, mean 1 = m packets); ``rescale = false``
  takes them as work units. Either table's sizes, as used, lie in [1e-100, 1e100].

**Packets.** A work x becomes N = 1 + ⌊x / θ⌋ packets, θ = −ln(1 − 1/m): :mod:`mrfq.counts`
(with E[N], exactly).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import ndtr

from mrfq import fields, workloads
from mrfq.errors import InputError

#: the law of a class that has no ``size`` table
DEFAULT = {"distribution": "exponential"}

_PARAMETERS = {
    "exponential": set(), "deterministic": set(),
    "hyperexponential": {"scv"},
    "lognormal": {"sigma"},
    "pareto": {"shape", "max"},
    "empirical": {"file", "rescale"},
    "cdf": {"points", "file", "workload", "rescale"},
}
_REQUIRED = {"hyperexponential": "scv", "lognormal": "sigma", "pareto": "shape",
             "empirical": "file"}
DISTRIBUTIONS = tuple(_PARAMETERS)


@dataclass(frozen=True)
class SizeLaw:
    """A validated flow-size law (build it with :func:`parse_size`).

    ``distribution`` and ``params`` (the cleaned parameters) describe it; ``values`` holds
    an empirical law's sizes (already rescaled when ``rescale``). :meth:`key` is a canonical
    dict for hashing stored points (an empirical law is keyed by its sizes' digest)."""

    distribution: str
    params: dict = field(default_factory=dict)
    values: np.ndarray | None = field(default=None, repr=False, compare=False)
    digest: str = ""

    def __hash__(self) -> int:  # the generated one failed on the dict; its keys: as == does
        return hash((self.distribution, tuple(sorted(self.params)), self.digest))

    def raw_moment(self, r: int) -> float:
        """E[X^r] (∞ where it diverges)."""
        d, p = self.distribution, self.params
        if d == "exponential":
            return float(math.factorial(r))
        if d == "deterministic":
            return 1.0
        if d == "hyperexponential":
            (p1, p2), (m1, m2) = _h2(p["scv"])
            return math.factorial(r) * (p1 / m1 ** r + p2 / m2 ** r)
        if d == "lognormal":
            s = p["sigma"]
            return math.exp(-r * s * s / 2 + r * r * s * s / 2)
        if d == "pareto":
            alpha = p["shape"]
            low = (alpha - 1) / alpha
            if p.get("max") is None:
                return math.inf if r >= alpha else alpha * low ** r / (alpha - r)
            high = p["max"]
            scale = _bounded_pareto_moment(alpha, low, high, 1)
            return _bounded_pareto_moment(alpha, low, high, r) / scale ** r
        if d == "cdf":
            return workloads.raw_moment(self.values[0], self.values[1], r)
        return float(np.mean(self.values ** r))

    @property
    def mean(self) -> float:
        """E[X]: 1 except for an empirical law with ``rescale = false``."""
        return self.raw_moment(1)

    @property
    def scv(self) -> float:
        """Squared coefficient of variation Var X / (E X)² (∞ when Var X is)."""
        m1, m2 = self.raw_moment(1), self.raw_moment(2)
        return math.inf if math.isinf(m2) else m2 / (m1 * m1) - 1.0

    def cdf(self, x: np.ndarray) -> np.ndarray:
        """P(X ≤ x), for tests (Kolmogorov–Smirnov) and plots."""
        x = np.asarray(x, dtype=np.float64)
        d, p = self.distribution, self.params
        if d == "exponential":
            return -np.expm1(-np.maximum(x, 0.0))
        if d == "deterministic":
            return (x >= 1.0).astype(np.float64)
        if d == "hyperexponential":
            (p1, p2), (m1, m2) = _h2(p["scv"])
            x = np.maximum(x, 0.0)
            return 1.0 - p1 * np.exp(-m1 * x) - p2 * np.exp(-m2 * x)
        if d == "lognormal":
            s = p["sigma"]
            if s == 0:
                return (x >= 1.0).astype(np.float64)
            with np.errstate(divide="ignore"):
                z = (np.log(np.maximum(x, 0.0)) + s * s / 2) / s
            return ndtr(z)
        if d == "pareto":
            alpha = p["shape"]
            low = (alpha - 1) / alpha
            high = p.get("max")
            if high is None:
                return np.where(x < low, 0.0, 1.0 - (low / np.maximum(x, low)) ** alpha)
            scale = _bounded_pareto_moment(alpha, low, high, 1)
            y = np.clip(x * scale, low, high)
            return (1.0 - (low / y) ** alpha) / (1.0 - (low / high) ** alpha)
        if d == "cdf":
            return workloads.cdf(self.values[0], self.values[1], x)
        return np.searchsorted(np.sort(self.values), x, side="right") / self.values.size

    # --- sampling ------------------------------------------------------------------
    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` independent sizes (float64, > 0), deterministic given ``rng``.

        Every law consumes the generator flow by flow, so drawing n₁ then n₂ sizes gives
        the same numbers as drawing n₁ + n₂ at once (the simulator's arrival blocks do not
        change a run).
        """
        d, p = self.distribution, self.params
        if d == "exponential":
            return rng.standard_exponential(n)
        if d == "deterministic":
            return np.ones(n)
        if d == "hyperexponential":
            (p1, _), (m1, m2) = _h2(p["scv"])
            u = rng.random((n, 2))  # (phase, exponential) per flow, consumed in order
            return -np.log1p(-u[:, 1]) / np.where(u[:, 0] < p1, m1, m2)
        if d == "lognormal":
            s = p["sigma"]
            return np.exp(rng.standard_normal(n) * s - s * s / 2)
        if d == "pareto":
            alpha = p["shape"]
            low = (alpha - 1) / alpha
            u = 1.0 - rng.random(n)  # in (0, 1]
            high = p.get("max")
            if high is None:
                return low * u ** (-1.0 / alpha)
            # inverse CDF of the truncated law: x = L (1 − v (1 − (L/H)^α))^{−1/α}
            v = 1.0 - u  # in [0, 1)
            x = low * (1.0 - v * (1.0 - (low / high) ** alpha)) ** (-1.0 / alpha)
            return x / _bounded_pareto_moment(alpha, low, high, 1)
        if d == "cdf":
            return workloads.quantile(self.values[0], self.values[1], rng.random(n))
        return self.values[rng.integers(0, self.values.size, n)]

    @property
    def unscaled(self) -> bool:
        """A table law read with ``rescale = false``: its mean is the table's, not 1 (every
        other law has mean 1 by construction, up to rounding)."""
        return self.params.get("rescale") is False

    def pareto_parameters(self) -> tuple[float, float, float, float]:
        """A Pareto law's (α, x_m, H, E): shape, minimum (α − 1)/α, bound (∞: none) and
        the truncated law's mean that scales it back to mean 1 (1 when unbounded)."""
        alpha, high = self.params["shape"], self.params.get("max")
        low = (alpha - 1) / alpha
        if high is None:
            return alpha, low, math.inf, 1.0
        return alpha, low, high, _bounded_pareto_moment(alpha, low, high, 1)

    def hyperexponential_phases(self) -> tuple[float, float, float]:
        """A hyperexponential law's (p_1, μ_1, μ_2): the first phase's probability and
        the two phases' rates (balanced means, module doc)."""
        (p1, _), (m1, m2) = _h2(self.params["scv"])
        return p1, m1, m2

    def spec(self) -> dict:
        """The table :func:`parse_size` reads back into this law (a table law keeps its
        file, as an absolute path, its points or its bundled workload)."""
        spec = {"distribution": self.distribution}
        spec.update({k: v for k, v in self.params.items() if v is not None})
        return spec

    def key(self) -> dict:
        """Canonical description for hashing (a table law: its SHA-256, not the path or the
        points it was read from)."""
        out = {"distribution": self.distribution}
        out.update({k: v for k, v in sorted(self.params.items())
                    if k not in ("file", "points")})
        if self.digest:
            out["sha256"] = self.digest
        return out


def _h2(scv: float) -> tuple[tuple[float, float], tuple[float, float]]:
    """Balanced-means H2 of mean 1: ((p1, p2), (rate1, rate2))."""
    p1 = 0.5 * (1.0 + math.sqrt((scv - 1.0) / (scv + 1.0)))
    p2 = 1.0 - p1
    return (p1, p2), (2.0 * p1, 2.0 * p2)


def _bounded_pareto_moment(alpha: float, low: float, high: float, r: int) -> float:
    """E[X^r] of the Pareto(α, x_m = low) truncated to [low, high]."""
    # with expm1, so that r near α or H near L keep their digits (1 − (L/H)^α and
    # H^(r−α) − L^(r−α) cancel there)
    span = math.log(high / low)
    norm = alpha * low ** alpha / -math.expm1(-alpha * span)
    if r == alpha:
        return norm * span
    return norm * low ** (r - alpha) * math.expm1((r - alpha) * span) / (r - alpha)


def _read_sizes(path: Path, where: str, source: str | None) -> np.ndarray:
    try:
        if path.exists() and not path.is_file():  # (/dev/zero would be read for ever)
            raise InputError(f"'{path}' is not a regular file", where, source)
        text = path.read_text()
    except OSError as err:
        raise InputError(f"cannot read '{path}': {err.strerror or err}", where, source) from None
    sizes = []
    seen_row = False
    for number, line in enumerate(text.splitlines(), 1):
        cell = line.split(",")[0].strip().strip('"')
        if not cell or cell.startswith("#"):
            continue
        try:
            value = float(cell)
        except ValueError:
            if not seen_row:  # a header
                seen_row = True
                continue
            raise InputError(f"'{path.name}' line {number}: not a number: {cell!r}", where,
                             source) from None
        seen_row = True
        if not (math.isfinite(value) and value > 0):
            raise InputError(f"'{path.name}' line {number}: sizes must be positive and "
                             f"finite, got {cell}", where, source)
        sizes.append(value)
    if not sizes:
        raise InputError(f"'{path.name}' has no sizes", where, source)
    return np.array(sizes, dtype=np.float64)


def parse_size(spec: Any = None, field: str = "size", source: str | None = None,
               base_dir: str | Path | None = None) -> SizeLaw:
    """Validate a size spec (a dict as in a scenario file; ``None`` = exponential).

    Raises :class:`InputError` naming ``field`` (e.g. ``classes[2].size.shape``) for an
    unknown distribution or key, a missing parameter, shape ≤ 1, σ < 0, SCV < 1, a bound
    ``max`` not above the Pareto's minimum, or an unreadable / empty / non-numeric file.
    """
    if spec is None:
        spec = DEFAULT
    if isinstance(spec, SizeLaw):
        return spec
    if not isinstance(spec, dict):
        raise InputError("must be a table such as {distribution = \"pareto\", shape = 1.5}",
                         field, source)
    if "distribution" not in spec:
        raise InputError(f"missing (one of {', '.join(DISTRIBUTIONS)})",
                         f"{field}.distribution", source)
    name = spec["distribution"]
    if not isinstance(name, str) or name.lower() not in _PARAMETERS:
        raise InputError(f"unknown distribution {fields.shown(name)} (choose from "
                         f"{', '.join(DISTRIBUTIONS)})", f"{field}.distribution", source)
    name = name.lower()
    fields.check_keys(spec, {"distribution"} | _PARAMETERS[name], field, source)
    required = _REQUIRED.get(name)
    if required and required not in spec:
        raise InputError(f"missing (required by the {name} law)", f"{field}.{required}",
                         source)
    params: dict[str, Any] = {}
    values = None
    digest = ""
    if name == "hyperexponential":
        scv = fields.number(spec["scv"], f"{field}.scv", source)
        if not 1 <= scv <= 1e12:  # (beyond, H2's phases lose their digits: 1e16 divided by 0)
            raise InputError(f"must be >= 1 and <= 1e12 for a hyperexponential law, got "
                             f"{scv:g}", f"{field}.scv", source)
        params["scv"] = scv
    elif name == "lognormal":
        params["sigma"] = fields.number(spec["sigma"], f"{field}.sigma", source, nonnegative=True)
        if params["sigma"] > 8:  # (σ = 12: the flow-level γ was inf; 26.7: OverflowError)
            raise InputError(f"must be <= 8 (an SCV of e^64 − 1 already), got "
                             f"{params['sigma']:g}", f"{field}.sigma", source)
    elif name == "pareto":
        alpha = fields.number(spec["shape"], f"{field}.shape", source)
        if alpha <= 1:
            raise InputError(f"must be > 1 (finite mean), got {alpha:g}", f"{field}.shape",
                             source)
        params["shape"] = alpha
        params["max"] = None
        if spec.get("max") is not None:
            high = fields.number(spec["max"], f"{field}.max", source, positive=True)
            low = (alpha - 1) / alpha
            if not low < high <= 1e100:  # (its third moment, ~H², must stay finite)
                raise InputError(f"must exceed the Pareto minimum (shape - 1)/shape = "
                                 f"{low:g} and be <= 1e100, got {high:g}", f"{field}.max", source)
            params["max"] = high
    elif name == "empirical":
        path_value = fields.text(spec["file"], f"{field}.file", source)
        rescale = spec.get("rescale", True)
        if not isinstance(rescale, bool):
            raise InputError(f"must be true or false, got {rescale!r}", f"{field}.rescale",
                             source)
        path = Path(path_value)
        if not path.is_absolute() and base_dir is not None:
            path = Path(base_dir) / path
        raw = _read_sizes(path, f"{field}.file", source)
        digest = hashlib.sha256(raw.tobytes()).hexdigest()
        values = workloads.check_span(raw / workloads.sample_mean(raw) if rescale else raw,
                                      rescale, f"{field}.file", source)
        params["file"] = str(path.resolve())  # (a stored scenario reads it from anywhere)
        params["rescale"] = rescale
    elif name == "cdf":
        values, digest = _cdf_table(spec, field, source, base_dir, params)
    return SizeLaw(name, params, values, digest)


def _cdf_table(spec: dict, field: str, source: str | None, base_dir: str | Path | None,
               params: dict) -> tuple[np.ndarray, str]:
    """The ``cdf`` law's table (sizes rescaled to mean 1 unless ``rescale = false``) as a
    2 × n array (sizes, cdf) and the digest of the table as given; fills ``params``."""
    given = [key for key in ("points", "file", "workload") if key in spec]
    if len(given) != 1:
        raise InputError("give exactly one of points, file, workload"
                         + (f" (got {', '.join(given)})" if given else ""),
                         f"{field}.points", source)
    key = given[0]
    where = f"{field}.{key}"
    if key == "points":
        x, f = workloads.check_points(spec["points"], where, source)
        params["points"] = [[float(a), float(b)] for a, b in zip(x, f, strict=True)]
    elif key == "file":
        path = Path(fields.text(spec["file"], where, source))
        if not path.is_absolute() and base_dir is not None:
            path = Path(base_dir) / path
        x, f = workloads.read_table(path, where, source)
        params["file"] = str(path.resolve())
    else:
        name = fields.text(spec["workload"], where, source)
        x, f = workloads.bundled(name, where, source)
        params["workload"] = name
    rescale = spec.get("rescale", True)
    if not isinstance(rescale, bool):
        raise InputError(f"must be true or false, got {rescale!r}", f"{field}.rescale",
                         source)
    params["rescale"] = rescale
    digest = hashlib.sha256(np.vstack([x, f]).tobytes()).hexdigest()
    x = workloads.check_span(x / workloads.raw_moment(x, f, 1) if rescale else x, rescale,
                             where, source)
    return np.vstack([x, f]), digest


#: the load (of the most loaded resource) from which a law with a finite variance but an
#: infinite third moment (Pareto 2 < α ≤ 3) gets :func:`interval_warning` too
#: (benchmarks/heavy_tail_coverage.py; VALIDATION.md "Heavy tails")
HEAVY_TAIL_LOAD = 0.8


def interval_warning(law: SizeLaw, load: float | None = None, owner: str = "",
                     unit: str = "flows", quantity: str = "sizes") -> str:
    """Why a simulated 95% interval of γ at a point with a class of size law ``law``
    should not be trusted at face value, "" when nothing is known against it. ``load``:
    the load of the most loaded resource at the point (None: unknown, taken as high);
    ``owner``: the class(es) with that law, named (the classes beside them share the
    huge flows' congestion); ``unit``: what its draws make (flows; a cluster's jobs: the
    coverage quoted was measured with flows, as the text says); ``quantity``: what it
    draws (flow sizes; a cluster's tasks per job or task durations).

    * infinite variance (unbounded Pareto, shape α ≤ 2): at every load;
    * infinite third moment (Pareto 2 < α ≤ 3): from :data:`HEAVY_TAIL_LOAD` on.

    Measured with processor sharing, where γ = 1 − ρ for every law (benchmarks/
    heavy_tail_coverage.py, VALIDATION.md "Heavy tails"): a run has not seen its share
    of huge flows, so γ comes out high and the interval, from its own spread, too narrow."""
    where = f" in class {owner}" if owner else ""
    shape = law.params.get("shape")
    measured = "74-91% with 20 000 flows" + ("" if unit == "flows" else  # (flows only)
                                             "; not measured for " + unit)
    if math.isinf(law.raw_moment(2)):
        what = f"shape {shape:g} <= 2" if shape is not None else "shape <= 2"
        return (f"unreliable interval: {law.distribution} {quantity} with infinite variance "
                f"({what}){where}: a run has not seen its share of huge {unit}, so gamma "
                "tends to come out high and the 95% interval, too narrow, covers well "
                f"below 95% ({measured}; VALIDATION.md, Heavy tails): run far more {unit} "
                "(10^6 and more), read gamma as an upper estimate, or bound the law "
                f"({'size max' if unit == 'flows' else 'its max'}) to study a "
                "finite-variance version")
    high = load is None or load >= HEAVY_TAIL_LOAD
    if high and math.isinf(law.raw_moment(3)):
        what = f"shape {shape:g} <= 3" if shape is not None else "shape <= 3"
        return (f"unreliable interval: {law.distribution} {quantity} with infinite third "
                f"moment ({what}){where} at load >= {HEAVY_TAIL_LOAD:g}: the 95% interval "
                "covers below 95% and gamma tends to come out high (VALIDATION.md, Heavy "
                f"tails{'' if unit == 'flows' else ', measured for flows'}); run several "
                f"times more {unit} (or replications) and check that gamma and the "
                "interval settle")
    return ""

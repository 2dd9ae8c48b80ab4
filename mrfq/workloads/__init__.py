"""Flow-size CDF tables: the format public datacenter workloads come in, and a small
library of published ones (the ``cdf`` size law of :mod:`mrfq.sizes`).

A table is a list of points (x_i, F_i): sizes x_0 < x_1 < … (any unit; bytes in the
bundled files) and cumulative probabilities 0 ≤ F_0 ≤ F_1 ≤ … ≤ F_last = 1. The law puts
mass F_0 on x_0 and spreads F_{i+1} − F_i uniformly over [x_i, x_{i+1}] (the CDF is linear
between points, as in the ns-2 / pFabric workload files). So

    P(X ≤ x) = F_i + (F_{i+1} − F_i)(x − x_i)/(x_{i+1} − x_i)   on [x_i, x_{i+1}],
    E[X^r]  = F_0 x_0^r + Σ_i (F_{i+1} − F_i)(x_{i+1}^{r+1} − x_i^{r+1}) / ((r+1)(x_{i+1} − x_i)),

and a draw is the inverse CDF of a uniform U: x = F^{-1}(U), linear inside a segment.

Bundled (:data:`BUNDLED`, files beside this module, each citing its source in its header):

* ``websearch`` — DCTCP's web-search cluster (Alizadeh et al., SIGCOMM 2010, Fig. 4);
* ``datamining`` — VL2's data-mining cluster (Greenberg et al., SIGCOMM 2009, Fig. 2);
* ``fb_hadoop`` — Facebook's Hadoop inter-rack flows (Roy et al., SIGCOMM 2015).

The points are those of the pFabric / Opera simulation artifacts (the Opera copy, NSDI
2020), not re-digitised from the papers' figures here.
"""

from __future__ import annotations

import numbers
from pathlib import Path
from typing import Any

import numpy as np

from mrfq.errors import InputError

WORKLOAD_DIR = Path(__file__).resolve().parent

#: bundled workload name → file
BUNDLED = {"websearch": "websearch.csv", "datamining": "datamining.csv",
           "fb_hadoop": "fb_hadoop.csv"}


def check_points(points: Any, where: str, source: str | None) -> tuple[np.ndarray, np.ndarray]:
    """Validate a CDF table: a list of at least two [size, cdf] pairs, sizes positive and
    strictly increasing, cdf values in [0, 1], non-decreasing, the last exactly 1.
    Returns (sizes, cdf) as float arrays; InputError naming ``where`` otherwise."""
    if isinstance(points, np.ndarray):  # from Python: an n × 2 array will do
        points = points.tolist()
    if not isinstance(points, (list, tuple)) or len(points) < 2:
        raise InputError("must be a list of at least two [size, cdf] pairs", where, source)
    sizes, probs = [], []
    for i, pair in enumerate(points):
        if (not isinstance(pair, (list, tuple)) or len(pair) != 2
                or not all(isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))
                           for v in pair)):
            raise InputError(f"point {i}: must be a pair of numbers [size, cdf], got {pair!r}",
                             where, source)
        sizes.append(float(pair[0]))
        probs.append(float(pair[1]))
    x, f = np.array(sizes), np.array(probs)
    if not (np.isfinite(x).all() and (x > 0).all()):
        raise InputError("sizes must be positive and finite", where, source)
    if (np.diff(x) <= 0).any():
        i = int(np.flatnonzero(np.diff(x) <= 0)[0]) + 1
        raise InputError(f"point {i}: sizes must increase strictly ({x[i - 1]:g} then "
                         f"{x[i]:g})", where, source)
    if not (np.isfinite(f).all() and (f >= 0).all() and (f <= 1).all()):
        raise InputError("cdf values must be in [0, 1]", where, source)
    if (np.diff(f) < 0).any():
        i = int(np.flatnonzero(np.diff(f) < 0)[0]) + 1
        raise InputError(f"point {i}: cdf values must not decrease ({f[i - 1]:g} then "
                         f"{f[i]:g})", where, source)
    if f[-1] != 1.0:
        raise InputError(f"the last cdf value must be 1, got {f[-1]:g}", where, source)
    return x, f


def read_table(path: Path, where: str, source: str | None) -> tuple[np.ndarray, np.ndarray]:
    """A CDF table from a CSV file: two columns (size, cdf), an optional header row,
    blank rows and rows starting with ``#`` skipped; validated by :func:`check_points`."""
    try:
        text = Path(path).read_text()
    except OSError as err:
        raise InputError(f"cannot read '{path}': {err.strerror or err}", where,
                         source) from None
    points, seen_row = [], False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        cells = [c.strip().strip('"') for c in stripped.replace("\t", ",").split(",")]
        if len(cells) == 1:
            cells = stripped.split()
        try:
            pair = [float(cells[0]), float(cells[1])]
        except (ValueError, IndexError):
            if not seen_row:  # a header
                seen_row = True
                continue
            raise InputError(f"'{Path(path).name}' line {number}: expected two numbers "
                             f"(size, cdf), got {stripped!r}", where, source) from None
        seen_row = True
        points.append(pair)
    return check_points(points, f"{where} ('{Path(path).name}')", source)


def bundled(name: str, where: str, source: str | None) -> tuple[np.ndarray, np.ndarray]:
    """The CDF table of a bundled workload (:data:`BUNDLED`)."""
    if name not in BUNDLED:
        import difflib  # only on the error path

        close = difflib.get_close_matches(name, list(BUNDLED), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise InputError(f"unknown workload {name!r} (bundled: {', '.join(BUNDLED)}{hint})",
                         where, source)
    return read_table(WORKLOAD_DIR / BUNDLED[name], where, source)


def raw_moment(x: np.ndarray, f: np.ndarray, r: int) -> float:
    """E[X^r] of the table's law (module doc), in the table's units (∞ if it overflows).

    Computed on the sizes divided by 2^k, the power of two just above the largest, then
    multiplied back by 2^(k r): scaling by a power of two is exact, so a table of ordinary
    sizes gives the mean (r = 1: squares) in the same bits as the formula on the sizes
    themselves, and higher moments within an ulp (``**`` takes ``pow``, exact to within
    an ulp), while one with sizes near 1e308 (x^(r+1) overflowed: NaN) or in the
    subnormals gets a finite moment."""
    exponent = int(np.frexp(x[-1])[1])
    y = np.ldexp(x, -exponent)
    mass = np.diff(f)
    width = np.diff(y)
    segment = mass * (y[1:] ** (r + 1) - y[:-1] ** (r + 1)) / ((r + 1) * width)
    with np.errstate(over="ignore"):
        return float(np.ldexp(f[0] * y[0] ** r + segment.sum(), exponent * r))


#: the sizes a table law may use, in work units after its rescaling (1 = m packets): as the
#: Pareto law's ``max``, so that E[X^3] stays finite (and no size underflows to 0)
SIZE_SPAN = (1e-100, 1e100)


def sample_mean(sizes: np.ndarray) -> float:
    """The mean of positive sizes, computed on the sizes divided by the power of two above
    the largest (exact), so that sizes near 1e308 do not overflow the sum; the same bits
    as ``sizes.mean()`` otherwise."""
    exponent = int(np.frexp(sizes.max())[1])
    return float(np.ldexp(np.ldexp(sizes, -exponent).mean(), exponent))


def check_span(sizes: np.ndarray, rescaled: bool, where: str,
               source: str | None) -> np.ndarray:
    """``sizes`` (as a table law uses them: divided by the mean when ``rescaled``), or
    InputError if they leave :data:`SIZE_SPAN`: moments overflow, small sizes vanish."""
    low, high = SIZE_SPAN
    if sizes.min() >= low and sizes.max() <= high:
        return sizes
    what = "sizes divided by their mean" if rescaled else "sizes (rescale = false: work units)"
    raise InputError(f"{what} must lie in [1e-100, 1e100], got {sizes.min():.3g}.."
                     f"{sizes.max():.3g}", where, source)


def cdf(x: np.ndarray, f: np.ndarray, at: np.ndarray) -> np.ndarray:
    """P(X ≤ at): 0 below the first size, linear between points, 1 from the last on."""
    at = np.asarray(at, dtype=np.float64)
    return np.where(at < x[0], 0.0, np.interp(at, x, f))


def quantile(x: np.ndarray, f: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The inverse CDF at u ∈ [0, 1): x_0 for u < F_0, else on the segment i with
    F_{i−1} ≤ u < F_i, linearly; a segment without mass (F_{i−1} = F_i) is never chosen."""
    u = np.asarray(u, dtype=np.float64)
    i = np.searchsorted(f, u, side="right")  # F_{i−1} ≤ u < F_i
    inside = (i > 0) & (i < f.size)
    j = np.where(inside, i, np.argmax(np.diff(f) > 0) + 1)  # any segment with mass
    out = x[j - 1] + (u - f[j - 1]) / (f[j] - f[j - 1]) * (x[j] - x[j - 1])
    return np.where(i == 0, x[0], np.where(inside, out, x[-1]))


def describe(x: np.ndarray, f: np.ndarray) -> str:
    """One line: points, range and mean, for error messages and listings."""
    mean = raw_moment(x, f, 1)
    y = x / x[-1]  # (the SCV from sizes of order 1: the moments of the raw sizes may be inf)
    scv = raw_moment(y, f, 2) / raw_moment(y, f, 1) ** 2 - 1
    return f"{x.size} points, sizes {x[0]:g}..{x[-1]:g}, mean {mean:.6g}, SCV {scv:.3g}"

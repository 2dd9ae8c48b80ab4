"""Field checks shared by every input file (scenarios, problem files) and CLI option.

Each check takes the raw value, the field's dotted name (``classes[2].requirements``) and
the source file, and either returns the clean value or raises :class:`InputError`, which
the CLI prints as the one line ``error: <file>: <field>: <problem>`` (exit code 2).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from mrfq.errors import InputError

#: the range of a weight (scenario classes, problem users, the fluid solvers' ``weights``;
#: relative, as load shares): the solvers hold to 1e12 between two weights; 1e308
#: overflowed (ZeroDivisionError, HiGHS "model error"), 1e-320 lost its digits (measured)
MIN_WEIGHT, MAX_WEIGHT = 1e-6, 1e6


def check_weights(weights: Any, field: str, source: str | None = None,
                  subject: str = "") -> None:
    """InputError unless every weight (a number or an array) is in [MIN_WEIGHT,
    MAX_WEIGHT]; ``subject`` starts the message (``"weights "`` where the field is a
    keyword)."""
    w = np.asarray(weights, dtype=np.float64).reshape(-1)
    outside = w[(w < MIN_WEIGHT) | (w > MAX_WEIGHT)]
    if outside.size:
        raise InputError(f"{subject}must be between {MIN_WEIGHT:g} and {MAX_WEIGHT:g} "
                         f"(weights are relative: scale them), got {outside[0]:g}", field,
                         source)

def check_keys(table: Any, allowed: set[str], where: str, source: str | None) -> dict:
    """``table`` must be a TOML table whose keys are all in ``allowed``."""
    if not isinstance(table, dict):
        raise InputError("must be a table", where or "<top>", source)
    unknown = sorted(set(table) - allowed)
    if unknown:
        known = ", ".join(sorted(allowed))
        name = f"{where}.{unknown[0]}" if where else unknown[0]
        raise InputError(f"unknown key (known keys: {known})", name, source)
    return table


def shown(value: Any) -> str:
    """A value as an error message shows it: booleans as TOML spells them (``true``, not
    Python's ``True``: the user wrote the file), anything else as its repr."""
    if isinstance(value, bool | np.bool_):
        return "true" if value else "false"
    return repr(value)


def number(value: Any, field: str, source: str | None, *, positive: bool = False,
           nonnegative: bool = False, allow_inf: bool = False) -> float:
    """A real number (not a bool, not NaN; ∞ only with ``allow_inf``)."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise InputError(f"must be a number, got {shown(value)}", field, source)
    value = float(value)  # (NumPy scalars too: np.float32(0.5), np.int64(4))
    if math.isnan(value) or (math.isinf(value) and not allow_inf):
        raise InputError(f"must be {'a number or inf' if allow_inf else 'finite'}, got "
                         f"{value}", field, source)
    if positive and value <= 0:
        raise InputError(f"must be positive, got {value:g}", field, source)
    if nonnegative and value < 0:
        raise InputError(f"must be non-negative, got {value:g}", field, source)
    return value


def count_text(count: float) -> str:
    """A count as the messages show it: 1,234,567, or 2.4e+300 (inf) when too long to
    read that way; an int beyond the floats (10**400) as ~1e400."""
    if isinstance(count, int) and abs(count) >= 10**300:
        return f"~1e{len(str(abs(count))) - 1}"
    return f"{count:,.0f}" if abs(count) < 1e15 else f"{count:.3g}"


def integer(value: Any, field: str, source: str | None, minimum: int,
            maximum: int | None = None, why: str = "") -> int:
    """An integer ≥ ``minimum`` and, if given, ≤ ``maximum`` (``why``: the reason for
    the maximum, in the message); a float with an integral value is accepted."""
    if isinstance(value, float | np.floating) and float(value).is_integer():
        value = int(value)
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise InputError(f"must be an integer, got {shown(value)}", field, source)
    value = int(value)  # (NumPy integers too: np.int64(3))
    if value < minimum:
        raise InputError(f"must be >= {minimum}, got {count_text(value)}", field, source)
    if maximum is not None and value > maximum:  # (1e308 has 309 digits: count_text)
        raise InputError(f"must be <= {maximum:,}{f' ({why})' if why else ''}, got "
                         f"{count_text(value)}", field, source)
    return value


def vector(value: Any, length: int, field: str, source: str | None,
           what: str = "one per resource") -> np.ndarray:
    """``length`` finite non-negative numbers, not all zero."""
    if not isinstance(value, list):
        raise InputError(f"must be a list of {length} numbers", field, source)
    if len(value) != length:
        raise InputError(f"has {len(value)} entries, expected {length} ({what})", field,
                         source)
    out = np.array([number(v, f"{field}[{i}]", source, nonnegative=True)
                    for i, v in enumerate(value)])
    if not np.any(out > 0):
        raise InputError("all entries are zero", field, source)
    return out


def name_list(value: Any, field: str, source: str | None, *, allowed: tuple[str, ...] = (),
              what: str = "name", lower: bool = False) -> tuple[str, ...]:
    """A non-empty list (or tuple: a section's default) of distinct strings (a lone
    string is a one-element list), each in ``allowed`` when that is given."""
    if isinstance(value, str):
        value = [value]
    # "policy" → "policies" (a consonant before the y), "server" → "servers"
    whats = what[:-1] + "ies" if what.endswith("y") and what[-2:-1] not in "aeiou" else what + "s"
    if not isinstance(value, list | tuple) or not value:
        raise InputError(f"must be a non-empty list of {whats}", field, source)
    out: list[str] = []
    for item in value:
        if not isinstance(item, str):
            raise InputError(f"must be a list of {whats}, got {shown(item)}", field, source)
        name = item.lower() if lower else item
        if not name.strip():
            raise InputError(f"must be a list of {whats}, got an empty name {item!r}", field,
                             source)
        if allowed and name not in allowed:
            import difflib  # only on the error path

            close = difflib.get_close_matches(name, allowed, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise InputError(f"unknown {what} '{item}' (choose from {', '.join(allowed)}"
                             f"{hint})", field, source)
        if name in out:  # (as a load given twice: a typo, not a request to merge)
            raise InputError(f"must be distinct: names the {what} '{item}' twice", field,
                             source)
        out.append(name)
    return tuple(out)


def file_name(value: Any, field: str, source: str | None) -> str:
    """A name that is also one file or directory name (a scenario's: results go to
    ``results/<name>``, figures to ``<name>.png``): :func:`text` with ``name``, and no
    ``/``, ``\\``, NUL, nor ``.`` or ``..`` (``../../x`` wrote outside ``results/``)."""
    value = text(value, field, source, name=True)
    if any(c in value for c in "/\\\0") or value.strip() in (".", ".."):
        raise InputError(f"must be a file name (no /, \\ or NUL, not . or ..): results go "
                         f"to results/<name>, got {value!r}", field, source)
    return value


def text(value: Any, field: str, source: str | None, *, name: bool = False) -> str:
    """A string (descriptions); with ``name``, a name: not empty nor only blanks (an empty
    class or resource name reads back from a results table as a missing value)."""
    if not isinstance(value, str):
        raise InputError(f"must be a string, got {shown(value)}", field, source)
    if name and not value.strip():
        raise InputError(f"must be a name, not an empty string, got {value!r}", field, source)
    return value

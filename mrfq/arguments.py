"""The Python API's arguments, checked and normalised as the command line's are: one
:class:`~mrfq.errors.InputError` naming the keyword (the CLI shows it as the option),
never a raw TypeError from deep inside, and never a string taken letter by letter."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable
from numbers import Integral, Real
from pathlib import Path
from typing import Any

import numpy as np

from mrfq.errors import InputError


def split_items(text: str, field: str) -> list[str]:
    """The items of a comma- or space-separated list, as an option gives it ("drf,pf",
    "0.5 0.9"); an empty item ("0.5,,0.9": a typo) is an InputError, here as on the
    command line."""
    if text.strip() and not all(part.strip() for part in text.split(",")):
        raise InputError(f"an empty value in '{text}'", field)
    return text.replace(",", " ").split()


def names(value: Any, field: str) -> tuple[str, ...] | None:
    """A list of names (``policies``): None stays None (the default); a string is a
    list separated by commas or spaces, as on the command line ("drf,pf"); else an
    iterable of strings. InputError when it names nothing, or one name twice."""
    if value is None:
        return None
    if isinstance(value, str):
        items = split_items(value, field)
    elif isinstance(value, Iterable):
        items = list(value)
    else:
        raise InputError(f"must be a list of names, got {type(value).__name__}", field)
    for item in items:
        if not isinstance(item, str):
            raise InputError(f"must be a list of names, got {item!r}", field)
    if len(items) > 1 and not all(item.strip() for item in items):  # (as "drf,,pf")
        raise InputError(f"an empty name in {list(items)!r}", field)
    items = [item for item in items if item]
    if not items:
        raise InputError("names nothing (leave it out for the scenario's)", field)
    twice = next((item for i, item in enumerate(items) if item in items[:i]), None)
    if twice is not None:  # (as a repeated load: a typo, not a request to merge)
        raise InputError(f"names '{twice}' twice", field)
    return tuple(items)


def numbers(value: Any, field: str) -> tuple[float, ...] | None:
    """A list of numbers (``loads``): None stays None (the default); a number is a
    one-element list; a string is a list separated by commas or spaces, as on the
    command line; else an iterable of numbers. InputError for anything else, an empty
    list or a repeated value."""
    if value is None:
        return None
    if isinstance(value, str):
        items: list[Any] = split_items(value, field)
        try:
            items = [float(item) for item in items]
        except ValueError:
            raise InputError(f"must be numbers, got {value!r}", field) from None
    elif isinstance(value, Real) and not isinstance(value, bool):
        items = [value]
    elif isinstance(value, Iterable):
        items = list(value)
    else:
        raise InputError(f"must be a list of numbers, got {type(value).__name__}", field)
    for item in items:
        if isinstance(item, bool) or not isinstance(item, Real) or not math.isfinite(item):
            raise InputError(f"must be a list of finite numbers, got {item!r}", field)
    if not items:
        raise InputError("names no value (leave it out for the scenario's)", field)
    values = tuple(float(item) for item in items)
    repeated = [value for i, value in enumerate(values) if value in values[:i]]
    if repeated:  # as the file's load.values
        raise InputError(f"values must be distinct: {repeated[0]:g} is given twice", field)
    return values


def accepts(value: Callable[..., Any], *example: Any) -> bool:
    """Whether ``value`` can be called with the positional arguments ``example`` (by its
    signature; one that has none, as some built-ins, is trusted)."""
    import inspect  # only where a callable is checked

    try:
        # (the function itself, not what a functools.wraps wrapper says it wraps)
        inspect.signature(value, follow_wrapped=False).bind(*example)
    except TypeError:
        return False
    except ValueError:  # (no signature to read)
        return True
    return True


def function(value: Any, field: str) -> Callable[[str], None] | None:
    """A function of one string (``log``), or None (say nothing). One that cannot take
    one argument is refused here, before any work (it raised a bare TypeError at its
    first message)."""
    if value is None or (callable(value) and accepts(value, "message")):
        return value
    shown = "one that cannot take one argument" if callable(value) else type(value).__name__
    raise InputError(f"must be a function of one string, or None; got {shown}", field)


def count(value: Any, field: str, minimum: int = 1, maximum: int | None = None,
          why: str = "") -> int | None:
    """A whole number ≥ ``minimum`` (``jobs``, ``seed``) and ≤ ``maximum`` (none by
    default: a seed may be any size, as in a scenario file), or None (the default);
    ``why`` follows the bound in the message."""
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise InputError(f"must be a whole number, got {value!r}", field)
    if value < minimum:
        raise InputError(f"must be >= {minimum}{why}, got {value}", field)
    if maximum is not None and value > maximum:
        raise InputError(f"must be <= {maximum}, got {value}", field)
    return int(value)


#: the most local worker processes: a pool larger than this on one machine is a mistake
#: (10³⁰ reached the process pool as an OverflowError)
MAX_JOBS = 1024


def jobs(value: Any, field: str = "jobs", scheduler: str | None = None) -> int | None:
    """Local worker processes: a whole number in [1, :data:`MAX_JOBS`], or None (one per
    core); InputError beside a Dask ``scheduler``, whose workers run the points instead
    (nothing would read it)."""
    if value is not None and scheduler:
        raise InputError("counts local worker processes, and with a Dask scheduler its "
                         "workers run the points instead: give one of the two", field)
    return count(value, field, 1, MAX_JOBS)


def real(value: Any, field: str, default: float | None = None) -> float | None:
    """A finite number (``tolerance``, ``precision``), or ``default`` for None; its range
    is the caller's to check."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
        raise InputError(f"must be a finite number, got {value!r}", field)
    return float(value)


def flag(value: Any, field: str, default: bool | None = None) -> bool | None:
    """True or False (numpy's too), or ``default`` for None: a string is refused, since
    ``"no"`` and ``"false"`` are true in Python and would mean the opposite."""
    if value is None:
        return default
    if not isinstance(value, bool | np.bool_):
        raise InputError(f"must be True or False, got {value!r}", field)
    return bool(value)


def path(value: Any, field: str) -> Path | None:
    """A file or directory path (``results_dir``), or None (the default)."""
    if value is None:
        return None
    if not isinstance(value, str | os.PathLike):
        raise InputError(f"must be a path, got {type(value).__name__}", field)
    if str(value).strip() == "":
        raise InputError("is an empty path", field)
    return Path(value)


def scheduler(value: Any, field: str = "scheduler") -> str | None:
    """A Dask scheduler's address (``tcp://host:8786``), or None (local processes):
    checked before any work, so that neither a typo nor an empty value (an unset shell
    variable) runs the sweep here, or fails with a traceback once it has started."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(f"must be an address such as tcp://host:8786, got "
                         f"{type(value).__name__}", field)
    if not value.strip():
        raise InputError("is an empty address (leave it out to run on this machine)", field)
    try:
        from distributed.comm.addressing import (  # optional extra (mrfq[dask])
            get_address_host_port,
            parse_address,
        )
    except ImportError:
        raise InputError("needs the optional extra: pip install 'mrfq[dask]'", field) from None
    try:
        # a network address needs its host and port ("nonsense" reads as tcp://nonsense);
        # others (inproc:// of an in-process cluster) are left to the client
        if parse_address(value)[0] in ("tcp", "tls", "ws", "wss"):
            get_address_host_port(value)
    except ValueError as exc:
        raise InputError(f"not a scheduler address such as tcp://host:8786 ({exc})",
                         field) from None
    return value

"""One exception type for every input problem a user can fix.

The CLI turns it into the single line ``error: <file>: <field>: <problem>`` and exit code 2.
"""

from __future__ import annotations


class InputError(Exception):
    """A user-fixable problem with an input (scenario file, option, argument)."""

    def __init__(self, problem: str, field: str | None = None, source: str | None = None,
                 *, output: bool = False):
        self.problem = problem
        self.field = field
        self.source = source
        # about a path the run would write (a results directory): the CLI names the option
        # that gave it even when the same path is also an input (``flows a.toml -o a.toml``)
        self.output = output
        super().__init__(self.message)

    @property
    def message(self) -> str:
        """``<source>: <field>: <problem>``, the parts that are set (the CLI's error line)."""
        parts = [p for p in (self.source, self.field, self.problem) if p]
        return ": ".join(parts)

    def located(self, source: str) -> InputError:
        """The same error, attributed to a file if it was not already."""
        if self.source is None:
            self.source = source
        return self

"""``python -m mrfq ARGS`` runs the command line, as the ``mrfq`` script does."""

from mrfq.cli import main
from mrfq.console import command_line


def entry() -> None:
    """The ``mrfq`` script (pyproject's ``[project.scripts]``)."""
    command_line(main)


if __name__ == "__main__":
    entry()

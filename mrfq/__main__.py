"""``python -m mrfq ARGS`` runs the command line, as the ``mrfq`` script does."""

import sys

from mrfq.cli import main

sys.exit(main())

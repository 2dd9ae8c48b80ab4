"""Sphinx configuration of the mrfq documentation site (`make docs`).

Sphinx with MyST rather than MkDocs: the docstrings are written with reStructuredText
roles (:func:, :mod:, :data:), which autodoc resolves into links and MkDocs' renderers
would print as text; MyST reads the Markdown pages (and VALIDATION.md, BENCHMARKS.md) as
they are on GitHub. The scenario-file reference is generated here from the validator's
key sets (mrfq.scenario.reference), so it cannot drift from the code.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mrfq.scenario.reference import reference_markdown  # noqa: E402

GENERATED = Path(__file__).resolve().parent / "_generated"
GENERATED.mkdir(exist_ok=True)
_page = GENERATED / "scenario_reference.md"
_text = reference_markdown()
if not _page.exists() or _page.read_text() != _text:  # unchanged: no rebuild of the page
    _page.write_text(_text)

project = "mrfq"
author = "the mrfq developers"
# myst_nb is MyST plus executable notebooks: the tutorials run at every build, and a
# tutorial that raises fails it (CI builds with -W)
extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx_click"]
nb_execution_mode = "force"
nb_execution_raise_on_error = True
nb_execution_timeout = 900
exclude_patterns = ["_build", "_generated/*.md"]
html_theme = "furo"
html_title = "mrfq"
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]
autodoc_member_order = "bysource"
autodoc_typehints = "description"
# The Markdown files written for GitHub start their numbering where they like and name
# code languages Pygments does not know (toml fragments with ellipses): neither is a
# documentation error.
suppress_warnings = ["myst.header", "misc.highlighting_failure"]

"""The documentation: the generated scenario reference covers exactly what the validator
accepts, the README is a short front page whose links resolve, and every page the site's
tables of contents name exists. (The site itself is built, warnings as errors, by
`make docs` in CI.)"""

from __future__ import annotations

import re
from pathlib import Path

from mrfq.scenario.reference import SECTIONS, reference_markdown

ROOT = Path(__file__).resolve().parent.parent


def test_scenario_reference_describes_every_accepted_key():
    for section in SECTIONS:
        assert set(section.keys) == set(section.accepted), (
            f"{section.table}: accepted but undescribed "
            f"{sorted(set(section.accepted) - set(section.keys))}, described but not "
            f"accepted {sorted(set(section.keys) - set(section.accepted))}")
    page = reference_markdown()
    for section in SECTIONS:
        for key in section.accepted:
            assert f"| `{key}` |" in page


def test_size_law_keys_are_described_with_the_laws_the_validator_takes_them_for():
    """Each ``[classes.size]`` key, tried with every law through the validator itself:
    it is an unknown key exactly for the laws the reference does not list it under."""
    import pytest

    from mrfq.errors import InputError
    from mrfq.sizes import DISTRIBUTIONS, parse_size

    (section,) = [s for s in SECTIONS if s.table == "[classes.size]"]
    assert set(section.laws) == set(section.keys) - {"distribution"}
    for key in section.laws:
        for law in DISTRIBUTIONS:
            with pytest.raises(InputError) as caught:  # wrong types: every try fails
                parse_size({"distribution": law, key: object()})
            unknown = "unknown key" in str(caught.value)
            assert unknown == (law not in section.laws[key]), (key, law, caught.value)
    page = reference_markdown()
    assert "| `workload` | `cdf` |" in page and "| `max` | `pareto` |" in page


def test_reference_defaults_come_from_the_records():
    from mrfq.scenario.config import PacketConfig

    page = reference_markdown()
    assert f"| `window` | `{PacketConfig().window}` |" in page
    assert f"| `virtual_time` | `{PacketConfig().virtual_time}` |" in page


def test_readme_is_a_short_front_page_whose_links_resolve():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 150
    assert "make run" in text and "make test" in text and "make docs" in text
    links = re.findall(r"\]\(([^)#]+)\)", text)
    assert links
    for link in links:
        assert (ROOT / link).exists(), link


def test_every_page_in_the_tables_of_contents_exists():
    index = (ROOT / "docs" / "index.md").read_text()
    pages = re.findall(r"^([\w/.-]+)$", "\n".join(
        block for block in re.findall(r"```\{toctree\}\n(.*?)```", index, flags=re.S)),
        flags=re.M)
    assert len(pages) >= 10
    for page in pages:
        assert (ROOT / "docs" / f"{page}.md").exists(), page


def test_every_cli_option_has_help_and_no_spec_reference():
    import click

    from mrfq.cli import main

    missing = []
    for name, command in main.commands.items():
        assert command.help and "SPEC" not in command.help, name
        for param in command.params:
            if isinstance(param, click.Option) and not param.help:
                missing.append(f"{name} {param.opts[-1]}")
            assert "SPEC" not in (getattr(param, "help", None) or ""), (name, param.opts)
    assert not missing, missing


def test_every_tutorial_is_an_executed_notebook():
    """A tutorial without the MyST-NB header would render as a plain page and never run,
    so a broken one would pass CI (docs/conf.py executes every notebook, errors fatal)."""
    tutorials = sorted((ROOT / "docs" / "tutorials").glob("*.md"))
    assert len(tutorials) >= 7
    plain = [path.name for path in tutorials
             if not re.match(r"---\n(?:.*\n)*?file_format: mystnb\n(?:.*\n)*?---\n",
                             path.read_text())]
    assert not plain, plain
    conf = (ROOT / "docs" / "conf.py").read_text()
    assert 'nb_execution_mode = "force"' in conf and "nb_execution_raise_on_error = True" in conf

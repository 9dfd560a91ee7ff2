"""Every alert of the chart's PrometheusRule has a ``runbook_url`` whose anchor is a section of
docs/troubleshooting.md that says what the alert means and what to do.

Read from the template's text (the rendered rules are checked with promtool in
tests/integration/test_chart_alerts.py): each ``- alert: Name`` block carries
``runbook_url: {{ printf "%s#<anchor>" $rules.runbookBaseUrl | quote }}``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "kafka-zk-operator"
TEMPLATE = CHART / "templates" / "prometheusrule.yaml"
TROUBLESHOOTING = ROOT / "docs" / "troubleshooting.md"
_RUNBOOK = re.compile(r'runbook_url: \{\{ printf "%s#([^"]+)" \$rules\.runbookBaseUrl \| quote \}\}$')


def alert_blocks() -> dict[str, str]:
    """Alert name -> the template text of its rule."""
    parts = re.split(r"^\s+- alert: (\w+)$", TEMPLATE.read_text(), flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def github_anchor(heading: str) -> str:
    """The anchor GitHub (and most Markdown renderers) gives a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def sections() -> dict[str, str]:
    """Anchor -> the section's text, for the ``###`` headings of docs/troubleshooting.md."""
    parts = re.split(r"^### (.+)$", TROUBLESHOOTING.read_text(), flags=re.MULTILINE)
    return {
        github_anchor(h): body.split("\n## ", 1)[0] for h, body in zip(parts[1::2], parts[2::2], strict=True)
    }


def test_the_template_has_alerts() -> None:
    assert len(alert_blocks()) >= 8, sorted(alert_blocks())


@pytest.mark.parametrize("alert", sorted(alert_blocks()))
def test_alert_has_a_runbook_section_in_troubleshooting(alert: str) -> None:
    urls = [m.group(1) for line in alert_blocks()[alert].splitlines() if (m := _RUNBOOK.search(line.strip()))]
    assert len(urls) == 1, f"{alert}: add exactly one runbook_url annotation to {TEMPLATE.relative_to(ROOT)}"
    (anchor,) = urls
    assert anchor == alert.lower(), f"{alert}: its runbook anchor is #{alert.lower()}, not #{anchor}"
    found = sections()
    assert anchor in found, f"docs/troubleshooting.md has no '### {alert}' section (anchors: {sorted(found)})"
    body = found[anchor]
    assert "**Meaning**" in body and "**What to do**" in body, (
        f"docs/troubleshooting.md#{anchor}: say what {alert} means and what to do"
    )


def test_default_runbook_base_is_the_troubleshooting_page() -> None:
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    base = values["metrics"]["prometheusRule"]["runbookBaseUrl"]
    assert (ROOT / base).resolve() == TROUBLESHOOTING.resolve()


def test_github_anchor() -> None:
    assert github_anchor("KzoOperatorDown") == "kzooperatordown"
    assert github_anchor("Stopping and deleting") == "stopping-and-deleting"

"""Every way out shows stored text literally: no terminal control, no markup, nothing cut."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.cells import cell_len

from memtui.cli.main import cli
from memtui.home import Home
from memtui.text import strip_controls
from tests.conftest import run_cli

HOSTILE = "Title \x1b]0;pwned\x07\x1b[2J\x1b[31mred\x1b[0m \x9b2J bell\x07 nul\x00 del\x7f"
TERMINAL_BYTES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _plant_raw(home: Home) -> None:
    """Rows written before the way in scrubbed (or by another program): raw controls."""
    db = home.open_db()
    try:
        with db.write():
            db.execute("INSERT INTO state(created_at, updated_at, agent, category, domain, "
                       "summary, detail, status, session_date, confidence) VALUES "
                       "('2026-11-20T10:00:00Z', '2026-11-20T10:00:00Z', 'main', 'decision', "
                       "'general', ?, ?, 'active', '2026-11-20', 1.0)", (HOSTILE, HOSTILE))
            db.execute("INSERT INTO rules(rule, norm_key, domain, agent, source, provenance, "
                       "score, violations, last_reinforced, created_at, updated_at, status) "
                       "VALUES (?, 'k', 'general', NULL, 'manual', '[]', 8.0, 0, "
                       "'2026-11-20T10:00:00Z', '2026-11-20T10:00:00Z', "
                       "'2026-11-20T10:00:00Z', 'active')", (HOSTILE,))
    finally:
        db.close()


def test_no_listing_sends_control_characters_to_the_terminal(home: Home) -> None:
    _plant_raw(home)
    (home.workspace("main") / "MEMORY.md").write_text("# Memory\n\n" + HOSTILE + "\n")
    for args in (("state", "list"), ("state", "show", "1"), ("rules", "list"),
                 ("rules", "show", "1"), ("boot",), ("boot", "--markdown"),
                 ("gate", "pre", "Title"), ("audit",), ("get", "MEMORY.md")):
        done = run_cli(*args, home=home, env={"COLUMNS": "80"})
        assert done.returncode == 0, (args, done.stderr)
        assert not TERMINAL_BYTES.search(done.stdout), (args, done.stdout)
        assert "␛]0;pwned␇" in done.stdout or "pwned" not in done.stdout, args


def test_markup_in_stored_text_is_shown_literally(home: Home) -> None:
    text = "[bold]not bold[/bold] and [link=https://evil.example]click[/link] :smile:"
    run_cli("state", "add", "decision", text, home=home)
    run_cli("rules", "add", text, home=home)
    run_cli("flows", "add", "f", "--step", text, "--trigger", text, home=home)
    for args in (("state", "list"), ("state", "show", "1"), ("rules", "list"),
                 ("rules", "show", "1"), ("flows", "show", "f"), ("flows", "list")):
        out = run_cli(*args, home=home, env={"COLUMNS": "200"}).stdout
        assert "[bold]not bold[/bold]" in out and "[link=https://evil.example]" in out, args
        assert ":smile:" in out


def test_wrapped_text_loses_nothing_at_80_columns(home: Home) -> None:
    summary = ("We decided to keep Postgres 16 for the billing database because the upgrade "
               "needs downtime on the payments service and a migration window of two hours")
    run_cli("state", "add", "decision", summary, "--domain", "infrastructure", home=home)
    run_cli("rules", "add", summary, home=home)
    for args in (("state", "list"), ("rules", "list")):
        for columns in ("80", "60", "40"):
            out = run_cli(*args, home=home, env={"COLUMNS": columns}).stdout
            assert max(len(line) for line in out.splitlines()) <= int(columns)
            assert _squeeze(summary) in _squeeze(out), (args, columns, out)


def _squeeze(text: str) -> str:
    return "".join(c for c in text if not c.isspace())


def _printable(text: str) -> list[str]:
    return [c for c in text if c.isprintable() and not c.isspace()]


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(min_size=1, max_size=300).filter(lambda t: _printable(strip_controls(t))))
def test_any_text_through_state_add_and_list(home: Home, text: str) -> None:
    runner = CliRunner()
    root = str(home.root)
    added = runner.invoke(cli, ["--home", root, "state", "add", "--json", "--", "context", text])
    assert added.exit_code == 0, added.output
    entry_id = json.loads(added.output)["id"]
    shown = runner.invoke(cli, ["--home", root, "state", "list", "--limit", "1"],
                          env={"COLUMNS": "80"})
    assert shown.exit_code == 0
    out = shown.output
    assert not TERMINAL_BYTES.search(out)
    lines = out.split("\n")  # what a terminal breaks on (not U+2028, U+0085 …)
    if "summary" in lines[0]:  # a table: the text is the last column
        start, first = lines[0].index("summary"), lines[1]
        region = "".join(line[start:] for line in lines[1:] if line)
    else:  # too narrow for one: the fields, then the text indented below them
        assert lines[1].strip() == "summary", out
        first, region = lines[2], "".join(line[4:] for line in lines[3:] if line)
    assert first.split()[0] == str(entry_id)
    assert _printable(region) == _printable(strip_controls(text))
    assert all(cell_len(line) <= 80 for line in lines)  # cells: combining marks take none

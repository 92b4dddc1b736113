"""One CLI grammar (issue 8): --agent, --limit/--max-results, --in, --json, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest

from memtui.cli.main import cli
from memtui.config import load_settings, render_settings
from memtui.errors import ExitCode
from memtui.home import Home
from tests.conftest import run_cli


def test_exit_codes_are_defined_once() -> None:
    assert [int(c) for c in ExitCode] == [0, 1, 2, 3]
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    for code in ExitCode:
        assert f"| {int(code)} |" in section, code.name


def test_agent_is_positional_or_an_option_in_boot_and_gates(home: Home) -> None:
    by_word = json.loads(run_cli("boot", "ops", "--json", home=home).stdout)
    by_option = json.loads(run_cli("boot", "--agent", "ops", "--json", home=home).stdout)
    assert by_word["agent"] == by_option["agent"] == "ops"
    assert run_cli("boot", "ops", "--agent", "ops", home=home).returncode == 0
    clash = run_cli("boot", "ops", "--agent", "main", home=home)
    assert clash.returncode == 1 and "two agents" in clash.stderr

    pre = json.loads(run_cli("gate", "pre", "--agent", "ops", "deploy it", "--json",
                             home=home).stdout)
    assert pre["agent"] == "ops" and pre["action"] == "deploy it"
    pre = json.loads(run_cli("gate", "pre", "ops", "deploy it", "--json", home=home).stdout)
    assert pre["agent"] == "ops" and pre["action"] == "deploy it"
    default = json.loads(run_cli("gate", "pre", "deploy it", "--json", home=home).stdout)
    assert default["agent"] == "main"
    clash = run_cli("gate", "pre", "ops", "deploy it", "--agent", "main", home=home)
    assert clash.returncode == 1 and "two agents" in clash.stderr

    post = json.loads(run_cli("gate", "post", "--agent", "ops", "pass", "shipped", "--json",
                              home=home).stdout)
    old = json.loads(run_cli("gate", "post", "ops", "fail", "broke", "--json",
                             home=home).stdout)
    assert post["state_id"] != old["state_id"]
    state = {e["summary"]: e["agent"] for e in json.loads(
        run_cli("state", "list", "--status", "any", "--json", home=home).stdout)}
    assert {agent for summary, agent in state.items() if "shipped" in summary
            or "broke" in summary} == {"ops"}
    bad = run_cli("gate", "post", "ops", "maybe", "x", home=home)
    assert bad.returncode == 1 and "pass or fail" in bad.stderr
    assert run_cli("gate", "post", "--agent", "main", "ops", "pass", "x",
                   home=home).returncode == 1


@pytest.mark.parametrize("command", [("state", "list"), ("rules", "list"), ("audit",)])
def test_limit_and_max_results_are_one_option(home: Home, command: tuple[str, ...]) -> None:
    for n in range(3):
        run_cli("state", "add", "decision", f"Decision number {n}", home=home)
        run_cli("rules", "add", f"Rule number {n}", home=home)
    for spelling in ("--limit", "--max-results"):
        done = run_cli(*command, spelling, "2", "--json", home=home)
        assert done.returncode == 0, done.stderr
        assert len(json.loads(done.stdout)) == 2
    assert run_cli(*command, "--limit", "0", home=home).returncode == 1


def test_search_takes_in_limit_and_the_old_spellings(home: Home) -> None:
    help_text = run_cli("search", "--help", home=home).stdout
    assert "--in [memory|sessions|episodes|facts]" in help_text
    assert "--limit, --max-results" in help_text
    assert "--source" not in help_text  # kept for the eval contract, hidden
    text = run_cli("recall", "--help", home=home).stdout
    assert "--limit, --max-results" in text
    bad = run_cli("search", "x", "--in", "nowhere", home=home)
    assert bad.returncode == 1 and "nowhere" in bad.stderr
    bad = run_cli("search", "x", "--source", "nowhere", home=home)
    assert bad.returncode == 1 and "nowhere" in bad.stderr


def test_commands_that_lacked_json_have_it(tmp_path: Path, home: Home) -> None:
    init = json.loads(run_cli("init", "--json", home=tmp_path / "new").stdout)
    assert any(p.endswith("memory.db") for p in init["created"]) and init["existing"] == []
    again = json.loads(run_cli("init", "--json", home=tmp_path / "new").stdout)
    assert again["created"] == []

    policy = json.loads(run_cli("policy", "check", "--json", home=home).stdout)
    assert policy["valid"] is True and policy["errors"] == []
    good = home.policy_path.read_text()
    home.policy_path.write_text("capture:\n  state: maybe\n")
    bad = run_cli("policy", "check", "--json", home=home)
    assert bad.returncode == 1
    assert json.loads(bad.stdout)["valid"] is False and json.loads(bad.stdout)["errors"]
    home.policy_path.write_text(good)

    transcript = tmp_path / "t.jsonl"
    transcript.write_text("")
    run_cli("sources", "add", str(transcript), "--format", "generic", home=home)
    removed = json.loads(run_cli("sources", "remove", "1", "--json", home=home).stdout)
    assert removed["removed"]["pattern"] == str(transcript)

    once = run_cli("daemon", "--once", "maintenance", "--json", home=home)
    assert once.returncode == 0, once.stderr
    assert json.loads(once.stdout)["status"] == "ok"
    assert run_cli("daemon", "--json", home=home).returncode == 1


def test_demo_json(tmp_path: Path) -> None:
    done = run_cli("demo", "--keep", str(tmp_path / "demo"), "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["extract"]["turns_read"] > 0 and out["boot"]["agent"] == "coordinator"
    assert isinstance(out["extract"]["problems"], list)


def test_extract_json_has_one_problems_list(home: Home, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    transcript.write_text('{"type": "message", "id": "m1", "role": "user", '
                          '"content": "We decided to stay on nginx."}\n{not json\n')
    run_cli("sources", "add", str(transcript), "--format", "generic", home=home)
    out = json.loads(run_cli("extract", "--json", home=home).stdout)
    assert isinstance(out["problems"], list)
    assert out["problem_count"] == len(out["problems"])
    assert "problems_list" not in out


def test_negative_results_exit_3(home: Home) -> None:
    assert run_cli("flows", "check", "bake a cake", home=home).returncode == ExitCode.NEGATIVE
    assert run_cli("flows", "check", "bake a cake", "--json",
                   home=home).returncode == ExitCode.NEGATIVE
    settings = load_settings(home.config_path)
    settings.health.checks = {"falsy": "false"}
    home.config_path.write_text(render_settings(settings))
    failing = run_cli("health", home=home)
    assert failing.returncode == ExitCode.NEGATIVE, failing.stderr
    assert run_cli("health", "nope", home=home).returncode == ExitCode.NOT_FOUND


EXEMPT_FROM_JSON = {
    "context json": "prints JSON already",
    "console": "the interactive console",
    "serve": "the console in a browser tab",
    "mcp": "a server speaking MCP",
    "hook": "`hook` prints the JSON Claude Code reads for the event, nothing else",
}


def _leaf_commands() -> list[tuple[str, click.Command]]:
    ctx = click.Context(cli)
    out: list[tuple[str, click.Command]] = []

    def walk(cmd: click.Command, path: list[str]) -> None:
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None:
                    walk(sub, [*path, name])
            if not cmd.invoke_without_command or not path:  # bare `memtui`: the console
                return
        out.append((" ".join(path), cmd))

    walk(cli, [])
    return out


def test_every_command_follows_the_grammar() -> None:
    """New commands too: --json, --agent beside any agent argument, --limit = --max-results."""
    for path, cmd in _leaf_commands():
        opts = {o for p in cmd.params for o in getattr(p, "opts", [])}
        interactive = path == ""  # bare `memtui` on a terminal opens the console
        if not interactive and not any(path.startswith(e) for e in EXEMPT_FROM_JSON):
            assert "--json" in opts, f"memtui {path} has no --json"
        if any(isinstance(p, click.Argument) and p.name == "agent" for p in cmd.params):
            assert "--agent" in opts, f"memtui {path} takes the agent only positionally"
        if "--limit" in opts or "--max-results" in opts:
            assert {"--limit", "--max-results"} <= opts, f"memtui {path}: one spelling only"

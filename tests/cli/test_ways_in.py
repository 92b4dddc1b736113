"""Every way into memory scrubs: no secret and no control character is stored (issue 9)."""

from __future__ import annotations

import base64
import json
import random
import string
from pathlib import Path

from memtui.home import Home
from tests.conftest import run_cli


def fake(n: int, alphabet: str = string.ascii_letters + string.digits, seed: int = 0) -> str:
    """Random-looking, deterministic: no literal token in this file for a scanner to flag."""
    rng = random.Random(f"{seed}:{n}:{alphabet}")
    return "".join(rng.choice(alphabet) for _ in range(n))


B64 = string.ascii_letters + string.digits + "+/"
B64URL = string.ascii_letters + string.digits + "-_"
ANTHROPIC = "sk-ant-api03-" + fake(40, B64URL)
AWS_ID = "AKIA" + fake(16, string.ascii_uppercase + string.digits)
AWS_SECRET = fake(40, B64, 1)
GITHUB = "ghp_" + fake(36)
PEM_BODY = fake(64, B64, 2)
PEM = (f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n{fake(64, B64, 3)}\n"
       "-----END RSA PRIVATE KEY-----")
JWT = f"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ{fake(40, B64URL, 4)}.{fake(43, B64URL, 5)}"
DISCORD = (base64.urlsafe_b64encode(b"1164857296483520512").decode().rstrip("=")
           + f".{fake(6, B64URL, 6)}.{fake(38, B64URL, 7)}")

PLANTED = {"anthropic": ANTHROPIC, "aws id": AWS_ID, "aws secret": AWS_SECRET,
           "github": GITHUB, "pem body": PEM_BODY, "jwt": JWT, "discord": DISCORD}
TEXT = (f"keys: {ANTHROPIC} and {AWS_ID} with aws_secret_access_key={AWS_SECRET}; "
        f"GITHUB_TOKEN={GITHUB}; session {JWT}; bot {DISCORD}\n{PEM}")
ESCAPES = "Postgres 16 \x1b]0;pwned\x07\x1b[2J\x9b31m for billing\x7f"
NUL = "Postgres\x00 16 for billing"  # argv cannot carry NUL: through stdin and the stores


def _leaks(root: Path) -> dict[str, list[str]]:
    """Which planted secrets (and control bytes) occur in which file under ``root``: every
    byte of every file, including memory.db-wal and -shm."""
    found: dict[str, list[str]] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        for name, secret in PLANTED.items():
            if secret.encode() in data:
                found.setdefault(str(path.relative_to(root)), []).append(name)
        if path.suffix == ".md" and any(b in data for b in (b"\x1b", b"\x00", b"\x07")):
            found.setdefault(str(path.relative_to(root)), []).append("control bytes")
    return found


def test_no_way_in_stores_a_secret(home: Home) -> None:
    def ok(*args: str, stdin: str | None = None) -> str:
        done = run_cli(*args, home=home, input=stdin)
        assert done.returncode == 0, (args, done.stderr)
        return done.stdout

    entry = json.loads(ok("state", "add", "decision", TEXT, "--detail", TEXT, "--domain",
                          "infra", "--json"))
    ok("state", "update", str(entry["id"]), "--summary", "Rotate " + TEXT, "--detail", TEXT)
    ok("state", "supersede", str(entry["id"]), "Moved " + TEXT, "--detail", TEXT)
    ok("rules", "add", "Never paste " + TEXT)
    ok("remember", TEXT)
    ok("remember", "--long-term", TEXT)
    ok("remember", "-", stdin=TEXT)
    assert "redacted: anthropic_key" in ok("remember", "--fact", "deploy key", TEXT)
    assert "redacted: anthropic_key" in ok("remember", "--fact", "key for " + TEXT, "rotated")
    ok("remember", "--fact", "escapes", ESCAPES)
    ok("flows", "add", "rotate-keys", "--step", TEXT, "--trigger", "rotate " + ANTHROPIC)
    ok("flows", "record", "rotate-keys", "pass", "--note", TEXT)
    ok("gate", "pre", "--agent", "ops", "deploy with " + TEXT)
    ok("gate", "post", "ops", "pass", "deployed " + TEXT, "--lesson", "keep " + TEXT)
    ok("state", "add", "task", ESCAPES)
    ok("remember", ESCAPES)
    ok("remember", "-", stdin=NUL)
    listed = json.loads(ok("state", "list", "--status", "any", "--json"))
    assert any("[REDACTED:anthropic_key]" in e["summary"] for e in listed)
    assert any("Postgres 16 for billing" in " ".join(e["summary"].split()) for e in listed)
    assert _leaks(home.root) == {}


def test_the_stores_scrub_for_every_caller(home: Home) -> None:
    """The console and the MCP server call the stores, not the CLI: the stores scrub."""
    from memtui.stores import audit, rules, state

    db = home.open_db()
    try:
        added = state.add(db, state.NewState("main", "decision", TEXT, detail=ESCAPES + NUL),
                          actor="tui")
        assert ANTHROPIC not in added.summary and "\x1b" not in added.detail
        assert "\x00" not in added.detail
        rule = rules.add(db, ESCAPES + " " + DISCORD, actor="mcp")
        assert " ".join(rule.rule.split()) == "Postgres 16 for billing [REDACTED:discord_token]"
        audit.record(db, "mcp", "test.raw", "x", {"said": TEXT}, [ESCAPES])
        row = db.one("SELECT before, after FROM audit WHERE action = 'test.raw'")
        assert row is not None
        assert ANTHROPIC not in row["before"] and "\\u001b" not in row["after"]
    finally:
        db.close()
    assert _leaks(home.root) == {}


def test_remember_dash_reads_stdin(home: Home) -> None:
    done = run_cli("remember", "-", "--json", home=home, input="From a pipe\n")
    where = json.loads(done.stdout)
    text = Path(where["absolute"]).read_text()
    assert "From a pipe" in text and "- -\n" not in text


def test_extraction_stores_no_control_characters(home: Home, tmp_path: Path) -> None:
    said = ("We decided to keep Postgres 16 \x1b]0;pwned\x07\x1b[2J for the api database "
            "because of the\x00 extensions.")
    transcript = tmp_path / "chat.jsonl"
    transcript.write_text(json.dumps({"type": "message", "id": "m1", "role": "user",
                                      "ts": "2026-11-20T10:00:00+00:00",
                                      "content": said}) + "\n")
    assert run_cli("sources", "add", str(transcript), "--format", "generic",
                   home=home).returncode == 0
    done = run_cli("extract", "--json", home=home)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["turns_extracted"] == 1
    listed = json.loads(run_cli("state", "list", "--json", home=home).stdout)
    assert any("Postgres 16" in e["summary"] for e in listed), listed
    for path in [p for p in home.root.rglob("*") if p.is_file()]:
        data = path.read_bytes()
        assert b"pwned\x07" not in data and b"\x1b[2J" not in data, path
        if path.suffix == ".md":
            assert b"\x1b" not in data and b"\x00" not in data, path
    db = home.open_db()
    try:  # every text value of every table (a database file holds 0x1b in its own bytes)
        for (table,) in db.rows("SELECT name FROM sqlite_schema WHERE type = 'table' "
                                "AND name NOT LIKE 'sqlite%' AND sql NOT LIKE '%VIRTUAL%'"):
            for row in db.rows(f"SELECT * FROM \"{table}\""):
                for value in row:
                    assert not (isinstance(value, str) and ("\x1b" in value
                                                           or "\x00" in value)), table
    finally:
        db.close()

"""`get` reads only memory files inside the workspace; `remember` appends atomically."""

from __future__ import annotations

import os
import threading
from datetime import datetime
from pathlib import Path

import pytest

from memtui.config import load_settings, render_settings
from memtui.errors import MemtuiError, NotFound
from memtui.home import Home
from memtui.workspace.memoryfiles import get, remember

TRAVERSAL = ["../MEMORY.md", "memory/../../etc/passwd.md", "memory/../MEMORY.md",
             "/etc/passwd", "/tmp/x.md", "memory/..\\..\\x.md", "..", "memory/..",
             "C:\\x.md", "memory/./../../x.md", "./../MEMORY.md"]
NOT_MEMORY = ["SESSION-STATE.md", "HEARTBEAT.md", "memory/notes.txt", "memory",
              "memory/x.md.bak", "MEMORY.md.swp", "other/x.md", "memory.md", ""]


@pytest.fixture
def ws(home: Home) -> Path:
    root = home.workspace("main")
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / "MEMORY.md").write_text("one\ntwo\nthree\nfour\n", encoding="utf-8")
    (root / "memory" / "2024-05-01.md").write_text("# day\n- a\n", encoding="utf-8")
    return root


@pytest.mark.parametrize("path", TRAVERSAL)
def test_traversal_is_refused(ws: Path, home: Home, path: str) -> None:
    with pytest.raises(MemtuiError) as err:
        get(home, "main", path)
    assert not isinstance(err.value, NotFound)


@pytest.mark.parametrize("path", NOT_MEMORY)
def test_only_memory_markdown_is_readable(ws: Path, home: Home, path: str) -> None:
    (ws / "memory" / "notes.txt").write_text("secret")
    with pytest.raises(MemtuiError, match="memory|path"):
        get(home, "main", path)


def test_nul_byte_is_refused(ws: Path, home: Home) -> None:
    with pytest.raises(MemtuiError, match="NUL"):
        get(home, "main", "MEMORY.md\x00.txt")


def test_reads_lines(ws: Path, home: Home) -> None:
    assert get(home, "main", "MEMORY.md").text == "one\ntwo\nthree\nfour"
    part = get(home, "main", "./MEMORY.md", start=2, lines=2)
    assert (part.text, part.start_line, part.end_line, part.total_lines) == ("two\nthree", 2, 3, 4)
    assert get(home, "main", "MEMORY.md", start=9).text == ""
    assert get(home, "main", "memory/2024-05-01.md").text == "# day\n- a"
    with pytest.raises(NotFound):
        get(home, "main", "memory/2099-01-01.md")
    with pytest.raises(MemtuiError):
        get(home, "main", "MEMORY.md", start=0)


def test_symlinked_file_is_refused_even_to_an_inside_target(ws: Path, home: Home,
                                                            tmp_path: Path) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("secret")
    (ws / "memory" / "evil.md").symlink_to(outside)
    (ws / "memory" / "alias.md").symlink_to(ws / "MEMORY.md")
    for name in ("memory/evil.md", "memory/alias.md"):
        with pytest.raises(MemtuiError, match="symbolic link|outside"):
            get(home, "main", name)


def test_symlinked_folder_is_refused(ws: Path, home: Home, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "x.md").write_text("secret")
    (ws / "memory" / "sub").symlink_to(outside, target_is_directory=True)
    with pytest.raises(MemtuiError, match="symbolic link|outside"):
        get(home, "main", "memory/sub/x.md")


def test_symlink_swapped_in_after_the_path_check(ws: Path, home: Home, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The open itself refuses a link (O_NOFOLLOW), whatever a check saw before it."""
    import memtui.workspace.memoryfiles as mf

    outside = tmp_path / "secret.md"
    outside.write_text("secret")
    target = ws / "memory" / "2024-05-01.md"
    real_stat = os.stat

    def swap_then_stat(name: object, *args: object, **kw: object) -> os.stat_result:
        result = real_stat(name, *args, **kw)  # type: ignore[arg-type]
        if name == "2024-05-01.md" and not target.is_symlink():
            target.unlink()
            target.symlink_to(outside)
        return result

    monkeypatch.setattr(mf.os, "stat", swap_then_stat)
    with pytest.raises(MemtuiError, match="symbolic link|regular"):
        get(home, "main", "memory/2024-05-01.md")


def test_sibling_folder_sharing_the_prefix_is_outside(tmp_path: Path) -> None:
    h = Home(tmp_path / "h")
    h.init(["main"])
    ws = tmp_path / "ws"
    evil = tmp_path / "ws-evil"
    (ws / "memory").mkdir(parents=True)
    (evil / "memory").mkdir(parents=True)
    (evil / "MEMORY.md").write_text("secret")
    (evil / "memory" / "x.md").write_text("secret")
    settings = load_settings(h.config_path)
    settings.agents.workspaces = {"main": str(ws)}
    h.config_path.write_text(render_settings(settings))
    h = Home(h.root)
    assert h.workspace("main") == ws
    for path in ("../ws-evil/MEMORY.md", "memory/../../ws-evil/memory/x.md"):
        with pytest.raises(MemtuiError):
            get(h, "main", path)
    (ws / "memory" / "link.md").symlink_to(evil / "memory" / "x.md")
    with pytest.raises(MemtuiError, match="symbolic link|outside"):
        get(h, "main", "memory/link.md")


def test_fifo_is_not_a_regular_file(ws: Path, home: Home) -> None:
    os.mkfifo(ws / "memory" / "pipe.md")
    with pytest.raises(MemtuiError, match="regular"):
        get(home, "main", "memory/pipe.md")


def test_remember_daily_and_long_term(home: Home) -> None:
    when = datetime(2024, 5, 1, 9, 30).astimezone()
    day = remember(home, "main", "deploys need a canary", now=when)
    assert day.path == "memory/2024-05-01.md" and day.line == 3
    again = remember(home, "main", "first line\nsecond line", now=when)
    text = (home.workspace("main") / day.path).read_text()
    assert text == ("# 2024-05-01\n\n- 09:30 deploys need a canary\n"
                    "- 09:30 first line\n  second line\n")
    assert again.line == 4
    long = remember(home, "main", "Prefers rsync", long_term=True)
    assert long.path == "MEMORY.md"
    assert (home.workspace("main") / "MEMORY.md").read_text().endswith("- Prefers rsync\n")
    assert get(home, "main", "MEMORY.md", start=long.line, lines=1).text == "- Prefers rsync"


@pytest.mark.parametrize("text", ["", "   \n ", "\x00\x1b[2J\x07"])
def test_remember_refuses_empty_or_nul(home: Home, text: str) -> None:
    """Nothing left once control characters are stripped (issue 9: a NUL inside text is
    stripped at the way in, as in every store; tests/cli/test_ways_in.py)."""
    with pytest.raises(MemtuiError):
        remember(home, "main", text)


def test_remember_refuses_a_symlinked_log(home: Home, tmp_path: Path) -> None:
    outside = tmp_path / "out.md"
    outside.write_text("x\n")
    when = datetime(2024, 5, 1, 9, 30).astimezone()
    (home.workspace("main") / "memory" / "2024-05-01.md").symlink_to(outside)
    with pytest.raises(MemtuiError, match="symbolic link"):
        remember(home, "main", "note", now=when)
    assert outside.read_text() == "x\n"


def test_concurrent_remembers_lose_nothing(home: Home) -> None:
    when = datetime(2024, 5, 1, 9, 30).astimezone()
    threads = [threading.Thread(target=remember, args=(home, "main", f"note {i}"),
                                kwargs={"now": when}) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    text = (home.workspace("main") / "memory" / "2024-05-01.md").read_text()
    assert sorted(int(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                  if "note" in line) == list(range(16))

"""The day rule: `remember` and the stenographer name a daily log after the local day.

Near midnight, in a time zone far from UTC, the UTC date and the local date differ; one
local day's memory must land in one file, whoever writes it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from memtui.db import Database
from memtui.extract import stenographer as steno
from memtui.home import Home
from memtui.stores import sources
from memtui.workspace.layout import local_day
from memtui.workspace.memoryfiles import remember

# (zone, local wall time, the local day, the UTC day): late evening and just after midnight.
CASES = [
    ("Pacific/Auckland", "2026-03-01 23:30", "2026-03-01", "2026-03-01"),
    ("Pacific/Auckland", "2026-03-02 00:30", "2026-03-02", "2026-03-01"),
    ("America/Los_Angeles", "2026-03-01 23:30", "2026-03-01", "2026-03-02"),
    ("America/Los_Angeles", "2026-03-02 00:30", "2026-03-02", "2026-03-02"),
]


@pytest.fixture
def box_zone() -> Iterator[None]:
    """Lets a test set the box's time zone (TZ) and puts the old one back."""
    old = os.environ.get("TZ")
    yield
    if old is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = old
    time.tzset()


def in_zone(zone: str, wall: str) -> datetime:
    """Make ``zone`` the box's time zone; the UTC instant of ``wall`` there."""
    os.environ["TZ"] = zone
    time.tzset()
    local = datetime.fromisoformat(wall).replace(tzinfo=ZoneInfo(zone))
    return local.astimezone(UTC)


@pytest.mark.parametrize(("zone", "wall", "day", "utc_day"), CASES)
def test_local_day_is_the_date_on_the_boxs_clock(box_zone: None, zone: str, wall: str,
                                                 day: str, utc_day: str) -> None:
    instant = in_zone(zone, wall)
    assert instant.date().isoformat() == utc_day
    assert local_day(instant) == day


@pytest.mark.parametrize(("zone", "wall", "day", "utc_day"), CASES)
def test_remember_writes_the_local_days_log(box_zone: None, home: Home, zone: str, wall: str,
                                            day: str, utc_day: str) -> None:
    instant = in_zone(zone, wall)
    done = remember(home, "main", "the backup window moved", now=instant)
    assert done.path == f"memory/{day}.md"
    text = Path(done.absolute).read_text()
    assert text.startswith(f"# {day}\n") and f"- {wall[-5:]} the backup window moved" in text


def _turn(n: int, at: datetime, content: str) -> str:
    return json.dumps({"type": "message", "id": f"m{n}", "session": "s1", "role": "user",
                       "ts": at.strftime("%Y-%m-%dT%H:%M:%SZ"), "content": content}) + "\n"


@pytest.mark.parametrize("zone", ["Pacific/Auckland", "America/Los_Angeles"])
def test_the_stenographer_and_remember_share_the_local_days_log(
        box_zone: None, home: Home, db: Database, tmp_path: Path, zone: str) -> None:
    late = in_zone(zone, "2026-03-01 23:30")
    early = in_zone(zone, "2026-03-02 00:30")
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(
        _turn(1, late, "Don't use requests in the service, we use httpx for HTTP clients.")
        + _turn(2, early, "My timezone is Europe/Berlin."))
    os.utime(transcript, (1_700_000_000, 1_700_000_000))  # idle: read to the end
    sources.add(db, str(transcript), agent="main", fmt="generic", actor="test")
    remember(home, "main", "said good night", now=late)
    report = steno.run(home, db, steno.Options())
    assert not report.failed
    memory = home.workspace("main") / "memory"
    assert sorted(p.name for p in memory.glob("*.md")) == ["2026-03-01.md", "2026-03-02.md"]
    evening = (memory / "2026-03-01.md").read_text()
    morning = (memory / "2026-03-02.md").read_text()
    assert "said good night" in evening and "requests" in evening
    assert "Europe/Berlin" in morning and "requests" not in morning
    assert evening.startswith("# 2026-03-01\n\n") and evening.count("# 2026-03-01") == 1

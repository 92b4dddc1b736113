"""Time in memtui: aware UTC datetimes, stored as ISO 8601 text with a Z, to the second."""

from __future__ import annotations

from datetime import UTC, date, datetime

from memtui.errors import MemtuiError

FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def iso(moment: datetime) -> str:
    """The stored form: sorts the same as time does."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime(FORMAT)


def parse(text: str) -> datetime:
    """Read an ISO 8601 timestamp or date; naive values are taken as UTC."""
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise MemtuiError(
            f"{text!r} is not an ISO date or time (e.g. 2026-11-24 or 2026-11-24T18:30:00Z)"
        ) from None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def parse_date(text: str) -> date:
    try:
        return date.fromisoformat(text.strip()[:10])
    except ValueError:
        raise MemtuiError(f"{text!r} is not an ISO date (e.g. 2026-11-24)") from None

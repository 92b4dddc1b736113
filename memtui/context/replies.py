"""What to do with an agent's reply to a prompt memtui sent: NO_REPLY and HEARTBEAT_OK."""

from __future__ import annotations

import hashlib
import re

NO_REPLY = "NO_REPLY"
HEARTBEAT_OK = "HEARTBEAT_OK"
# Markdown an agent may wrap a bare token in: **HEARTBEAT_OK**, `NO_REPLY`, <b>…</b>.
_WRAP = "*_`~ \t\r\n"
_TAGS = re.compile(r"</?[a-z]+>", re.I)


def _unwrap(text: str) -> str:
    return _TAGS.sub("", text).strip(_WRAP)


def is_no_reply(reply: str) -> bool:
    """A reply that starts with NO_REPLY is suppressed; NO_REPLY later in it is not special."""
    return _unwrap(reply).startswith(NO_REPLY)


def strip_ok(reply: str, ack_max_chars: int) -> tuple[bool, str]:
    """(is an OK acknowledgement, the rest of the reply).

    OK: HEARTBEAT_OK at the start or the end, and at most ``ack_max_chars`` of anything
    else. A token in the middle, or a long report around it, is an alert.
    """
    text = _unwrap(reply)
    rest = None
    if text.startswith(HEARTBEAT_OK):
        rest = text[len(HEARTBEAT_OK):]
    elif text.endswith(HEARTBEAT_OK):
        rest = text[: -len(HEARTBEAT_OK)]
    if rest is None:
        return False, text
    rest = _unwrap(rest.strip(" .!:-—\t\r\n"))
    return len(rest) <= ack_max_chars, rest


def alert_key(text: str) -> str:
    """Identity of an alert for de-duplication: case, spacing and digits of times ignored."""
    norm = " ".join(re.sub(r"\d{1,2}:\d{2}(:\d{2})?", "<time>", text.lower()).split())
    return hashlib.sha1(norm.encode("utf-8")).hexdigest()[:16]

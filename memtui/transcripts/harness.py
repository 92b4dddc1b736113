"""What an agent harness writes into a user message: channel wrappers, system lines, heartbeats.

OpenClaw sends everything to the model as a user message, so a transcript's "user"
lines mix the person's words with text the machine wrote (checked against OpenClaw's
``auto-reply/envelope.ts``, ``reply/inbound-meta.ts``, ``reply/strip-inbound-meta.ts``
and its heartbeat docs):

- a channel **envelope** before the body: ``[Telegram Ana id:42 +5m 2026-04-12 10:51
  GMT+3] text`` (channel, sender, elapsed time, host, timestamp; any part may be
  missing, and a web chat may have only ``[Sun 2026-03-15 14:27 GMT+8]``);
- **inbound metadata blocks**: a line ``Sender (untrusted metadata):`` (or
  ``Conversation info``, ``Replied message (untrusted, for context):`` ...) followed
  by a fenced JSON object, and a trailing ``Untrusted context (metadata, ...):`` part;
- **system event lines** drained into the next prompt: ``System: [timestamp] Exec
  finished ...``, and ``[message_id: ...]`` hints;
- **heartbeat prompts**: the configured prompt (by default "Read HEARTBEAT.md if it
  exists ... reply HEARTBEAT_OK."), or the marker ``[OpenClaw heartbeat poll]`` that
  stands for it in newer transcripts, or a periodic-task list;
- **scheduled and delegated prompts**: a cron job's stored prompt (``[cron:<id> <name>]
  ...``), a sub-agent's task written by its parent (``[Subagent Context] ...
  [Subagent Task]: ...``) and a sub-agent's result handed back (``[System Message]
  ...``).

``unwrap`` takes the wrappers off and says who is left speaking. The recognisers follow
the formats' structure (a bracketed header holding a date or a channel name, a
sentinel line ending in ``(untrusted ...):`` over a JSON fence, the HEARTBEAT_OK reply
contract every heartbeat prompt states), not particular strings.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

# Chat channels OpenClaw names in envelopes (a header holding a date needs none).
CHANNELS = (
    "WebChat", "WhatsApp", "Telegram", "Signal", "Slack", "Discord", "Google Chat",
    "iMessage", "Teams", "Matrix", "Zalo", "Zalo Personal", "BlueBubbles", "Feishu", "Lark",
    "LINE", "Mattermost", "Nextcloud Talk", "IRC", "Twitch", "Nostr", "WeChat", "WeCom", "QQ",
)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?Z?| \d{2}:\d{2})")
_ENVELOPE = re.compile(r"\A\[([^\]\n]{1,300})\][ \t]*")
# The timestamp part of a header, from an optional weekday to the end (zone included).
_STAMP = re.compile(r"(?:\b[A-Z][a-z]{2} )?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}.*$")
_ELAPSED = re.compile(r"\s\+\d+[smhd]\b")
_SENTINEL = re.compile(
    r"^([A-Z][A-Za-z ]{1,60}) \(untrusted(?: metadata|, for context)\):[ \t]*(.*)$")
_TRAILING_CONTEXT = re.compile(
    r"^Untrusted context \(metadata, do not treat as instructions or commands\):\s*$")
_SYSTEM_LINE = re.compile(
    r"^\s*(?:System(?: \(untrusted\))?: ?\[[^\]\n]*\d{2}:\d{2}[^\]\n]*\]|\[System:\s)")
# OpenClaw's sub-agent task, its delivery of a sub-agent's result to the parent, and the
# header of a cron job's prompt ("[cron:<job id> <name>] ...").
_SUBAGENT_CONTEXT = "[Subagent Context]"
_SUBAGENT_TASK = "[Subagent Task]"
_DELIVERY = "[System Message]"
_CRON = re.compile(r"\A\[cron:[^\]\n]+\][ \t]*")
_MESSAGE_ID = re.compile(r"^\s*\[message_id:\s*[^\]]+\]\s*$", re.IGNORECASE)
_INTERNAL = re.compile(r"<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>.*?<<<END_OPENCLAW_INTERNAL_"
                       r"CONTEXT>>>", re.DOTALL)
_HEARTBEAT_MARK = re.compile(r"^\[[^\]\n]*\bheartbeat\b[^\]\n]*\]$", re.IGNORECASE)
# Every heartbeat prompt states the reply that means "nothing to do" (HEARTBEAT_OK), or
# points at the checklist it runs; a periodic-task list is the heartbeat's other form.
_HEARTBEAT = re.compile(
    r"\b(?:reply|respond|answer)(?: with)?:? [^\n.]{0,20}\bHEARTBEAT_OK\b"
    r"|\A(?:Read|Check|Follow) [^\n]{0,40}\bHEARTBEAT\.md\b"
    r"|\ARun the following periodic tasks\b")


@dataclass(frozen=True)
class Unwrapped:
    """A user message with the harness's wrappers taken off."""

    text: str
    """What the person wrote (empty when nothing of theirs is left)."""
    sender: str | None = None
    """Who sent it through a chat channel, from the wrapper."""
    machine: str | None = None
    """Why the message is the machine's and not the person's: "heartbeat" and "system"
    (nothing of anyone's words left), "cron" (a scheduled job's stored prompt) or
    "delivery" (a sub-agent's result handed to its parent)."""
    by_agent: bool = False
    """The orchestrating agent wrote it: the task of a sub-agent's session."""


def unwrap(text: str) -> Unwrapped:
    """Take channel wrappers, metadata blocks and system lines off a user message.

    A message left empty, or left holding only a heartbeat prompt, is the machine's.
    Text without any wrapper comes back unchanged.
    """
    if not text:
        return Unwrapped(text)
    body = _INTERNAL.sub("", text) if "<<<BEGIN_OPENCLAW" in text else text
    lines = body.split("\n")
    kept = _without_system_lines(lines)
    had_system = len(kept) != len(lines)
    body = "\n".join(kept).strip() if had_system else body
    body, meta_sender, had_meta = _strip_metadata(body)
    # OpenClaw puts the envelope (or a bare timestamp) after any metadata blocks.
    body, header = _strip_envelope(body)
    sender = meta_sender or (_envelope_sender(header) if header is not None else None)
    body = body.strip()
    if not body:
        return Unwrapped("", sender, "system" if had_system or had_meta else None)
    if is_heartbeat(body):
        return Unwrapped("", sender, "heartbeat")
    if body.startswith(_SUBAGENT_CONTEXT):
        if _SUBAGENT_TASK in body:
            # The orchestrating agent's task for the sub-agent this session belongs to.
            return Unwrapped(body, sender, by_agent=True)
        # A parent woken when its sub-agents settled.
        return Unwrapped(body, sender, "delivery")
    cron = _CRON.match(body)
    if cron is not None:
        # A scheduled job's stored prompt, re-sent on every run: not said anew.
        return Unwrapped(body[cron.end():].strip(), sender, "cron")
    if body.startswith(_DELIVERY):
        return Unwrapped(body, sender, "delivery")
    return Unwrapped(body, sender)


# What an agent answers a heartbeat or a message it chose to leave unanswered; OpenClaw
# drops these tokens from what it delivers, so they are protocol, not words.
ACK_TOKENS = frozenset({"HEARTBEAT_OK", "NO_REPLY"})


def is_ack(text: str) -> bool:
    """An agent reply that is only a protocol token (``HEARTBEAT_OK``, ``NO_REPLY``)."""
    return text.strip().strip("*`").strip() in ACK_TOKENS


def _without_system_lines(lines: list[str]) -> list[str]:
    """Drop system event lines (with their indented or ``System:`` continuation lines, up to
    a blank line) and ``[message_id: ...]`` hints."""
    kept: list[str] = []
    in_event = False
    for line in lines:
        if _SYSTEM_LINE.match(line):
            in_event = True
        elif in_event and line.strip() and (line[:1].isspace() or line.startswith("System:")):
            pass
        elif _MESSAGE_ID.match(line):
            in_event = False
        else:
            in_event = False
            kept.append(line)
    return kept


def is_heartbeat(text: str) -> bool:
    """A heartbeat poll: the marker line, or a prompt stating the HEARTBEAT_OK contract."""
    first = text.lstrip().split("\n", 1)[0].strip()
    if _HEARTBEAT_MARK.match(first):
        return True
    head = text[:2000]
    # Whatever its language, a prompt naming both the checklist and the reply token is one;
    # a person asking about heartbeats ("why do you reply HEARTBEAT_OK?") is not.
    both = "HEARTBEAT.md" in head and "HEARTBEAT_OK" in head
    return bool(both or _HEARTBEAT.search(head)) and not text.rstrip().endswith("?")


def _strip_envelope(text: str) -> tuple[str, str | None]:
    match = _ENVELOPE.match(text.lstrip())
    if match is None:
        return text, None
    header = match.group(1).strip()
    if not (_DATE.search(header) or any(header == c or header.startswith(c + " ")
                                        for c in CHANNELS)):
        # "[draft] fix the tests" is the person's own bracket, not an envelope.
        return text, None
    return text.lstrip()[match.end():], header


def _envelope_sender(header: str) -> str | None:
    """The sender part of ``Channel From +elapsed host stamp`` (None when there is none)."""
    rest = _STAMP.sub("", header)
    rest = _ELAPSED.sub("", " " + rest).strip()
    for channel in sorted(CHANNELS, key=len, reverse=True):
        if rest == channel or rest.startswith(channel + " "):
            rest = rest[len(channel):].strip()
            break
    return rest or None


def _strip_metadata(text: str) -> tuple[str, str | None, bool]:
    """Drop ``X (untrusted ...):`` blocks and their JSON fences; return the sender found."""
    if "(untrusted" not in text and "Untrusted context" not in text:
        return text, None, False
    lines = text.split("\n")
    out: list[str] = []
    senders: dict[str, str | None] = {}
    found = False
    i = 0
    while i < len(lines):
        match = _SENTINEL.match(lines[i])
        if _TRAILING_CONTEXT.match(lines[i]):
            found = True
            break
        if match is None:
            out.append(lines[i])
            i += 1
            continue
        found = True
        label, inline = match.group(1), match.group(2).strip()
        i += 1
        if inline:
            block = inline
        elif i < len(lines) and lines[i].strip().startswith("```"):
            end = i + 1
            while end < len(lines) and lines[end].strip() != "```":
                end += 1
            block = "\n".join(lines[i + 1:end])
            i = end + 1
        else:
            block = lines[i] if i < len(lines) else ""
            i += 1
        senders[label] = _sender_of(block)
    # The sender block names the person best ("Ana (42)"); the conversation block also may.
    sender = senders.get("Sender") or senders.get("Conversation info")
    return "\n".join(out).strip(), sender, found


def _sender_of(block: str) -> str | None:
    try:
        data = json.loads(block)
    except ValueError:
        return block.strip()[:120] or None
    if not isinstance(data, dict):
        return None
    for key in ("label", "sender", "name", "username", "id", "sender_id"):
        found = data.get(key)
        if isinstance(found, str | int) and not isinstance(found, bool) and str(found).strip():
            return str(found).strip()[:120]
    return None

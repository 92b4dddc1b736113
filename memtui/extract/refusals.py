"""A tool use the person refused: how a harness words it, and the person's own reason.

Claude Code answers a refused tool call with a fixed text ("The user doesn't want to
proceed with this tool use ..."), sometimes followed by what the person typed; other
harnesses say "denied by the user". Preparation marks such a result refused
(``REFUSED``); the local extractor files it as a rejection with the person's words.
"""

from __future__ import annotations

import re

from memtui.text import shorten

REASON_CHARS = 1000
"""The most of a person's reason kept (the rejection's detail)."""

REFUSED = re.compile(
    r"doesn't want to proceed with this tool use|tool use was rejected|"
    r"user (?:rejected|denied|declined|refused)|(?:rejected|denied|declined) by the user|"
    r"permission denied by (?:the )?user", re.I
)

REFUSAL_CHARS = 120
"""A refused tool use's summary: "Refused tool use: <tool>: <its gist>", cut to this."""
_HARNESS_REFUSAL = re.compile(
    r"the user doesn't want to (?:proceed with|take) this (?:tool use|action)[^.]*\.?"
    r"|the tool use was rejected(?: \([^)]*\))?\.?"
    r"|stop what you are doing and wait for the user to tell you how to proceed\.?"
    r"|\[request interrupted by user[^\]]*\]"
    r"|(?:permission|tool use) (?:was )?denied by (?:the )?user\.?", re.I
)
_USER_SAID = re.compile(r"the user said:\s*", re.I)


def refusal_reason(content: str) -> str:
    """The human's own words in a refusal, without the harness's boilerplate ("" if none).

    Claude Code appends what the user typed after "To tell you how to proceed, the user
    said:"; everything else in the result is the same fixed text every time.
    """
    said = _USER_SAID.search(content)
    if said is not None:
        return shorten(content[said.end():].strip(), REASON_CHARS)
    rest = _HARNESS_REFUSAL.sub(" ", content)
    rest = re.sub(r"\s+", " ", rest).strip(" .")
    return shorten(rest, REASON_CHARS) if len(rest.split()) >= 2 else ""

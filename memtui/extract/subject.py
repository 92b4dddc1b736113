"""Whether two similar entries are one: the same words for one thing, or one thing changed.

Two similar decisions with other numbers or names are either the same decision changed
("pin the events database to Postgres 15" -> "... Postgres 16") or two decisions about
different things ("keep Postgres 15 for the api database" / "... Postgres 16 for the
billing database", "item 3 uses port 8003" / "item 4 uses port 8004"). The subject is
what stays when the value changes, so :func:`same_subject` lines the two texts up word by
word and looks at where their content differs (words that only phrase the decision --
"we decided to", "let's use", "we'll keep" -- do not count):

- in one place: that place is the value, the rest is the shared subject -> the same
  subject, if the texts share at least one content word at all;
- in two or more places: at least one of them names another thing -> another subject;
- a number that follows a word introducing an identifier ("item 3", "ticket 12",
  "#40") names a thing, never a value: changing it is another subject.

A restatement (:func:`restates`) says the same in other words: words are added, dropped
or inflected, but no content word is replaced by another ("use pnpm for the frontend" is
not "use npm for the frontend", "... for the api database" is not "... for the billing
database").

The rules err on the side of keeping both: a decision wrongly marked superseded vanishes
from boot context and gates, while two active decisions about one thing only cost a line.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from functools import lru_cache

from memtui.text import STOPWORDS, stem

_TOKEN = re.compile(r"#?[0-9A-Za-z][\w.:/@+#'-]*")

# Words that phrase a decision, a preference or a plan rather than say what it is about.
_WORDING = frozenset(stem(w) for w in """
    decide decided decides decision decisions let lets let's we'll we're we've i'll i'd
    i'm ll re ve d shall going go goes went gone use uses used using keep keeps kept stick
    sticks stay stays stayed switch switched switching move moved moving migrate migrated
    pick picked choose chose chosen opt opted settle settled agree agreed adopt adopted
    prefer prefers preferred preference instead rather now still also just really please
    ok okay yes well then again finally actually""".split())

NAMING = frozenset("""
    item items ticket tickets issue issues task tasks bug bugs pr prs pull step steps phase
    phases case cases story stories epic job jobs no number id ref entry row""".split())
"""Words after which a number names a thing ("item 3", "ticket 12") rather than a value."""


@lru_cache(maxsize=16384)
def tokens(summary: str) -> tuple[str, ...]:
    """The words of a summary in order, lowercased, with tokens such as ``10:00``,
    ``phx.server`` and ``#12`` kept whole."""
    out = []
    for m in _TOKEN.finditer(summary):
        token = m.group(0).rstrip(".:/@+-'").lower()
        if token:
            out.append(token)
    return tuple(out)


_LINKING = frozenset("during within through throughout via per across inside onto upon".split())
"""Prepositions that rewordings swap freely ("during" / "in business hours")."""


def _content(token: str) -> bool:
    return token not in STOPWORDS and token not in _LINKING and stem(token) not in _WORDING


def _stems(words: tuple[str, ...]) -> set[str]:
    return {stem(t) for t in words if _content(t)}


def _names_a_thing(words: tuple[str, ...], start: int, end: int) -> bool:
    """A changed number in words[start:end] that is an identifier ("item 3", "#12")."""
    for k in range(start, end):
        token = words[k]
        if token.startswith("#") or (k > 0 and words[k - 1] in NAMING
                                     and any(ch.isdigit() for ch in token)):
            return True
    return False


def same_subject(a: str, b: str) -> bool:
    """Whether two similar summaries are about the same thing (see the module docstring)."""
    ta, tb = tokens(a), tokens(b)
    shared = False
    changes = 0
    for op, i1, i2, j1, j2 in SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes():
        if op == "equal":
            shared = shared or any(_content(t) for t in ta[i1:i2])
            continue
        if not any(_content(t) for t in ta[i1:i2] + tb[j1:j2]):
            continue  # only the phrasing differs here
        if _names_a_thing(ta, i1, i2) or _names_a_thing(tb, j1, j2):
            return False
        changes += 1
        if changes > 1:
            return False
    return shared


def restates(a: str, b: str) -> bool:
    """Whether ``b`` says what ``a`` says in other words: no content word of one text is
    replaced by another content word (additions, omissions and inflections are fine)."""
    ta, tb = tokens(a), tokens(b)
    for op, i1, i2, j1, j2 in SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes():
        if op == "replace":
            old, new = _stems(ta[i1:i2]), _stems(tb[j1:j2])
            if old and new and old != new:
                return False
    return True

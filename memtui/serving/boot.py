"""Boot: the one loader every agent uses at start: rules, capabilities, lessons, flows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memtui import text
from memtui.db import Database
from memtui.home import Home
from memtui.stores import flows as flow_store
from memtui.stores import rules as rule_store
from memtui.stores import state as state_store


@dataclass
class BootSection:
    name: str
    title: str
    lines: list[str] = field(default_factory=list)
    refs: list[str] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        return text.estimate_tokens("\n".join([self.title, *self.lines]))


@dataclass
class Boot:
    agent: str
    sections: list[BootSection]

    @property
    def tokens(self) -> int:
        return sum(s.tokens for s in self.sections)

    def as_dict(self) -> dict[str, Any]:
        return {"agent": self.agent, "tokens": self.tokens,
                "sections": [{"name": s.name, "title": s.title, "tokens": s.tokens,
                              "lines": s.lines, "refs": s.refs} for s in self.sections]}

    def as_markdown(self) -> str:
        """The boot context as an agent receives it."""
        out = [f"# memtui boot context for {self.agent} (~{self.tokens} tokens)"]
        for s in self.sections:
            out.append(f"\n## {s.title} (~{s.tokens} tokens)")
            out.extend(s.lines or ["(none)"])
        return "\n".join(out) + "\n"


def build_boot(home: Home, db: Database, agent: str) -> Boot:
    """Assemble the boot context for one agent from memory.db and the settings."""
    cfg = home.settings.boot
    with db.read():
        rules = rule_store.boot_rules(db, agent, cfg.max_rules)
        lessons = state_store.recent(db, category="learning", agent=agent,
                                     limit=cfg.recent_lessons)
        flows = flow_store.list_flows(db, agent=agent)
        rejections = state_store.recent(db, category="rejected", agent=agent,
                                        statuses=state_store.REJECTION_STATUSES,
                                        limit=cfg.rejections)
    rule_section = BootSection("rules", f"Rules (top {cfg.max_rules} by score)")
    for r in rules:
        mark = "CRITICAL " if r.status == "critical" else ""
        rule_section.lines.append(f"- {mark}[{r.score:.1f}] {r.rule}")
        rule_section.refs.append(f"rule:{r.id}")
    capabilities = BootSection("capabilities", "Capabilities",
                               [f"- {c}" for c in home.settings.gates.capabilities])
    lesson_section = BootSection("lessons", "Recent lessons")
    for entry in lessons:
        lesson_section.lines.append(f"- {entry.created_at[:10]}: {entry.summary}")
        lesson_section.refs.append(f"state:{entry.id}")
    flow_section = BootSection("flows", "Flows (run `memtui gate pre` before acting)")
    for f in flows:
        triggers = "; ".join(f.trigger_phrases[:3])
        eff = f"{round(f.effectiveness * 100)}%" if f.effectiveness is not None else "new"
        flow_section.lines.append(f"- {f.name} ({eff}): {triggers}")
        flow_section.refs.append(f"flow:{f.name}")
    rejection_section = BootSection("rejections", "Rejected: do NOT re-suggest")
    for entry in rejections:
        rejection_section.lines.append(f"- {entry.summary}")
        rejection_section.refs.append(f"state:{entry.id}")
    return Boot(agent, [rule_section, capabilities, lesson_section, flow_section,
                        rejection_section])

"""Changes a person makes from the console: each one store function, audited as "tui".

``CHANGES`` maps a binding id to the engine call it makes. ``ChangesMixin`` (for the App)
asks first where a change needs it (a critical rule, new text, a merge target), then runs
the call in a worker with its own write connection and says how it went.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from textual import work

from memtui.db import Database
from memtui.errors import MemtuiError
from memtui.home import Home
from memtui.stores import audit, flows, review, rules, state
from memtui.tui.messages import Act, ChangeDone
from memtui.tui.render import clean

ACTOR = "tui"


@dataclass(frozen=True)
class Change:
    """What a change acts on: the target id, text typed for it, and whether a human confirmed
    touching a critical rule."""

    home: Home
    target: str
    text: str = ""
    human: bool = False


def _promote_rejection(db: Database, c: Change) -> str:
    entry = state.get(db, int(c.target))
    body = entry.summary.split(":", 1)[1].strip() if entry.summary.lower().startswith(
        "rejected:") else entry.summary.strip()
    text = f"{body.rstrip('.')} (rejected by a human: do not re-suggest)"
    existing = rules.find_by_key(db, text, entry.agent)
    if existing is not None:
        rule = rules.make_critical(db, existing.id, actor=ACTOR)
        return f"rule {rule.id} exists already; it is critical now"
    rule = rules.add(db, text, actor=ACTOR, score=max(9.0, c.home.settings.maintenance
                                                      .rejection_rule_score),
                     domain=entry.domain, agent=entry.agent, source="rejection",
                     provenance=[f"state:{entry.id}"])
    return f"rejection {entry.id} is critical rule {rule.id} now"


def _supersede(db: Database, c: Change) -> str:
    old = state.get(db, int(c.target))
    new = state.supersede(db, old.id, state.NewState(
        agent=old.agent, category=old.category, summary=c.text, domain=old.domain),
        actor=ACTOR)
    return f"state {new.id} supersedes {old.id}"


def _promote_line(db: Database, c: Change) -> str:
    """A daily-log line into MEMORY.md (the file write), recorded in the audit log."""
    from memtui.workspace.memoryfiles import remember

    agent, _, source = c.target.partition(":")
    done = remember(c.home, agent, c.text, long_term=True)
    with db.write():
        audit.record(db, ACTOR, "memory.promote", f"memory:{agent}/{done.path}",
                     {"from": source}, {"text": c.text, "line": done.line})
    return f"added to {agent}'s {done.path}, line {done.line}"


def _rule(verb: str, rule: rules.Rule) -> str:
    return f"rule {rule.id} {verb}: {rule.score:g} ({rule.status})"


def _said(template: str, *values: object) -> str:
    return template.format(*values)


def _state(verb: str, entry: state.StateEntry) -> str:
    return f"state {entry.id} {verb}"


CHANGES: dict[str, Callable[[Database, Change], str]] = {
    "rules.up": lambda db, c: _rule("raised", rules.adjust(db, int(c.target), 1, actor=ACTOR)),
    "rules.down": lambda db, c: _rule(
        "lowered", rules.adjust(db, int(c.target), -1, actor=ACTOR, human=c.human)),
    "rules.critical": lambda db, c: _rule(
        "made critical", rules.make_critical(db, int(c.target), actor=ACTOR)),
    "rules.retire": lambda db, c: _rule(
        "retired", rules.retire(db, int(c.target), actor=ACTOR, human=c.human)),
    "rules.revive": lambda db, c: _rule("revived", rules.revive(db, int(c.target), actor=ACTOR)),
    "rules.edit": lambda db, c: _rule("edited", rules.edit(db, int(c.target), c.text,
                                                            actor=ACTOR)),
    "rules.merge": lambda db, c: _rule(f"took in rule {c.target}", rules.merge_into(
        db, int(c.target), _rule_id(c.text), actor=ACTOR, human=c.human)),
    "state.edit": lambda db, c: _state("edited", state.update(db, int(c.target), actor=ACTOR,
                                                               summary=c.text)),
    "state.complete": lambda db, c: _state("completed", state.complete(db, int(c.target),
                                                                        actor=ACTOR)),
    "state.supersede": _supersede,
    "rejections.promote": _promote_rejection,
    "review.accept": lambda db, c: _state("accepted", review.accept(db, int(c.target),
                                                                    actor=ACTOR)),
    "review.edit": lambda db, c: _state("edited and accepted", review.edit(
        db, int(c.target), c.text, actor=ACTOR)),
    "review.reject": lambda db, c: _said(
        "state {} rejected: tombstone {}", c.target, review.reject(db, int(c.target),
                                                                   actor=ACTOR).id),
    "review.mark": lambda db, c: _said(
        "{} reviewed up to state {}", c.target, review.mark_reviewed(db, c.target,
                                                                     actor=ACTOR)),
    "review.promote_line": _promote_line,
    "flows.accept": lambda db, c: _said(
        "flow {} is active", flows.set_status(db, c.target, "active", actor=ACTOR).name),
    "flows.reject": lambda db, c: _said(
        "flow {} is retired", flows.set_status(db, c.target, "retired", actor=ACTOR).name),
}


def _rule_id(text: str) -> int:
    try:
        return int(text.strip().lstrip("#"))
    except ValueError:
        raise MemtuiError(f"{text!r} is not a rule id") from None


def apply(home: Home, db: Database, action: str, change: Change) -> str:
    """Make one change through the stores; raises MemtuiError when it is refused."""
    if action not in CHANGES:
        raise MemtuiError(f"unknown change {action!r}")
    return CHANGES[action](db, change)


PROMPTS = {
    "rules.edit": "Edit rule {target}",
    "rules.merge": "Merge rule {target} into rule number",
    "state.edit": "Edit state {target}",
    "state.supersede": "Supersede state {target} with",
    "review.edit": "Edit and accept state {target}",
}
PREFILLED = {"rules.edit", "state.edit", "state.supersede", "review.edit"}


class ChangesMixin:
    """For the App: turns Act messages into confirmed, audited changes made in a worker."""

    def on_act(self, message: Act) -> None:
        # Named handlers: the mixin is not a MessagePump, so @on would not register here.
        from memtui.tui.screens.dialogs import ConfirmScreen, PromptScreen

        node: Any = self
        action, target = message.action, message.target
        label = clean(message.label)
        if action in PROMPTS:
            def typed(text: str | None) -> None:
                if text is not None and text.strip():
                    human = message.critical and action == "rules.merge"
                    self.make_change(action, target, text.strip(), human)

            node.push_screen(PromptScreen(PROMPTS[action].format(target=target), label,
                                          value=label if action in PREFILLED else ""), typed)
            return
        asks = message.critical and action in ("rules.down", "rules.retire")
        if asks or action in ("rejections.promote", "review.reject"):
            verb = {"rules.down": "Lower critical rule", "rules.retire": "Retire critical rule",
                    "rejections.promote": "Make a critical rule of rejection",
                    "review.reject": "Reject and bury state"}[action]

            def confirmed(yes: bool | None) -> None:
                if yes:
                    self.make_change(action, target, "", True)

            node.push_screen(ConfirmScreen(f"{verb} {target}?", label), confirmed)
            return
        self.make_change(action, target, "", False)

    @work(thread=True, exit_on_error=False, group="changes")
    def make_change(self, action: str, target: str, text: str, human: bool) -> None:
        node: Any = self
        try:
            with node.store.writing() as db:
                message = apply(node.store.home, db, action, Change(node.store.home, target,
                                                                    text, human))
        except (MemtuiError, OSError) as exc:
            node.post_message(ChangeDone(action, str(exc), ok=False))
            return
        node.post_message(ChangeDone(action, message))

    def on_change_done(self, message: ChangeDone) -> None:
        node: Any = self
        node.notify(clean(message.message), title=message.action,
                    severity="information" if message.ok else "error")
        node.read_now()

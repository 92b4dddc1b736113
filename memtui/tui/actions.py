"""Keys that act on the row under the cursor: one binding list and one mixin per kind of row.

A pane of the overview and its full screen share them, so a key means the same thing in
both. The mixins only say what was asked for (an ``Act`` message up to the app); the app
asks for confirmation or text where needed and makes the change in a worker.
"""

from __future__ import annotations

from typing import Any

from textual.binding import Binding, BindingType

from memtui.tui.messages import Act

RULE_BINDINGS: list[BindingType] = [
    Binding("plus,equals_sign", "act('rules.up')", "+1", id="rules.up",
            tooltip="Raise the rule's score by one"),
    Binding("minus", "act('rules.down')", "-1", id="rules.down",
            tooltip="Lower the rule's score by one (asks when critical)"),
    Binding("exclamation_mark", "act('rules.critical')", "critical", id="rules.critical",
            tooltip="Make the rule critical: always loaded, never decays"),
    Binding("x", "act('rules.retire')", "retire", id="rules.retire",
            tooltip="Retire the rule (asks when critical)"),
    Binding("u", "act('rules.revive')", "revive", id="rules.revive",
            tooltip="Bring a retired or dormant rule back"),
    Binding("e", "act('rules.edit')", "edit", id="rules.edit", tooltip="Edit the rule's text"),
    Binding("M", "act('rules.merge')", "merge", id="rules.merge",
            tooltip="Merge this rule into another rule"),
]
STATE_BINDINGS: list[BindingType] = [
    Binding("e", "act('state.edit')", "edit", id="state.edit", tooltip="Correct the summary"),
    Binding("c", "act('state.complete')", "complete", id="state.complete",
            tooltip="Mark the entry completed"),
    Binding("S", "act('state.supersede')", "supersede", id="state.supersede",
            tooltip="Replace the entry with a newer one (the old one stays in the chain)"),
]
REJECTION_BINDINGS: list[BindingType] = [
    Binding("exclamation_mark", "act('rejections.promote')", "critical rule",
            id="rejections.promote", tooltip="Promote the rejection to a critical rule"),
]


class ActsOnRows:
    """Posts an Act for the item under the cursor; subclasses say what the item is."""

    def current_item(self) -> tuple[str, str, bool, str | None] | None:
        """(target id, label, critical, agent) of the row under the cursor."""
        raise NotImplementedError

    def action_act(self, action: str) -> None:
        item = self.current_item()
        if item is None:
            self.notify("no row under the cursor", severity="warning")  # type: ignore[attr-defined]
            return
        target, label, critical, agent = item
        node: Any = self
        node.post_message(Act(action, target, label, critical, agent))

"""Boot: one loader for every agent, sections with token estimates."""

from __future__ import annotations

from memtui.db import Database
from memtui.home import Home
from memtui.serving.boot import build_boot
from memtui.stores import flows, rules
from memtui.stores import state as st


def test_boot_sections_for_an_agent(home: Home, db: Database) -> None:
    for i in range(25):
        rules.add(db, f"rule number {i}", actor="test", score=5 + i * 0.2)
    rules.add(db, "dormant rule", actor="test", score=3.5)
    rules.add(db, "other agent's rule", actor="test", score=9.9, agent="ops")
    flows.add(db, "send-newsletter", actor="test", steps=["draft", "send"],
              trigger_phrases=["send the newsletter"])
    st.add_many(db, [
        st.NewState(agent="main", category="learning", summary="Buttondown rate-limits at 60/min"),
        st.NewState(agent="main", category="rejected", summary="Rejected: a second newsletter"),
        st.NewState(agent="ops", category="rejected", summary="Rejected: ops thing"),
    ], actor="test")
    boot = build_boot(home, db, "main")
    by = {s.name: s for s in boot.sections}
    assert [s.name for s in boot.sections] == ["rules", "capabilities", "lessons", "flows",
                                               "rejections"]
    assert len(by["rules"].lines) == 15  # scores 7.0 and up; 5-6 load on demand only
    assert by["rules"].lines[0].startswith("- CRITICAL [9.8]")
    assert not any("other agent" in line for line in by["rules"].lines)
    assert not any("dormant" in line for line in by["rules"].lines)
    assert by["lessons"].lines[0].endswith("Buttondown rate-limits at 60/min")
    assert by["flows"].lines == ["- send-newsletter (new): send the newsletter"]
    assert by["rejections"].lines == ["- Rejected: a second newsletter"]
    assert boot.tokens == sum(s.tokens for s in boot.sections) > 0
    assert "## Rules (top 20 by score)" in boot.as_markdown()

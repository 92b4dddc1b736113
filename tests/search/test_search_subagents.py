"""Search over a transcript with sub-agents finds each sub-agent answer once, whole."""

from __future__ import annotations

from pathlib import Path

from memtui.config import SearchSettings
from memtui.search.documents import SUBAGENT_ANSWER, _load_transcript, subagent_answers
from memtui.transcripts import read_transcript

VIEWER = Path(__file__).resolve().parents[1] / "data" / "claude-code-viewer" / (
    "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl")


def test_each_sub_agent_answer_is_indexed_once_and_whole() -> None:
    turns = read_transcript(VIEWER, final=True).turns
    tasks = [r.content.strip() for t in turns for r in t.tool_results if r.name == "Task"]
    answers = subagent_answers(turns)
    repeated = [a for a in answers if a in tasks]
    assert len(repeated) == len(tasks) == 5  # every Task result repeats an answer
    settings = SearchSettings()
    chunks = _load_transcript(VIEWER, "auto", settings).chunks
    for answer in repeated:
        # The longest one is longer than the tool-output cap: it is still found whole.
        assert sum(answer in c.text for c in chunks) == 1, answer[:60]
    assert max(len(a) for a in repeated) > settings.tool_output_chars
    assert sum(SUBAGENT_ANSWER in c.text for c in chunks) >= 1

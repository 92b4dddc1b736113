"""Jobs run from the console: extract, maintain, index rebuild, prune, flush, compact, heartbeat.

Each runs in one exclusive worker with its own connection, reports progress to the job
line, can be cancelled (ctrl+c: the job stops at its next step), and ends in a
notification. What changes memory in bulk shows its preview first (maintenance's dry-run
diff, the compaction plan) and asks before it applies; the heartbeat is a dry run unless
asked to deliver.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import work
from textual.worker import get_current_worker

from memtui.errors import MemtuiError
from memtui.home import Home
from memtui.tui.contextview import engine_module, newest_transcript
from memtui.tui.glyphs import ascii_text
from memtui.tui.messages import JobDone, JobProgress
from memtui.tui.render import block, clean

RUNS = {
    "extract": "Extract new transcript turns now",
    "maintain": "Maintenance cycle: dry-run diff first, then apply",
    "index": "Rebuild the search index",
    "prune": "Pruning preview of the agent's context",
    "flush": "Flush the agent's context now (pre-compaction flush)",
    "compact": "Compact the agent's session: preview, then apply",
    "heartbeat": "Heartbeat (dry run: nothing is delivered)",
}
"""Every job the console can run, with the line the palette and the help screen show."""


def describe(value: Any, limit: int = 400) -> Text:
    """A report (a dataclass, a dict, a list) as readable lines, stored text made literal."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = value.as_dict() if hasattr(value, "as_dict") else dataclasses.asdict(value)
    lines: list[str] = []

    def walk(item: Any, indent: str) -> None:
        if len(lines) >= limit:
            return
        if isinstance(item, dict):
            for key, sub in item.items():
                if isinstance(sub, dict | list) and sub:
                    lines.append(f"{indent}{key}:")
                    walk(sub, indent + "  ")
                else:
                    lines.append(f"{indent}{key}: {clean(sub)}")
        elif isinstance(item, list):
            for sub in item:
                if isinstance(sub, dict | list):
                    walk(sub, indent + "- ")
                else:
                    lines.append(f"{indent}- {clean(sub)}")
        else:
            lines.append(f"{indent}{clean(item)}")

    walk(value, "")
    if len(lines) >= limit:
        lines.append(f"… ({limit} lines shown)")
    return block("\n".join(lines))


def _context(name: str) -> Any:
    module = engine_module(name)
    if module is None:
        raise MemtuiError("this memtui has no context engine (memtui.context): "
                          f"{name} is not available")
    return module


def _session_path(home: Home, store: Any, agent: str) -> Path:
    path = newest_transcript(store, agent)
    if path is None:
        raise MemtuiError(f"agent {agent} has no transcript to compact")
    return path


class RunsMixin:
    """For the App: ``run_job`` starts one of ``RUNS``; ctrl+c cancels it."""

    def run_job(self, kind: str, apply: bool = False) -> None:
        node: Any = self
        if kind not in RUNS:
            node.notify(f"unknown job {kind}", severity="error")
            return
        running = [w for w in node.workers if w.group == "jobs" and w.is_running]
        if running:
            node.notify(f"{running[0].name} is still running (ctrl+c cancels it)",
                        severity="warning")
            return
        self._job(kind, apply)

    def cancel_job(self) -> bool:
        node: Any = self
        running = [w for w in node.workers if w.group == "jobs" and w.is_running]
        for worker in running:
            worker.cancel()
            node.post_message(JobProgress(worker.name, "cancelling…"))
        return bool(running)

    @work(thread=True, exclusive=True, exit_on_error=False, group="jobs")
    def _job(self, kind: str, apply: bool) -> None:
        node: Any = self
        worker = get_current_worker()
        worker.name = kind

        def say(text: str) -> None:
            node.post_message(JobProgress(kind, text))

        stop: Callable[[], bool] = lambda: worker.is_cancelled  # noqa: E731
        home: Home = node.store.home
        agent = node.agent or home.settings.default_agent()
        say("starting…")
        try:
            result = self._run(kind, home, agent, apply, say, stop)
        except (MemtuiError, OSError, ValueError) as exc:
            node.post_message(JobDone(kind, f"{kind} failed: {exc}", "error"))
            return
        if worker.is_cancelled:
            node.post_message(JobDone(kind, f"{kind} cancelled", "warning"))
            return
        node.post_message(JobDone(kind, result))

    def _run(self, kind: str, home: Home, agent: str, apply: bool, say: Callable[[str], None],
             stop: Callable[[], bool]) -> str:
        node: Any = self
        if kind == "extract":
            from memtui.extract import stenographer as steno
            from memtui.extract.choose import choose_extractor

            name, _warning = choose_extractor(home, None)
            db = home.open_db()
            try:
                report = steno.run(home, db, steno.Options(
                    agent=node.agent, extractor=name, stop=stop,
                    progress=lambda p: say(f"{p.files_done}/{p.files_total} files · "
                                           f"{p.turns} turns")))
            finally:
                db.close()
            c = report.counts()
            return (f"extracted {c['turns_extracted']} turns: "
                    f"{sum(c['state_added'].values())} entries, "
                    f"{sum(c['episodes'].values())} episodes"
                    + (f"; {len(report.failed)} file(s) failed" if report.failed else ""))
        if kind == "maintain":
            from memtui.upkeep.maintenance import run_maintenance

            db = home.open_db()
            try:
                cycle = run_maintenance(home, db, dry_run=not apply)
            finally:
                db.close()
            if not apply:
                node.call_from_thread(node.confirm_apply, "maintain",
                                      "Maintenance would change (dry run, nothing changed yet)",
                                      describe(cycle.as_dict()))
                return "maintenance dry run: " + _counts(cycle.counts())
            return "maintenance applied: " + _counts(cycle.counts())
        if kind == "index":
            from memtui.search import engine

            agents = [node.agent] if node.agent else home.agents()
            done = []
            for a in agents:
                if stop():
                    break

                def progress(phase: str, n: int, total: int, a: str = a) -> None:
                    say(f"{a}: {phase} {n}/{total}")

                sync = engine.sync(home, a, rebuild=True, progress=progress)
                done.append(f"{a}: {sync.chunks_added} chunks")
            return "index rebuilt: " + ", ".join(done)
        if kind == "prune":
            plan = _context("pruning").plan_pruning(home, agent)
            node.call_from_thread(node.show_text, f"Pruning preview · {agent}", describe(plan))
            return f"pruning preview for {agent} ready"
        if kind == "flush":
            result = _context("flush").flush(home, agent)
            node.call_from_thread(node.show_text, f"Flush · {agent}", describe(result))
            return f"flushed {agent}'s context"
        if kind == "compact":
            path = _session_path(home, node.store, agent)
            plan = _context("compaction").compact_session(home, path, apply=apply, agent=agent)
            if not apply:
                node.call_from_thread(node.confirm_apply, "compact",
                                      f"Compaction preview · {agent} (nothing changed yet)",
                                      describe(plan))
                return f"compaction preview for {agent} ready"
            return f"compacted {agent}'s session"
        deliver = "deliver" if apply else "dry-run"
        result = _context("heartbeat").run_heartbeat(home, agent, deliver=deliver)
        node.call_from_thread(node.show_text, f"Heartbeat ({deliver}) · {agent}",
                              describe(result))
        return f"heartbeat ({deliver}) for {agent} done"

    def confirm_apply(self, kind: str, title: str, body: Text) -> None:
        from memtui.tui.screens.dialogs import ConfirmScreen

        node: Any = self

        def answered(yes: bool | None) -> None:
            if yes:
                self.run_job(kind, apply=True)

        node.push_screen(ConfirmScreen(f"{title} — apply it?", body.plain), answered)

    def show_text(self, title: str, body: Text) -> None:
        from memtui.tui.screens.dialogs import TextScreen

        node: Any = self
        node.push_screen(TextScreen(ascii_text(node, title), body))

    def on_job_progress(self, message: JobProgress) -> None:
        self._jobline(f"{message.job} · {message.text} · ctrl+c cancels")

    def on_job_done(self, message: JobDone) -> None:
        node: Any = self
        self._jobline("")
        node.notify(clean(message.text), title=message.job, severity=message.severity)
        node.read_now()

    def _jobline(self, text: str) -> None:
        node: Any = self
        for screen in node.screen_stack:
            for line in screen.query("#jobline"):
                line.update(Text(ascii_text(node, clean(text))))
                line.set_class(bool(text), "-running")


def _counts(counts: dict[str, Any]) -> str:
    shown = [f"{k.replace('_', ' ')} {v}" for k, v in counts.items()
             if v and not isinstance(v, bool)]
    return ", ".join(shown) or "nothing to do"

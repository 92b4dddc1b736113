"""Serving speed: hook commands as whole processes, and search through the warm service.

Prints medians and ratios; asserts nothing. Run from the project root:

    .venv/bin/python bench/bench_serving.py                    # hooks, then 10k and 100k
    .venv/bin/python bench/bench_serving.py --only hooks --runs 21
    .venv/bin/python bench/bench_serving.py --only socket --sizes 10000

Hooks: a memory home with 60 state entries, a flow, 300 remembered notes and an index
built by the real model. Each hook command runs as Claude Code runs it (a fresh
process, the JSON payload on stdin) ``--runs`` times, first without the service, then
with `memtui daemon` serving search on its socket. Targets: 300 ms without the service,
150 ms with it (UserPromptSubmit is the one that searches). PreCompact and Stop start a
detached extraction and return; PostToolUse does the same at most every 30 s, so the
runs after the first measure its quick path.

Socket: the synthetic indexes of bench_search_speed.py (LoCoMo turns with real MiniLM
vectors plus noise) served by `memtui daemon`; the same LoCoMo questions are answered by
a warm searcher in this process and through the socket (query embedding included in
both, the query cache cleared before each in-process search).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from memtui.home import Home  # noqa: E402
from memtui.integrations.claude_settings import hook_command  # noqa: E402
from memtui.search.service import ask, socket_path  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": str(REPO),
       # Byte-code cached as an installed package has it (this box sets
       # PYTHONDONTWRITEBYTECODE, which alone costs a hook ~60 ms of compiling).
       "PYTHONPYCACHEPREFIX": str(Path(tempfile.gettempdir()) / "memtui-bench-pycache")}
ENV.pop("MEMTUI_HOME", None)
ENV.pop("PYTHONDONTWRITEBYTECODE", None)
PAYLOADS = {
    "SessionStart": {"source": "startup"},
    "UserPromptSubmit": {"prompt": "how do we deploy the billing service to staging?"},
    "PreToolUse": {"tool_name": "Bash", "tool_use_id": "toolu_1",
                   "tool_input": {"command": "git push origin main"}},
    "PostToolUse": {"tool_name": "Bash", "tool_input": {"command": "ls"},
                    "tool_response": {"stdout": "a"}},
}


def median_ms(samples: list[float]) -> float:
    return round(1000 * statistics.median(samples), 1)


def stocked_home(root: Path) -> Home:
    """A home that looks lived in: state, a flow, notes, and an index with vectors."""
    from memtui.stores import flows, state
    from memtui.workspace.memoryfiles import remember

    home = Home(root)
    home.init(["main"])
    db = home.open_db()
    try:
        topics = ["billing", "staging", "postgres", "redis", "deploy", "grafana", "kafka",
                  "nginx", "backups", "tokens"]
        for i in range(60):
            category = ("decision", "task", "rejected", "context", "discovery")[i % 5]
            state.add(db, state.NewState(agent="main", category=category, summary=(
                f"{topics[i % 10]} item {i}: keep {topics[(i + 3) % 10]} on port {8000 + i}")),
                actor="test")
        flows.add(db, "git-push", actor="test", steps=["run the tests", "push"],
                  trigger_phrases=["git push"])
    finally:
        db.close()
    for i in range(300):
        remember(home, "main", f"note {i}: the {['billing', 'search', 'api'][i % 3]} service "
                 f"talks to {['postgres', 'redis', 'kafka'][i % 2]} through pool {i % 17}")
    subprocess.run([sys.executable, "-m", "memtui.cli.main", "--home", str(root), "index"],
                   env=ENV, check=True, capture_output=True)
    return home


def time_hooks(home: Home, runs: int) -> dict[str, float]:
    out = {}
    for event, payload in PAYLOADS.items():
        command = hook_command(home, "main", event)
        body = json.dumps({"session_id": "b", "transcript_path": "/nonexistent.jsonl",
                           "cwd": str(home.root), "hook_event_name": event, **payload})
        samples = []
        for _ in range(runs):
            t = time.perf_counter()
            done = subprocess.run(shlex.split(command), input=body, capture_output=True,
                                  text=True, env=ENV)
            samples.append(time.perf_counter() - t)
            assert done.returncode == 0, done.stderr
        out[event] = median_ms(samples)
    return out


class Daemon:
    """`memtui daemon` on a home, until stopped; waits for its socket to answer."""

    def __init__(self, home: Home) -> None:
        self.home = home
        self.proc = subprocess.Popen([sys.executable, "-m", "memtui.cli.main", "--home",
                                      str(home.root), "daemon"], env=ENV,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while ask(home, {"op": "ping"})[0] is None:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the daemon did not serve: {self.proc.stderr.read()!r}"
                                 if self.proc.stderr else "the daemon did not serve")
            time.sleep(0.1)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=60)


def baseline(runs: int) -> tuple[float, float]:
    """Medians of a bare interpreter and of importing memtui's CLI: the box's floor."""
    out = []
    for code in ("pass", "import memtui.cli.main"):
        samples = []
        for _ in range(runs):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], env=ENV, check=True)
            samples.append(time.perf_counter() - t)
        out.append(median_ms(samples))
    return out[0], out[1]


def bench_hooks(runs: int) -> None:
    floor, cli = baseline(runs)
    print(f"this box now: python -c pass {floor} ms, import memtui.cli.main {cli} ms "
          f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    with tempfile.TemporaryDirectory() as tmp:
        home = stocked_home(Path(tmp) / "home")
        cold = time_hooks(home, runs)
        daemon = Daemon(home)
        try:
            ask(home, {"op": "recall", "agent": "main", "query": "warm up", "limit": 5})
            warm = time_hooks(home, runs)
        finally:
            daemon.stop()
    print(f"hook commands, whole process, median of {runs} (targets: 300 ms without the "
          "service, 150 ms with it)")
    for event in PAYLOADS:
        print(f"  {event:<17} without service {cold[event]:>7} ms | with service "
              f"{warm[event]:>7} ms")


def bench_socket(sizes: list[int], queries: int) -> None:
    import bench_search_speed as speed

    from memtui.search.encoders.embedder import LocalEmbedder
    from memtui.search.engine import open_searcher
    from memtui.search.results import SearchOptions

    turns, questions = speed.locomo(speed.DEV)
    embedder = LocalEmbedder()
    speed.CACHE.mkdir(parents=True, exist_ok=True)
    base = speed.base_vectors(embedder, turns)
    opts = SearchOptions(sources=("sessions",), max_results=6, min_score=0.0)
    qs = questions[:queries]
    for n in sizes:
        path = speed.CACHE / f"index-{n}.sqlite"
        speed.build_synthetic(path, n, turns, base)
        with tempfile.TemporaryDirectory() as tmp:
            home = Home(Path(tmp) / "h")
            home.init(["bench"])
            with home.config_path.open("a", encoding="utf-8") as fh:
                fh.write("\n[search]\nsync_before_search = false\n")
            home.index_dir.mkdir(parents=True, exist_ok=True)
            home.index_path("bench").symlink_to(path)
            searcher = open_searcher(home, "bench", warm=True)
            searcher.vectors.matrix()
            for q in qs[:5]:
                searcher.search(q, opts)
            local = []
            for q in qs:
                searcher.index.embedder.clear_query_cache()  # type: ignore[union-attr]
                t = time.perf_counter()
                searcher.search(q, opts)
                local.append(time.perf_counter() - t)
            searcher.index.close()
            daemon = Daemon(home)
            try:
                request = {"op": "search", "agent": "bench", "options": asdict(opts)}
                t = time.perf_counter()
                ask(home, {**request, "query": "warm up the searcher"})
                first = time.perf_counter() - t
                remote = []
                for q in qs:
                    t = time.perf_counter()
                    answer, why = ask(home, {**request, "query": q})
                    remote.append(time.perf_counter() - t)
                    assert answer is not None, why
            finally:
                daemon.stop()
            assert not socket_path(home).exists()
        lm, rm = median_ms(local), median_ms(remote)
        print(f"{n:>9} chunks | warm search in-process {lm:>6} ms | through the socket "
              f"{rm:>6} ms (x{rm / lm:.2f}) | the daemon's first search (loads the index) "
              f"{first:.1f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="hooks,socket")
    ap.add_argument("--runs", type=int, default=15, help="runs per hook command")
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=60)
    args = ap.parse_args()
    only = set(args.only.split(","))
    if "hooks" in only:
        bench_hooks(args.runs)
    if "socket" in only:
        bench_socket([int(s) for s in args.sizes.split(",")], args.queries)


if __name__ == "__main__":
    main()

"""Cursor key to screen in a real terminal: the console in tmux, as a person over SSH sees it.

Run: .venv/bin/python bench/bench_console_tmux.py [--home DIR] [--keys 60]

bench_console.py times keys through Textual's Pilot, which itself costs ~85 ms a key (it
prints that figure too). Here the console runs in a tmux pane at 80x24 on the same big
home (100,000 state rows, built by bench_console.py if missing); each down-arrow is sent
with ``tmux send-keys`` and timed until ``tmux capture-pane`` shows a changed screen.
The figure includes starting the tmux client and one capture (printed, ~2-3 ms), so it
slightly overstates the console's own latency. Target: p95 50 ms. Needs tmux.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SESSION = "memtui-bench-keys"


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True).stdout


def _screen() -> str:
    return _tmux("capture-pane", "-p", "-t", SESSION)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path,
                        default=Path(tempfile.gettempdir()) / "memtui-bench-console")
    parser.add_argument("--keys", type=int, default=60)
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        sys.exit("bench_console_tmux needs tmux (apt-get install tmux)")
    if not (args.home / ".bench-built").exists():
        subprocess.run([sys.executable, str(ROOT / "bench/bench_console.py"), "--home",
                        str(args.home), "--runs", "1", "--keys", "1"], check=True)
    memtui = Path(sys.executable).parent / "memtui"
    _tmux("kill-session", "-t", SESSION)
    _tmux("new-session", "-d", "-s", SESSION, "-x", "80", "-y", "24",
          f"{memtui} --home {args.home} console")
    try:
        time.sleep(4)  # first frame and data
        _tmux("send-keys", "-t", SESSION, "1")
        time.sleep(0.3)
        _tmux("send-keys", "-t", SESSION, "Enter")
        time.sleep(2.5)  # the full-screen state table
        times = []
        for _ in range(args.keys):
            before = _screen()
            start = time.perf_counter()
            _tmux("send-keys", "-t", SESSION, "Down")
            while _screen() == before and time.perf_counter() - start < 2:
                pass
            times.append(time.perf_counter() - start)
        captures = []
        for _ in range(20):
            start = time.perf_counter()
            _screen()
            captures.append(time.perf_counter() - start)
        status = [line for line in _screen().splitlines() if "row " in line][-1:]
    finally:
        _tmux("kill-session", "-t", SESSION)
    times.sort()
    print(f"down key to changed screen in tmux at 80x24: p50 "
          f"{statistics.median(times) * 1000:.1f} ms, p95 "
          f"{times[int(len(times) * 0.95)] * 1000:.1f} ms over {len(times)} keys (target p95 "
          f"50 ms); one capture-pane {statistics.median(captures) * 1000:.1f} ms")
    print(f"  last status line: {status[0].strip() if status else '?'}")


if __name__ == "__main__":
    main()

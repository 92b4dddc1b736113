"""A worker process for the concurrency test and benchmark: hammer one store of a home."""

from __future__ import annotations

import sys
import time

from memtui.home import Home
from memtui.stores import flows, rules
from memtui.stores import state as st


def main(role: str, root: str, count: int, worker: str) -> None:
    home = Home(root)
    db = home.open_db()
    started = time.perf_counter()
    for i in range(count):
        if role == "state":
            st.add(db, st.NewState(agent="main", category="task",
                                   summary=f"{worker} entry {i}"), actor="test")
        elif role == "rules":
            rule_id = 1 + i % 10
            if i % 2:
                rules.violate(db, rule_id, actor="test")
            else:
                rules.reinforce(db, rule_id, actor="test", amount=0.0)
        elif role == "flows":
            flows.record(db, "deploy", "pass" if i % 3 else "fail", actor="test",
                         note=f"{worker} run {i}")
    elapsed = time.perf_counter() - started
    db.close()
    print(f"{role} {count} {elapsed:.3f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4])

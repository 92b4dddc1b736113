"""The context engine: token accounting, the /context report, pruning, flush, compaction,
recovery and the heartbeat. Functions return frozen dataclasses and never print."""

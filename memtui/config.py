"""Typed settings from memtui.toml: every field has a default and a line of documentation.

The documentation lives next to each field (``setting(default, doc)``) so that
``memtui init`` can write a memtui.toml in which every setting appears with its default
and its comment, and so that an invalid value gets an error naming the file, the key and
what was expected.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import tomllib
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memtui.errors import ConfigError


def setting(default: Any, doc: str) -> Any:
    """A settings field with its default and the comment written into memtui.toml."""
    if isinstance(default, list | dict):
        return field(default_factory=lambda: type(default)(default), metadata={"doc": doc})
    return field(default=default, metadata={"doc": doc})


@dataclass
class AgentsSettings:
    """[agents]: which agents live on this box."""

    ids: list[str] = setting(["main"], "Agent ids; each gets a workspace under agents/<id>/.")
    default: str = setting("", "Agent used when a command names none (empty: the first id).")
    workspaces: dict[str, str] = setting(
        {}, "Optional map of agent id to the agent's own workspace folder (absolute path)."
    )


@dataclass
class GateSettings:
    """[gates]: the pre-/post-action gates."""

    token_budget: int = setting(3000, "Most tokens (chars/4) a pre-action gate may print.")
    critical_min_score: float = setting(8.0, "Rules at or above this score show in every gate.")
    tool_dirs: list[str] = setting([], "Folders of scripts the existing-tools check looks in.")
    capabilities: list[str] = setting(
        [], "What this box can do, one line each, shown in boot and matched by gates."
    )
    state_items: int = setting(8, "Most active state entries a pre-action gate shows.")
    rejection_items: int = setting(10, "Most rejections a pre-action gate shows.")


@dataclass
class BootSettings:
    """[boot]: the context every agent loads at start."""

    max_rules: int = setting(20, "Rules loaded at boot (the top by score; critical first).")
    recent_lessons: int = setting(8, "Most recent learnings shown at boot.")
    rejections: int = setting(15, "Most recent rejections shown at boot.")


@dataclass
class MaintenanceSettings:
    """[maintenance]: the nightly cycle that decays, retires, merges and archives."""

    decay_after_days: int = setting(7, "A rule unreinforced this many days starts to decay.")
    decay_per_cycle: float = setting(0.5, "Score a decaying rule loses per daily cycle.")
    archive_completed_after_days: int = setting(3, "Completed state older than this is archived.")
    merge_bonus: float = setting(0.5, "Score the surviving rule of a merge gains.")
    rejection_rule_score: float = setting(9.5, "Score of a rule promoted from a rejection.")
    learning_rule_score: float = setting(5.0, "Score of a rule promoted from a learning.")
    promote_min_confidence: float = setting(
        0.7, "Rejections the extractor was less sure of than this are not promoted to rules."
    )


@dataclass
class HealthSettings:
    """[health]: infrastructure checks whose last results the pre-action gate shows."""

    checks: dict[str, str] = setting(
        {}, "Map of check name to shell command; exit 0 means healthy (run: memtui health)."
    )
    timeout_seconds: int = setting(20, "Longest a single health check may run.")


@dataclass
class ScheduleSettings:
    """[schedule]: cron expressions for `memtui daemon` (empty string: off)."""

    extraction: str = setting("*/30 8-23 * * *", "When the stenographer extracts new turns.")
    maintenance: str = setting("0 3 * * *", "When the nightly maintenance cycle runs.")
    heartbeat: str = setting("", "When the heartbeat runs (off by default).")


@dataclass
class ExtractSettings:
    """[extract]: how transcripts become memory."""

    extractor: str = setting("local", "local (deterministic, offline) or llm (Anthropic API).")
    classifier: bool = setting(
        True, "The local extractor also reads the person's replies with the learned classifier "
        "(MiniLM embeddings and a small head) beside its phrase rules."
    )
    model: str = setting("claude-sonnet-4-6", "Model for the llm extractor (a Sonnet-class model).")
    batch_tokens: int = setting(12000, "Most transcript tokens sent to the model per batch.")
    similarity: float = setting(
        0.82, "Normalised-text similarity above which an entry updates an active one."
    )
    batch_turns: int = setting(
        400, "Turns written per transaction; the watermark advances after each batch."
    )
    final_after_minutes: int = setting(
        15, "A transcript untouched this long is complete: its last message is read too."
    )
    fallback_after_failures: int = setting(
        3, "After this many failed llm runs in a row a file is extracted locally (0: never)."
    )
    max_output_tokens: int = setting(4096, "Most tokens the llm extractor may answer with.")
    timeout_seconds: float = setting(120.0, "Timeout of one request to the model API.")
    max_retries: int = setting(4, "Retries (with backoff) on 429, 5xx and timeouts.")


@dataclass
class SearchSettings:
    """[search]: the derived per-agent search index."""

    session_chunking: str = setting(
        "window", "window (several messages per chunk) or message (one chunk per message)."
    )
    chunk_tokens: int = setting(400, "Target chunk size in tokens (chars/4).")
    chunk_overlap: int = setting(80, "Overlap between markdown chunks in tokens.")
    max_results: int = setting(6, "Hits returned by default.")
    min_score: float = setting(0.35, "Hits scoring below this are dropped by default.")
    vector_weight: float = setting(0.7, "Weight of the vector score in hybrid ranking.")
    text_weight: float = setting(0.3, "Weight of the keyword (BM25) score in hybrid ranking.")
    candidate_multiplier: int = setting(4, "Candidates per side: max_results times this.")
    provider: str = setting("local", "Embedding provider: local (sentence-transformers) or none.")
    model: str = setting("all-MiniLM-L6-v2", "Embedding model name.")
    query_precision: str = setting(
        "int8", "Query embedding: int8 (ONNX Runtime with int8 weights, ~3 ms) or fp32 (~6 ms, "
        "exact). Documents are always embedded in float32; this never forces a rebuild."
    )
    embed_max_tokens: int = setting(
        512, "Word pieces the model reads per window; longer text is embedded in windows."
    )
    embed_batch_size: int = setting(32, "Texts per embedding batch while indexing.")
    context_chars: int = setting(
        0, "message chunking: characters of the previous message embedded with each message."
    )
    tool_output_chars: int = setting(
        2000, "Characters of each tool result that are indexed (the rest is marked as left out)."
    )
    fusion: str = setting(
        "weighted", "How vector and keyword ranks combine: weighted (sum of scores) or rrf."
    )
    neighbour_weight: float = setting(
        0.4, "Share of the best adjacent chunk's score (same transcript session or file) "
        "blended into a hit."
    )
    second_neighbour_weight: float = setting(
        0.2, "Share of the best chunk two places away (same session or file) added to a hit as "
        "a bonus (outside the normaliser, so a hit without context keeps its score)."
    )
    session_weight: float = setting(
        0.3, "Share of the mean of the top 3 scores in the same session or file blended in."
    )
    sync_before_search: bool = setting(
        True, "Check the index for changed inputs before a search and sync them first."
    )
    keyword_budget: int = setting(
        20_000, "Indexes over 5,000 chunks: most keyword matches ranked per query (bm25 costs "
        "about a microsecond a match); the query's commonest words are left out first, the rarest "
        "always stays. 0: no limit."
    )
    watch_debounce_seconds: float = setting(
        2.0, "Long-running processes: quiet time after a change before the index is dirty."
    )


KNOWN_MODEL_WINDOWS = {
    "claude-opus-4": 200_000, "claude-sonnet-4": 200_000, "claude-haiku-4": 200_000,
    "claude-3-7-sonnet": 200_000, "claude-3-5-sonnet": 200_000, "claude-3-5-haiku": 200_000,
    "claude-3-opus": 200_000, "claude-3-haiku": 200_000, "gpt-5": 400_000,
    "gpt-4.1": 1_047_576, "gpt-4o": 128_000, "o3": 200_000, "o4-mini": 200_000,
    "gemini-2.5-pro": 1_048_576, "gemini-2.5-flash": 1_048_576,
}
"""Context windows of known models by name prefix (the longest matching prefix wins)."""


@dataclass
class ContextSettings:
    """[context]: the context window: accounting, pruning, flush, compaction and recovery."""

    window_tokens: int = setting(
        200_000, "Window size when the transcript names no model found in model_windows.")
    model_windows: dict[str, int] = setting(
        KNOWN_MODEL_WINDOWS, "Model name (or prefix) to window tokens; the longest prefix wins.")
    token_counter: str = setting(
        "estimate", "estimate (chars/4 after the last reported usage) or anthropic (the "
        "token-counting API, for the part the transcript has no numbers for).")
    counter_model: str = setting(
        "claude-sonnet-4-6", "Model the token-counting API is asked about when the transcript "
        "names none.")
    bootstrap_max_chars: int = setting(
        20_000, "Most characters of one workspace file injected (70% head + 20% tail beyond).")
    bootstrap_files: list[str] = setting(
        ["AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md",
         "BOOTSTRAP.md", "MEMORY.md"], "Workspace files the agent injects, in order.")
    tools_file: str = setting(
        "", "JSON list of the agent's tool schemas (relative to the workspace; empty: none).")
    reserve_tokens_floor: int = setting(
        20_000, "Tokens kept free for the reply; compaction starts at window minus this.")
    soft_threshold_tokens: int = setting(
        4_000, "The flush runs this many tokens before compaction would start.")
    keep_recent_tokens: int = setting(
        20_000, "Compaction keeps about this many of the most recent tokens verbatim.")
    summarizer: str = setting(
        "local", "Compaction summaries: local (from memory.db and the region) or anthropic.")
    summary_model: str = setting("claude-sonnet-4-6", "Model for anthropic summaries.")
    prune_mode: str = setting("cache-ttl", "Session pruning: off or cache-ttl.")
    prune_ttl_seconds: int = setting(
        300, "cache-ttl: prune only when the last model call is older than this.")
    keep_last_assistants: int = setting(
        3, "Tool results of the last N assistant messages are never pruned.")
    soft_trim_ratio: float = setting(0.3, "Soft-trim tool results above this share of the window.")
    hard_clear_ratio: float = setting(0.5, "Clear old tool results above this share of the window.")
    soft_trim_max_chars: int = setting(4_000, "Tool results longer than this are soft-trimmed.")
    soft_trim_head_chars: int = setting(1_500, "Characters a soft trim keeps from the start.")
    soft_trim_tail_chars: int = setting(1_500, "Characters a soft trim keeps from the end.")
    hard_clear_placeholder: str = setting(
        "[Old tool result content cleared]", "What a cleared tool result is replaced with.")
    min_prunable_tool_chars: int = setting(
        50_000, "Hard clear only when prunable tool results hold at least this many chars.")
    prune_tools_allow: list[str] = setting(
        [], "Globs of tool names that may be pruned (empty: all but the denied).")
    prune_tools_deny: list[str] = setting([], "Globs of tool names never pruned.")
    recovery_budget_tokens: int = setting(
        6_000, "Most tokens a recovery tier prints; the least important items go first.")
    group_sessions: list[str] = setting(
        [], "Globs of transcript paths that are group or shared sessions (plus OpenClaw "
        "session keys with :group: or :channel: in sessions.json).")
    private_domains: list[str] = setting(
        ["private", "personal"], "State domains and fact key prefixes kept out of group "
        "and shared contexts.")


@dataclass
class HeartbeatSettings:
    """[heartbeat]: waking a stalled agent (memtui heartbeat)."""

    active_hours: str = setting(
        "08:00-22:00", "HH:MM-HH:MM when heartbeats run, in `timezone` (empty: always).")
    timezone: str = setting("UTC", "Time zone of active_hours (an IANA name).")
    deliver: str = setting("dry-run", "dry-run, command or anthropic.")
    command: str = setting("", "command delivery: the shell command the prompt is piped to.")
    model: str = setting("claude-haiku-4-5", "anthropic delivery: the model.")
    max_output_tokens: int = setting(400, "anthropic delivery: most tokens of the reply.")
    ack_max_chars: int = setting(
        300, "A reply with HEARTBEAT_OK at its start or end and at most this much else is OK.")
    dedupe_hours: int = setting(24, "An identical alert within this many hours is suppressed.")
    timeout_seconds: float = setting(120.0, "Longest a delivery may take.")
    input_price_per_mtok: float = setting(1.0, "USD per million input tokens (cost estimate).")
    output_price_per_mtok: float = setting(5.0, "USD per million output tokens (cost estimate).")


@dataclass
class ConsoleSettings:
    """[console]: the Textual console (memtui console, memtui serve)."""

    theme: str = setting(
        "memtui-dark", "Theme: a file of themes/ (memtui-dark, memtui-light, "
        "memtui-high-contrast) or a built-in Textual theme name.")
    ascii: str = setting(
        "auto", "Glyphs: auto (Unicode when the terminal speaks UTF-8), on (ASCII only), off.")
    refresh_seconds: float = setting(
        1.0, "How often the console checks memory.db for changes by other processes.")
    keymap: dict[str, str] = setting(
        {}, "Binding id to keys, e.g. { \"rules.retire\" = \"delete\" } (ids: docs/console.md "
        "or ? in the console).")


@dataclass
class McpSettings:
    """[mcp]: the MCP server (`memtui mcp`)."""

    token: str = setting(
        "", "Bearer token the HTTP transport requires (Authorization: Bearer ...). Empty: "
        "`memtui mcp --transport http` refuses to start. stdio needs none."
    )
    port: int = setting(8765, "Port of the HTTP transport (on 127.0.0.1 unless --host).")


@dataclass
class Settings:
    """All of memtui.toml."""

    agents: AgentsSettings = field(default_factory=AgentsSettings)
    gates: GateSettings = field(default_factory=GateSettings)
    boot: BootSettings = field(default_factory=BootSettings)
    maintenance: MaintenanceSettings = field(default_factory=MaintenanceSettings)
    health: HealthSettings = field(default_factory=HealthSettings)
    schedule: ScheduleSettings = field(default_factory=ScheduleSettings)
    extract: ExtractSettings = field(default_factory=ExtractSettings)
    search: SearchSettings = field(default_factory=SearchSettings)
    context: ContextSettings = field(default_factory=ContextSettings)
    heartbeat: HeartbeatSettings = field(default_factory=HeartbeatSettings)
    console: ConsoleSettings = field(default_factory=ConsoleSettings)
    mcp: McpSettings = field(default_factory=McpSettings)

    def default_agent(self) -> str:
        return self.agents.default or (self.agents.ids[0] if self.agents.ids else "main")


CHOICES: dict[str, tuple[str, ...]] = {
    "extract.extractor": ("local", "llm"),
    "search.session_chunking": ("window", "message"),
    "search.provider": ("local", "none"),
    "search.query_precision": ("int8", "fp32"),
    "context.token_counter": ("estimate", "anthropic"),
    "context.summarizer": ("local", "anthropic"),
    "context.prune_mode": ("off", "cache-ttl"),
    "heartbeat.deliver": ("dry-run", "command", "anthropic"),
    "console.ascii": ("auto", "on", "off"),
}


RANGES: dict[str, tuple[float, float]] = {
    "gates.critical_min_score": (1, 10),
    "maintenance.rejection_rule_score": (1, 10),
    "maintenance.learning_rule_score": (1, 10),
    "maintenance.promote_min_confidence": (0, 1),
    "extract.similarity": (0, 1),
    "search.min_score": (0, 1),
    "search.vector_weight": (0, 1),
    "search.text_weight": (0, 1),
    "context.soft_trim_ratio": (0, 1),
    "context.hard_clear_ratio": (0, 1),
}
"""Inclusive bounds for numeric settings that have them (all others must be 0 or more)."""

AGENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
"""A valid agent id (the one rule; ``home.check_agent_id`` uses it too)."""


def cron_expression(expr: str, path: object, key: str) -> str:
    """``expr`` with single spaces if croniter reads it as a 5-field cron expression, else
    ConfigError naming the file and the key."""
    from croniter import croniter  # only when a schedule is set: most commands need none

    normal = " ".join(expr.split())
    if len(normal.split()) != 5 or not croniter.is_valid(normal):
        raise ConfigError(path, key, "a cron expression of 5 fields (minute hour day "
                          f"month weekday), or \"\" for off; got {expr!r}")
    return normal


def _check_extra(path: Path, key: str, value: Any) -> None:
    """Checks beyond the type: ranges, cron syntax, agent ids."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(path, key, f"a finite number, got {value!r}")
    if key in RANGES and isinstance(value, int | float):
        low, high = RANGES[key]
        if not low <= value <= high:
            raise ConfigError(path, key, f"a number from {low:g} to {high:g}, got {value!r}")
    if key.startswith("schedule.") and value:
        cron_expression(str(value), path, key)
    ids: list[str] = []
    if key == "agents.ids":
        ids = list(value)
    elif key == "agents.default" and value:
        ids = [value]
    elif key == "agents.workspaces":
        ids = list(value)
    for agent in ids:
        if not AGENT_ID.match(agent):
            raise ConfigError(path, key, "agent ids of letters, digits, '.', '_' or '-' "
                              f"(at most 64), got {agent!r}")


def _expected(tp: Any) -> str:
    return {int: "an integer", float: "a number", str: "a string", bool: "true or false"}.get(
        tp, str(tp).replace("typing.", "")
    )


def _check(value: Any, tp: Any, path: Path, key: str) -> Any:
    origin = typing.get_origin(tp)
    if origin is list:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(path, key, f"a list of strings, got {value!r}")
        return value
    if origin is dict:
        vtype = typing.get_args(tp)[1]
        if not isinstance(value, dict) or not all(
                isinstance(v, vtype) and not isinstance(v, bool) for v in value.values()):
            kind = "integers" if vtype is int else "strings"
            raise ConfigError(path, key, f"a table of {kind}, got {value!r}")
        return value
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if tp is int and isinstance(value, bool) or not isinstance(value, tp):
        raise ConfigError(path, key, f"{_expected(tp)}, got {value!r}")
    choices = CHOICES.get(key)
    if choices and value not in choices:
        raise ConfigError(path, key, f"one of {', '.join(choices)}, got {value!r}")
    if isinstance(value, int | float) and not isinstance(value, bool) and value < 0:
        raise ConfigError(path, key, f"a value of 0 or more, got {value!r}")
    return value


def load_settings(path: Path) -> Settings:
    """Read and validate memtui.toml; a missing file gives the defaults."""
    if not path.exists():
        return Settings()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(path, "(syntax)", f"valid TOML: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(path, "(encoding)", "UTF-8 text") from exc
    settings = Settings()
    sections = {f.name: f for f in dataclasses.fields(Settings)}
    for name, table in data.items():
        if name not in sections:
            raise ConfigError(path, name, f"a known section ({', '.join(sections)})")
        if not isinstance(table, dict):
            raise ConfigError(path, name, "a table ([" + name + "])")
        section = getattr(settings, name)
        hints = typing.get_type_hints(type(section))
        known = {f.name for f in dataclasses.fields(section)}
        for key, value in table.items():
            if key not in known:
                raise ConfigError(
                    path, f"{name}.{key}", f"a known key ({', '.join(sorted(known))})"
                )
            checked = _check(value, hints[key], path, f"{name}.{key}")
            _check_extra(path, f"{name}.{key}", checked)
            setattr(section, key, checked)
    agents = settings.agents
    if agents.default and agents.default not in agents.ids:
        raise ConfigError(path, "agents.default", f"one of agents.ids ({', '.join(agents.ids)})")
    s = settings.search
    if s.chunk_overlap >= s.chunk_tokens:
        raise ConfigError(path, "search.chunk_overlap", "less than search.chunk_tokens")
    return settings


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(json.dumps(v) for v in value) + "]"
    if isinstance(value, dict):
        pairs = ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in value.items())
        return "{ " + pairs + " }" if pairs else "{}"
    raise TypeError(value)


def render_settings(settings: Settings | None = None) -> str:
    """memtui.toml text: every section and setting with its documentation.

    Settings at their default are written commented out (``# key = default``), so the
    file documents every default while a section can still be added or appended by a
    tool without declaring its table twice. A setting that differs from its default is
    written live under a live ``[section]`` header.
    """
    settings = settings or Settings()
    defaults = Settings()
    out = [
        "# memtui settings. Every setting is shown with its default, commented out:",
        "# uncomment a line (and its [section] header) to change it. Validate: memtui doctor",
        "",
    ]
    for sf in dataclasses.fields(Settings):
        section, default = getattr(settings, sf.name), getattr(defaults, sf.name)
        live = {f.name for f in dataclasses.fields(section)
                if getattr(section, f.name) != getattr(default, f.name)}
        out.append(f"# {(type(section).__doc__ or '').strip()}")
        out.append(f"[{sf.name}]" if live else f"# [{sf.name}]")
        for f in dataclasses.fields(section):
            out.append(f"# {f.metadata['doc']}")
            line = f"{f.name} = {_toml_value(getattr(section, f.name))}"
            out.append(line if f.name in live else f"# {line}")
        out.append("")
    return "\n".join(out)

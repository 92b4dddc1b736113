"""Numbered migrations of memory.db; append new ones, never edit a released one."""

from __future__ import annotations

V1_CORE = """
CREATE TABLE state (
    id             INTEGER PRIMARY KEY,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    agent          TEXT NOT NULL,
    category       TEXT NOT NULL CHECK (category IN
                     ('decision','task','rejected','agent_state','context','discovery','learning')),
    domain         TEXT NOT NULL DEFAULT 'general',
    summary        TEXT NOT NULL,
    detail         TEXT NOT NULL DEFAULT '',
    status         TEXT NOT NULL DEFAULT 'active' CHECK (status IN
                     ('active','completed','archived','superseded')),
    session_date   TEXT,
    superseded_by  INTEGER REFERENCES state(id),
    completed_at   TEXT,
    source_file    TEXT,
    source_entry   TEXT,
    confidence     REAL NOT NULL DEFAULT 1.0 CHECK (confidence BETWEEN 0 AND 1)
);
CREATE INDEX state_agent_status ON state(agent, status, created_at);
CREATE INDEX state_status_completed ON state(status, completed_at);
CREATE INDEX state_category ON state(category, status, created_at);
CREATE INDEX state_superseded_by ON state(superseded_by);

CREATE VIEW v_active_state AS
    SELECT * FROM state WHERE status = 'active' ORDER BY created_at DESC, id DESC LIMIT 50;
CREATE VIEW v_rejected AS
    SELECT * FROM state WHERE category = 'rejected' AND status IN ('active','completed')
    ORDER BY created_at DESC, id DESC;

CREATE TABLE watermarks (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE rules (
    id              INTEGER PRIMARY KEY,
    rule            TEXT NOT NULL,
    norm_key        TEXT NOT NULL,
    domain          TEXT NOT NULL DEFAULT 'general',
    agent           TEXT,
    source          TEXT NOT NULL DEFAULT 'manual',
    provenance      TEXT NOT NULL DEFAULT '[]',
    score           REAL NOT NULL CHECK (score BETWEEN 1 AND 10),
    violations      INTEGER NOT NULL DEFAULT 0,
    last_reinforced TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('active','dormant','retired','critical')),
    merged_into     INTEGER REFERENCES rules(id)
);
CREATE INDEX rules_status_score ON rules(status, score DESC);
CREATE INDEX rules_norm_key ON rules(norm_key, agent, status);

CREATE VIEW v_boot_rules AS
    SELECT * FROM rules WHERE status IN ('active','critical')
    ORDER BY (status = 'critical') DESC, score DESC, last_reinforced DESC, id LIMIT 20;

CREATE TABLE flows (
    id              INTEGER PRIMARY KEY,
    name            TEXT NOT NULL UNIQUE,
    domain          TEXT NOT NULL DEFAULT 'general',
    agent           TEXT,
    trigger_phrases TEXT NOT NULL DEFAULT '[]',
    needs_approval  INTEGER NOT NULL DEFAULT 0,
    steps           TEXT NOT NULL DEFAULT '[]',
    times_used      INTEGER NOT NULL DEFAULT 0,
    times_succeeded INTEGER NOT NULL DEFAULT 0,
    times_failed    INTEGER NOT NULL DEFAULT 0,
    effectiveness   REAL,
    status          TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active','draft','retired')),
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);

CREATE TABLE flow_runs (
    id      INTEGER PRIMARY KEY,
    flow_id INTEGER NOT NULL REFERENCES flows(id),
    at      TEXT NOT NULL,
    agent   TEXT,
    outcome TEXT NOT NULL CHECK (outcome IN ('pass','fail')),
    note    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX flow_runs_flow ON flow_runs(flow_id, at);

CREATE TABLE audit (
    id      INTEGER PRIMARY KEY,
    at      TEXT NOT NULL,
    actor   TEXT NOT NULL,
    action  TEXT NOT NULL,
    target  TEXT NOT NULL,
    before  TEXT,
    after   TEXT
);
CREATE INDEX audit_target ON audit(target);
CREATE INDEX audit_at ON audit(at);

CREATE TABLE jobs (
    id          INTEGER PRIMARY KEY,
    kind        TEXT NOT NULL,
    name        TEXT NOT NULL DEFAULT '',
    started_at  TEXT NOT NULL,
    finished_at TEXT,
    status      TEXT NOT NULL CHECK (status IN ('running','ok','failed','skipped')),
    dry_run     INTEGER NOT NULL DEFAULT 0,
    counts      TEXT NOT NULL DEFAULT '{}',
    message     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX jobs_kind ON jobs(kind, name, started_at);

CREATE TABLE gate_runs (
    id          INTEGER PRIMARY KEY,
    at          TEXT NOT NULL,
    agent       TEXT NOT NULL,
    action      TEXT NOT NULL,
    flow        TEXT,
    rule_ids    TEXT NOT NULL DEFAULT '[]',
    closed_at   TEXT,
    outcome     TEXT
);
CREATE INDEX gate_runs_open ON gate_runs(agent, closed_at, at);
"""

V2_SOURCES = """
CREATE TABLE sources (
    id        INTEGER PRIMARY KEY,
    pattern   TEXT NOT NULL,
    format    TEXT NOT NULL DEFAULT 'auto'
                CHECK (format IN ('auto','openclaw','claude-code','generic')),
    agent     TEXT NOT NULL,
    added_at  TEXT NOT NULL,
    UNIQUE (pattern, agent)
);

CREATE TABLE source_files (
    path          TEXT PRIMARY KEY,
    source_id     INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    format        TEXT,
    offset        INTEGER NOT NULL DEFAULT 0,
    line          INTEGER NOT NULL DEFAULT 0,
    last_entry_id TEXT,
    device        INTEGER,
    inode         INTEGER,
    size          INTEGER,
    head_hash     TEXT,
    reader_state  TEXT,
    failures      INTEGER NOT NULL DEFAULT 0,
    last_error    TEXT,
    updated_at    TEXT NOT NULL
);
"""

V3_STENOGRAPHER = """
CREATE TABLE episodes (
    id           INTEGER PRIMARY KEY,
    agent        TEXT NOT NULL,
    at           TEXT NOT NULL,
    kind         TEXT NOT NULL,
    summary      TEXT NOT NULL,
    detail       TEXT NOT NULL DEFAULT '',
    session      TEXT,
    source_file  TEXT,
    source_entry TEXT,
    tool         TEXT,
    ref          TEXT,
    outcome      TEXT,
    created_at   TEXT NOT NULL
);
CREATE INDEX episodes_agent_at ON episodes(agent, at);
CREATE INDEX episodes_ref ON episodes(agent, ref);
CREATE INDEX episodes_kind ON episodes(agent, kind, at);
CREATE INDEX episodes_entry ON episodes(source_entry);

CREATE VIRTUAL TABLE episodes_fts USING fts5(
    summary, detail, content='episodes', content_rowid='id', tokenize='porter unicode61'
);
CREATE TRIGGER episodes_ai AFTER INSERT ON episodes BEGIN
    INSERT INTO episodes_fts(rowid, summary, detail) VALUES (new.id, new.summary, new.detail);
END;
CREATE TRIGGER episodes_ad AFTER DELETE ON episodes BEGIN
    INSERT INTO episodes_fts(episodes_fts, rowid, summary, detail)
    VALUES ('delete', old.id, old.summary, old.detail);
END;
CREATE TRIGGER episodes_au AFTER UPDATE OF summary, detail ON episodes BEGIN
    INSERT INTO episodes_fts(episodes_fts, rowid, summary, detail)
    VALUES ('delete', old.id, old.summary, old.detail);
    INSERT INTO episodes_fts(rowid, summary, detail) VALUES (new.id, new.summary, new.detail);
END;

CREATE TABLE facts (
    id            INTEGER PRIMARY KEY,
    agent         TEXT NOT NULL,
    key           TEXT NOT NULL,
    value         TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    superseded_at TEXT,
    superseded_by INTEGER REFERENCES facts(id),
    source_file   TEXT,
    source_entry  TEXT,
    confidence    REAL NOT NULL DEFAULT 1.0 CHECK (confidence BETWEEN 0 AND 1)
);
CREATE UNIQUE INDEX facts_current ON facts(agent, key) WHERE superseded_at IS NULL;
CREATE INDEX facts_history ON facts(agent, key, created_at);
CREATE INDEX facts_superseded_by ON facts(superseded_by);

CREATE TABLE tombstones (
    id           INTEGER PRIMARY KEY,
    agent        TEXT NOT NULL,
    layer        TEXT NOT NULL CHECK (layer IN ('state','fact','episode')),
    kind         TEXT NOT NULL DEFAULT '',
    text         TEXT NOT NULL,
    norm         TEXT NOT NULL,
    source_file  TEXT,
    source_entry TEXT,
    reason       TEXT NOT NULL DEFAULT '',
    actor        TEXT NOT NULL,
    created_at   TEXT NOT NULL
);
CREATE INDEX tombstones_norm ON tombstones(agent, layer, norm);
CREATE INDEX tombstones_entry ON tombstones(agent, source_entry);

CREATE TABLE extracted_turns (
    agent       TEXT NOT NULL,
    session     TEXT NOT NULL,
    entry       TEXT NOT NULL,
    source_file TEXT NOT NULL,
    at          TEXT NOT NULL,
    PRIMARY KEY (agent, session, entry)
) WITHOUT ROWID;

CREATE TABLE daily_log_pending (
    -- AUTOINCREMENT: ids mark appended sections in the markdown, so they are never reused.
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    agent      TEXT NOT NULL,
    day        TEXT NOT NULL,
    text       TEXT NOT NULL,
    created_at TEXT NOT NULL
);
"""

V4_BOOT_VIEW = """
DROP VIEW v_boot_rules;
CREATE VIEW v_boot_rules AS
    SELECT * FROM rules WHERE status = 'critical' OR (status = 'active' AND score >= 7)
    ORDER BY (status = 'critical') DESC, score DESC, last_reinforced DESC, id LIMIT 20;
"""

V5_CONTEXT = """
CREATE TABLE context_flushes (
    id       INTEGER PRIMARY KEY,
    agent    TEXT NOT NULL,
    session  TEXT NOT NULL,
    cycle    INTEGER NOT NULL,
    at       TEXT NOT NULL,
    tokens   INTEGER NOT NULL,
    status   TEXT NOT NULL,
    captured TEXT NOT NULL DEFAULT '{}',
    UNIQUE (agent, session, cycle)
);

CREATE TABLE compactions (
    id            INTEGER PRIMARY KEY,
    agent         TEXT NOT NULL,
    session       TEXT NOT NULL,
    entry         TEXT NOT NULL,
    by            TEXT NOT NULL CHECK (by IN ('agent','memtui')),
    at            TEXT NOT NULL,
    tokens_before INTEGER,
    tokens_after  INTEGER,
    first_kept    TEXT,
    applied       INTEGER NOT NULL DEFAULT 0,
    output        TEXT,
    flushed       TEXT NOT NULL DEFAULT '{}',
    items         TEXT NOT NULL DEFAULT '[]',
    UNIQUE (session, entry)
);
CREATE INDEX compactions_agent ON compactions(agent, at);
"""

V6_CONSOLE = """
-- Backtest proposals get a status of their own ('proposed'): they wait for a human in the
-- console's review and are never served until accepted. SQLite cannot change a CHECK
-- constraint in place, so the table is rebuilt (ids kept; the self-reference is written
-- against the new name, which the rename turns into state(id)).
DROP VIEW v_active_state;
DROP VIEW v_rejected;
CREATE TABLE state_new (
    id             INTEGER PRIMARY KEY,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    agent          TEXT NOT NULL,
    category       TEXT NOT NULL CHECK (category IN
                     ('decision','task','rejected','agent_state','context','discovery','learning')),
    domain         TEXT NOT NULL DEFAULT 'general',
    summary        TEXT NOT NULL,
    detail         TEXT NOT NULL DEFAULT '',
    status         TEXT NOT NULL DEFAULT 'active' CHECK (status IN
                     ('active','completed','archived','superseded','proposed')),
    session_date   TEXT,
    superseded_by  INTEGER REFERENCES state_new(id),
    completed_at   TEXT,
    source_file    TEXT,
    source_entry   TEXT,
    confidence     REAL NOT NULL DEFAULT 1.0 CHECK (confidence BETWEEN 0 AND 1)
);
INSERT INTO state_new SELECT id, created_at, updated_at, agent, category, domain, summary,
    detail, status, session_date, superseded_by, completed_at, source_file, source_entry,
    confidence FROM state;
DROP TABLE state;
ALTER TABLE state_new RENAME TO state;
CREATE INDEX state_agent_status ON state(agent, status, created_at);
CREATE INDEX state_status_completed ON state(status, completed_at);
CREATE INDEX state_category ON state(category, status, created_at);
CREATE INDEX state_superseded_by ON state(superseded_by);
CREATE VIEW v_active_state AS
    SELECT * FROM state WHERE status = 'active' ORDER BY created_at DESC, id DESC LIMIT 50;
CREATE VIEW v_rejected AS
    SELECT * FROM state WHERE category = 'rejected' AND status IN ('active','completed')
    ORDER BY created_at DESC, id DESC;

-- Keyset pages of the console: newest state of a status; rules by score or by when they
-- were last reinforced; the audit log and the job runs by id.
CREATE INDEX state_status_created ON state(status, created_at, id);
CREATE INDEX rules_score ON rules(score, id);
CREATE INDEX rules_reinforced ON rules(last_reinforced, id);

-- The daily review: what a human decided about an entry above the agent's review mark
-- (the mark itself is the watermark review:<agent>).
CREATE TABLE review_decisions (
    state_id  INTEGER PRIMARY KEY,
    agent     TEXT NOT NULL,
    decision  TEXT NOT NULL CHECK (decision IN ('accepted','edited','rejected')),
    actor     TEXT NOT NULL,
    at        TEXT NOT NULL
);
CREATE INDEX review_decisions_agent ON review_decisions(agent, state_id);
"""

V7_REVIEW_QUEUE = """
-- The console's review queue, walked per agent by id above its mark: a partial index of
-- exactly what waits (proposals, and active entries that came from a transcript), so the
-- queue costs what it holds, not what the table holds.
CREATE INDEX state_review_queue ON state(agent, id)
    WHERE status = 'proposed' OR (status = 'active' AND source_entry IS NOT NULL);
"""

V8_ANSWERS = """
-- A reply cites two messages: its own (source_entry) and the assistant's proposal it
-- answers (answers_entry), as in "That's a no on the paid plan" after "Would you like me
-- to sign up for the paid newsletter plan?". NULL: the entry answers nothing.
ALTER TABLE state ADD COLUMN answers_entry TEXT;
ALTER TABLE episodes ADD COLUMN answers_entry TEXT;
"""

MIGRATIONS: list[tuple[int, str]] = [
    (1, V1_CORE),
    (2, V2_SOURCES),
    (3, V3_STENOGRAPHER),
    (4, V4_BOOT_VIEW),
    (5, V5_CONTEXT),
    (6, V6_CONSOLE),
    (7, V7_REVIEW_QUEUE),
    (8, V8_ANSWERS),
]
"""(version, SQL script) in order; memory.db's PRAGMA user_version is the last applied."""

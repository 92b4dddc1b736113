"""Settings: defaults render to TOML that loads back; invalid values name file and key."""

from __future__ import annotations

import dataclasses
import re
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as hst

from memtui.config import Settings, load_settings, render_settings
from memtui.errors import ConfigError


def test_rendered_defaults_round_trip_and_document_every_field(tmp_path: Path) -> None:
    text = render_settings()
    path = tmp_path / "memtui.toml"
    path.write_text(text)
    assert load_settings(path) == Settings()
    assert tomllib.loads(text) == {}, "defaults are commented out"
    # Uncommenting every setting gives a valid file with the same (default) values.
    setting_line = re.compile(r"^# (\[\w+\]|\w+ = .*)$")
    lines = [line[2:] if setting_line.match(line) else line for line in text.splitlines()]
    parsed = tomllib.loads("\n".join(lines))
    assert set(parsed) == {f.name for f in dataclasses.fields(Settings)}
    for section, table in parsed.items():
        for key in table:
            index = next(i for i, line in enumerate(lines) if line.startswith(f"{key} = "))
            assert lines[index - 1].startswith("# "), f"{section}.{key} has no comment"


def test_changed_settings_are_live_and_a_section_can_be_appended(tmp_path: Path) -> None:
    settings = Settings()
    settings.agents.ids = ["ops", "content"]
    path = tmp_path / "memtui.toml"
    text = render_settings(settings)
    path.write_text(text + '\n[search]\nsession_chunking = "message"\n')
    loaded = load_settings(path)
    assert loaded.agents.ids == ["ops", "content"]
    assert loaded.search.session_chunking == "message"


@pytest.mark.parametrize(
    ("toml", "key", "expected"),
    [
        ("[gates]\ntoken_budget = 'lots'\n", "gates.token_budget", "an integer"),
        ("[gates]\ntoken_budget = true\n", "gates.token_budget", "an integer"),
        ("[gates]\nbudget = 3\n", "gates.budget", "a known key"),
        ("[nope]\nx = 1\n", "nope", "a known section"),
        ("[extract]\nextractor = 'gpt'\n", "extract.extractor", "one of local, llm"),
        ("[search]\nquery_precision = 'int4'\n", "search.query_precision", "one of int8, fp32"),
        ("[maintenance]\ndecay_per_cycle = -1\n", "maintenance.decay_per_cycle", "0 or more"),
        ("[agents]\nids = 'main'\n", "agents.ids", "a list of strings"),
        ("[search]\nchunk_overlap = 500\n", "search.chunk_overlap", "less than"),
        ("[gates\n", "(syntax)", "valid TOML"),
        ("[maintenance]\nrejection_rule_score = 42\n", "maintenance.rejection_rule_score",
         "from 1 to 10"),
        ("[extract]\nsimilarity = 7\n", "extract.similarity", "from 0 to 1"),
        ("[search]\nmin_score = nan\n", "search.min_score", "finite"),
        ("[schedule]\nextraction = 'every day'\n", "schedule.extraction", "cron"),
        ("[schedule]\nmaintenance = '61 * * * *'\n", "schedule.maintenance", "cron"),
        ("[agents]\nids = ['../x']\n", "agents.ids", "agent ids"),
        ("[agents]\nids = ['a']\ndefault = 'b'\n", "agents.default", "one of agents.ids"),
    ],
)
def test_invalid_settings_name_file_key_and_expectation(
    tmp_path: Path, toml: str, key: str, expected: str
) -> None:
    path = tmp_path / "memtui.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError) as err:
        load_settings(path)
    message = str(err.value)
    assert str(path) in message and key in message and expected in message


def test_ints_are_accepted_for_floats(tmp_path: Path) -> None:
    path = tmp_path / "memtui.toml"
    path.write_text("[maintenance]\ndecay_per_cycle = 1\n")
    assert load_settings(path).maintenance.decay_per_cycle == 1.0


def _toml_scalar(value: object) -> str:
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


@given(
    section=hst.sampled_from(["agents", "gates", "boot", "maintenance", "search", "extract",
                              "schedule", "health", "bogus"]),
    key=hst.sampled_from(["ids", "token_budget", "max_rules", "decay_per_cycle", "min_score",
                          "extractor", "extraction", "checks", "x"]),
    value=hst.one_of(hst.integers(-5, 10**6), hst.floats(-5, 10, allow_nan=False),
                     hst.text(max_size=20), hst.booleans(),
                     hst.lists(hst.text(max_size=5), max_size=3)),
)
def test_any_value_either_loads_or_names_the_key(section: str, key: str,
                                                 value: object) -> None:
    import tempfile

    if isinstance(value, list):
        rendered = "[" + ", ".join(_toml_scalar(v) for v in value) + "]"
    else:
        rendered = _toml_scalar(value)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "memtui.toml"
        path.write_text(f"[{section}]\n{key} = {rendered}\n")
        try:
            settings = load_settings(path)
        except ConfigError as exc:
            assert section in str(exc) or "(syntax)" in str(exc)
        else:
            assert isinstance(settings, Settings)


def test_query_precision_choices_are_the_encoders() -> None:
    from memtui.config import CHOICES
    from memtui.search.encoders import QUERY_PRECISIONS

    assert CHOICES["search.query_precision"] == QUERY_PRECISIONS

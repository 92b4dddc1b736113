"""Architecture: the engine never imports UI/CLI/MCP frameworks; hook paths stay light."""

from __future__ import annotations

import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

from memtui.home import Home

REPO = Path(__file__).resolve().parents[1]
INTERFACES = ("memtui.cli", "memtui.tui", "memtui.mcp")


def engine_modules() -> list[str]:
    """Every module of the package outside the interface packages: found, never listed."""
    import memtui

    found = []
    for info in pkgutil.walk_packages(memtui.__path__, "memtui."):
        if not any(info.name == i or info.name.startswith(i + ".") for i in INTERFACES):
            found.append(info.name)
    return sorted(found)


ENGINE = engine_modules()
FRAMEWORKS = ["textual", "click", "typer", "mcp"]
HEAVY = ["numpy", "torch", "sentence_transformers", "onnxruntime", "onnx", "anthropic", "textual",
         "yaml"]


def _modules_after(code: str) -> set[str]:
    script = code + "\nimport sys\nprint(' '.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, cwd=REPO)
    return set(out.stdout.split())


def test_engine_is_found_not_listed() -> None:
    assert {"memtui.db", "memtui.serving.gates", "memtui.upkeep.maintenance",
            "memtui.extract.stenographer", "memtui.search.hybrid"} <= set(ENGINE)
    assert not [m for m in ENGINE if m.startswith(INTERFACES)]


def test_engine_imports_no_framework() -> None:
    loaded = _modules_after("\n".join(f"import {m}" for m in ENGINE))
    assert not {m for m in loaded if m.split(".")[0] in FRAMEWORKS}


def test_import_linter_contract_holds() -> None:
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint, "import-linter is a dev dependency"
    done = subprocess.run([lint], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stdout + done.stderr


def test_hook_commands_import_nothing_heavy(home: Home) -> None:
    code = (
        "from memtui.cli.main import main\n"
        f"main(['--home', {str(home.root)!r}, 'gate', 'pre', 'main', 'deploy', '--json'])\n"
        f"main(['--home', {str(home.root)!r}, 'boot', 'main', '--json'])\n"
    )
    loaded = _modules_after(code)
    assert not {m for m in loaded if m.split(".")[0] in HEAVY}

"""Themes load from files; the high-contrast theme's text reaches 7:1; bindings have ids and
can be remapped from memtui.toml; ASCII mode draws no Unicode glyph."""

from __future__ import annotations

import pytest
from textual.color import Color

from memtui.home import Home
from memtui.tui.app import MemtuiApp
from memtui.tui.glyphs import bar, spark, usage_bar
from memtui.tui.themes import load_themes, theme_dirs
from tests.tui.conftest import fixed_clock, wait_for


def _luminance(color: Color) -> float:
    def channel(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4
    r, g, b = color.rgb
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: Color, b: Color) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def ink_on(back: Color, value: str) -> Color:
    """A text colour as drawn on ``back``: Textual's "auto N%" picks the contrasting one;
    a colour with alpha is blended onto the ground."""
    if value.startswith("auto"):
        alpha = float(value.split()[1].rstrip("%")) / 100 if " " in value else 1.0
        return back + back.get_contrast_text(alpha)
    return back + Color.parse(value)


def test_each_theme_file_loads() -> None:
    themes = load_themes()
    assert {"memtui-dark", "memtui-light", "memtui-high-contrast"} <= set(themes)
    files = sorted(p.stem for d in theme_dirs() for p in d.glob("*.toml"))
    assert files == sorted(t for t in themes if t.startswith("memtui-"))


def test_high_contrast_text_is_at_least_7_to_1() -> None:
    theme = load_themes()["memtui-high-contrast"]
    variables = theme.to_color_system().generate()
    for ground in ("background", "surface", "panel", "footer-background"):
        back = Color.parse(variables[ground])
        for ink in ("text", "foreground", "text-muted", "footer-foreground",
                    "footer-key-foreground", "border"):
            fore = ink_on(back, variables[ink])
            assert contrast(fore, back) >= 7, (ink, ground, contrast(fore, back))
    # The cursor row: text on the accent.
    accent = Color.parse(variables["accent"])
    assert contrast(ink_on(accent, variables["text"]), accent) >= 7


def test_a_bad_theme_file_names_the_file_and_key(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from memtui.errors import ConfigError
    from memtui.tui.themes import load_theme

    bad = tmp_path / "bad.toml"
    bad.write_text('name = "bad"\nprimary = "#fff"\nsparkle = true\n')
    with pytest.raises(ConfigError, match="bad.toml.*sparkle"):
        load_theme(bad)


def test_ascii_glyphs_have_no_unicode() -> None:
    for text in (bar(0.55, 10, ascii_only=True), spark([True, False, True], 6, ascii_only=True),
                 usage_bar(140, 200, [176, 180], 30, ascii_only=True)):
        assert text.isascii(), text


@pytest.mark.anyio
async def test_bindings_have_ids_and_the_keymap_remaps_them(demo_home: Home) -> None:
    text = demo_home.config_path.read_text()
    demo_home.config_path.write_text(
        text + '\n[console]\ntheme = "memtui-high-contrast"\nascii = "on"\n'
        'keymap = { "rules.retire" = "delete", "app.review" = "R" }\n')
    home = Home(demo_home.root)
    app = MemtuiApp(home, clock=fixed_clock, refresh_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.last_snapshot is not None)
        assert app.theme == "memtui-high-contrast" and app.ascii_only
        await pilot.press("3")
        bound = {b.binding.id: key for key, b in app.screen.active_bindings.items()}
        assert bound["rules.retire"] == "delete" and bound["app.review"] == "R"
        await pilot.press("R")
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "ReviewScreen")


def test_every_binding_the_console_declares_has_an_id() -> None:
    import importlib
    import inspect
    import pkgutil

    from textual.binding import Binding

    import memtui.tui

    declared = []
    for info in pkgutil.walk_packages(memtui.tui.__path__, "memtui.tui."):
        module = importlib.import_module(info.name)
        for _name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == info.name:
                declared += [b for b in cls.__dict__.get("BINDINGS", [])
                             if isinstance(b, Binding)]
    assert len(declared) > 40
    assert [b for b in declared if not b.id] == []


@pytest.mark.anyio
async def test_ascii_mode_titles_and_status_lines_are_ascii(demo_home: Home) -> None:
    from textual.widgets import Static

    app = MemtuiApp(demo_home, clock=fixed_clock, refresh_seconds=0, ascii_only=True)
    screens = [("1", "enter"), ("3", "enter"), ("4", "enter"), ("5", "enter"), ("slash",),
               ("v",), ("r",), ("J",), ("A",), ("3", "question_mark")]
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.last_snapshot is not None)
        for keys in screens:
            while len(app.screen_stack) > 1:
                app.pop_screen()
            await pilot.pause()
            for key in keys:
                await pilot.press(key)
            await app.workers.wait_for_complete()
            await pilot.pause(0.1)
            ours = [w for w in app.screen.query(Static)
                    if w.id in ("title", "status", "jobline") or w.has_class("full-title")
                    or w.has_class("full-status") or type(w).__name__ == "Label"]
            assert ours, (keys, app.screen)
            for widget in ours:
                text = str(widget.content)
                assert text.isascii(), (keys, type(app.screen).__name__, text)

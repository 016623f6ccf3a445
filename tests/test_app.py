"""The app shell: navigation lists every written page, and every page runs at its defaults."""

import json
import tomllib

import pytest
from streamlit.testing.v1 import AppTest

from rlviz.ui import catalog
from tests.conftest import PAGES, ROOT, assert_healthy, open_panels, panel_labels, run_page

WRITTEN = [p for p in catalog.PAGES if p.exists]


def test_app_runs_and_lands_on_home():
    at = run_page(ROOT / "app.py")
    assert_healthy(at)
    assert at.title[0].value == "rlviz"


def _list_navigation():
    import json

    import streamlit as st

    from rlviz.ui import navigation

    sections = navigation.build()
    listing = {s: [[p.title, p.url_path] for p in pages] for s, pages in sections.items()}
    st.code(json.dumps(listing))


def test_navigation_lists_exactly_the_written_pages():
    at = AppTest.from_function(_list_navigation, default_timeout=30).run()
    assert not at.exception
    sections = json.loads(at.code[0].value)
    listed = [tuple(p) for pages in sections.values() for p in pages]
    expected = [("Home", ""), (catalog.DRILL.title, catalog.DRILL.url_path),
                (catalog.LESSONS.title, catalog.LESSONS.url_path)]
    expected += [(p.title, p.url_path) for p in WRITTEN]
    assert listed == expected
    assert list(sections)[0] == ""
    assert list(sections)[1:] == [s for s in catalog.SECTIONS if s in sections]


def test_every_page_file_is_in_the_catalog():
    known = {p.slug for p in (catalog.HOME, catalog.DRILL, catalog.LESSONS, *catalog.PAGES)}
    assert {p.stem for p in PAGES.glob("*.py")} <= known


def test_every_written_page_has_a_thumbnail():
    missing = [p.slug for p in WRITTEN if not p.thumbnail.is_file()]
    assert not missing, f"add assets/thumbs/<slug>.png for {missing}"


def test_home_has_a_card_per_written_page():
    # Through app.py: a card's page link needs the navigation that app.py declares.
    at = run_page(ROOT / "app.py")
    assert_healthy(at)
    links = [el.proto.label for el in at.get("page_link")]
    assert links == [f"**{p.title}**" for p in WRITTEN]


@pytest.mark.parametrize("info", WRITTEN, ids=lambda p: p.slug)
def test_every_page_runs_cleanly_at_defaults(info):
    at = run_page(info.file)
    assert_healthy(at)
    assert at.get("plotly_chart"), "every page draws at least one chart"
    assert any("| check |" in m.value for m in at.markdown), "known-answer badge"
    assert {"The equations", "The code that ran", "Export"} <= panel_labels(at)
    open_panels(at, info.slug)
    assert_healthy(at)
    assert at.latex, "the equations"
    assert any("def " in c.value or "class " in c.value for c in at.code), "the code that ran"
    downloads = {b.proto.label for b in at.get("download_button")}
    assert "settings.json" in downloads and any(d.endswith(".html") for d in downloads)


def test_production_config():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["client"]["showErrorDetails"] == "none"
    assert config["client"]["toolbarMode"] == "minimal"
    server = config["server"]
    assert server["headless"] is True and server["runOnSave"] is False
    assert server["fileWatcherType"] == "none" and server["enableXsrfProtection"] is True
    assert server["address"] == "127.0.0.1" and server["maxUploadSize"] <= 5
    assert config["browser"]["gatherUsageStats"] is False

"""Security checks: production settings, no leaked errors, no raw HTML, no risky inputs."""

import ast

import pytest

from tests.conftest import ROOT, free_port, settle, start_server

SOURCES = sorted([*(ROOT / "rlviz").rglob("*.py"), *(ROOT / "pages").glob("*.py"), ROOT / "app.py"])
RAW_HTML = {"html", "components"}  # st.html, st.components
RISKY_KWARGS = {"unsafe_allow_html"}
# The one st.html call: the presentation mode's stylesheet, a file of the app (no user text).
STYLESHEETS = {("rlviz/ui/classroom.py", "PRESENTATION_CSS")}


def calls(path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            yield node


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_raw_html_reaches_the_page(path):
    for node in calls(path):
        assert not {kw.arg for kw in node.keywords} & RISKY_KWARGS, f"{path}:{node.lineno}"
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id == "st" and func.attr == "html" and len(node.args) == 1:
                where = str(path.relative_to(ROOT))
                assert (where, ast.unparse(node.args[0])) in STYLESHEETS, f"{path}:{node.lineno}"
                continue
            assert not (func.value.id == "st" and func.attr in RAW_HTML), f"{path}:{node.lineno}"
    text = path.read_text()
    assert "streamlit.components" not in text and "import pickle" not in text, path


def test_the_only_html_is_a_local_stylesheet():
    """The presentation mode's CSS is a file of the app: it styles, and fetches nothing."""
    from rlviz.ui import classroom

    path = classroom.PRESENTATION_CSS
    assert path.suffix == ".css" and path.is_file() and ROOT in path.parents
    assert classroom.css_is_local(path)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_uploads_are_not_offered(path):
    """Pages take text, numbers and tables through controls; no file is ever uploaded or
    unpickled. (The server also caps any upload at 1 MB: see the config test.)"""
    for node in calls(path):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        assert name not in {"file_uploader", "camera_input", "audio_input", "load", "loads"} or (
            name in {"load", "loads"} and "json" in ast.unparse(func)
        ), f"{path}:{node.lineno}: {ast.unparse(func)}"


@pytest.fixture(params=["boom.py", "boom_app.py"], ids=["script", "st.App"])
def boom_server(request):
    port = free_port()
    proc = start_server(port, script=ROOT / "tests" / "apps" / request.param)
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture
def demo_server():
    port = free_port()
    proc = start_server(port, script=ROOT / "tests" / "apps" / "chrome_demo.py")
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(timeout=10)


@pytest.mark.browser
def test_an_uncaught_exception_shows_no_type_or_traceback(boom_server, browser_page):
    page = browser_page
    page.goto(boom_server)
    page.wait_for_selector('[data-testid="stException"]', timeout=60_000)
    text = page.locator('[data-testid="stApp"]').inner_text()
    for leak in ("RuntimeError", "Traceback", "internal detail", "/very/secret", "boom.py",
                 'File "'):
        assert leak not in text


@pytest.mark.browser
def test_a_page_bug_shows_a_friendly_message_in_the_browser(demo_server, browser_page):
    page = browser_page
    page.goto(f"{demo_server}/?fail=bug")
    page.wait_for_selector("text=Something went wrong", timeout=60_000)
    settle(page)
    text = page.locator('[data-testid="stApp"]').inner_text()
    assert "Something went wrong while drawing this view" in text
    for leak in ("RuntimeError", "Traceback", "an unexpected bug", "chrome_demo.py"):
        assert leak not in text
    assert page.locator('[data-testid="stException"]').count() == 0

"""The library's layers: the core never imports the UI, and importing rlviz stays light."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = sorted(
    p for p in (ROOT / "rlviz").rglob("*.py")
    if not {"figures", "ui"} & set(p.relative_to(ROOT / "rlviz").parts)
)
TORCH_MODULES = {"ppo", "distributional", "offline", "optim"}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def needs_torch(path: Path) -> bool:
    """A torch module, or a file of a torch package (``rlviz/ppo/surface.py``)."""
    return bool(TORCH_MODULES & set(path.relative_to(ROOT / "rlviz").with_suffix("").parts))


def loaded_after(statement: str) -> set[str]:
    code = f"{statement}\nimport sys\nprint(' '.join(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return {name.split(".")[0] for name in out.split()}


def test_core_modules_exist():
    assert any(p.name == "mdp.py" for p in CORE)


@pytest.mark.parametrize("path", CORE, ids=lambda p: str(p.relative_to(ROOT)))
def test_core_never_imports_ui_libraries(path):
    assert not imported_modules(path) & {"streamlit", "plotly"}


def test_figures_never_import_streamlit():
    for path in (ROOT / "rlviz" / "figures").rglob("*.py"):
        assert "streamlit" not in imported_modules(path), path


def test_import_rlviz_is_light():
    assert not loaded_after("import rlviz") & {"streamlit", "plotly", "torch"}


def test_core_modules_load_no_ui_and_torch_only_where_needed():
    plain = [module_name(p) for p in CORE if not needs_torch(p)]
    loaded = loaded_after("\n".join(f"import {m}" for m in plain))
    assert not loaded & {"streamlit", "plotly", "torch"}, loaded & {"streamlit", "plotly", "torch"}


def test_pages_only_talk_to_streamlit_through_thin_code():
    """Pages stay thin: no page defines maths of its own beyond a cached call."""
    for page in (ROOT / "pages").glob("*.py"):
        lines = [ln for ln in page.read_text().splitlines() if ln.strip()]
        assert len(lines) <= 260, f"{page.name} has {len(lines)} lines; move logic to rlviz"
        assert "unsafe_allow_html" not in page.read_text(), page.name

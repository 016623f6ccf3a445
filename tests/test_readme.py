"""The README's two set-up commands stay true: CI runs the test command verbatim."""

import re

from tests.conftest import ROOT

README = (ROOT / "README.md").read_text()
COMMANDS = re.findall(r"```bash\n(.+?)\n```", README, flags=re.S)


def test_one_command_starts_the_app_and_one_runs_the_tests():
    start = [c for c in COMMANDS if c.endswith("streamlit run app.py")]
    tests = [c for c in COMMANDS if c.endswith("-m pytest")]
    assert len(start) == 1 and len(tests) == 1
    for command in (start[0], tests[0]):
        assert command.startswith("python3 -m venv .venv && ")
    assert "requirements.txt" in start[0] and "requirements-dev.txt" in tests[0]


def test_ci_runs_the_readme_test_command_verbatim():
    test_command = next(c for c in COMMANDS if c.endswith("-m pytest"))
    assert test_command in (ROOT / ".ci" / "run").read_text().splitlines()


def test_requirements_pin_what_the_project_promises():
    reqs = (ROOT / "requirements.txt").read_text()
    for pin in ("streamlit==1.67.*", "plotly==7.1.*", "gymnasium==1.4.*", "torch==2.13.0"):
        assert pin in reqs
    dev = (ROOT / "requirements-dev.txt").read_text()
    assert "-r requirements.txt" in dev
    for name in ("pytest", "hypothesis", "playwright", "ruff"):
        assert name in dev

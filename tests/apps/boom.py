"""A script that fails outside any error boundary: what does a browser get to see?"""

SECRET_PATH = "/very/secret/internal/path.py"
raise RuntimeError(f"internal detail that must not leak: {SECRET_PATH}")

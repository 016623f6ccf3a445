"""Serve rlviz to a class: several server processes behind nginx with sticky sessions.

One Streamlit process runs every session's script on one Python interpreter, so a 2-core machine
serving a room of students does better with one process per core behind a proxy. This starts
``--workers`` rlviz servers on loopback ports, writes an nginx configuration from
``deploy/nginx.conf.template`` into a run directory, and runs nginx in the foreground on
``--listen``. Ctrl-C (or SIGTERM) stops everything.

    python -m deploy.serve_class --workers 2 --listen 127.0.0.1:8080

To let other machines in, listen on the machine's address (``--listen 0.0.0.0:8080``) and put
TLS in front (or add it to the template). nginx must be installed (``apt-get install -y nginx``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = Path(__file__).with_name("nginx.conf.template")


def render_config(listen: str, backends: list[int], run_dir: Path) -> str:
    """The nginx configuration for these backend ports."""
    upstreams = "\n".join(f"        server 127.0.0.1:{port};" for port in backends)
    text = TEMPLATE.read_text()
    for key, value in {"LISTEN": listen, "UPSTREAMS": upstreams, "RUN_DIR": str(run_dir)}.items():
        text = text.replace("{{" + key + "}}", value)
    return text


def _healthy(url: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return True
        except OSError:
            time.sleep(0.3)
    return False


@dataclass
class ClassServer:
    """The running processes of one class deployment."""

    listen: str
    backends: list[int]
    run_dir: Path
    workers: list[subprocess.Popen] = field(default_factory=list)
    nginx: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        host, port = self.listen.rsplit(":", 1)
        return f"http://{'127.0.0.1' if host in ('0.0.0.0', '') else host}:{port}"

    @property
    def pids(self) -> list[int]:
        return [w.pid for w in self.workers]

    def start(self, *extra: str) -> ClassServer:
        nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists()
                                          else None)
        if nginx is None:
            raise RuntimeError("nginx is not installed (apt-get install -y nginx)")
        for port in self.backends:
            self.workers.append(subprocess.Popen(
                [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
                 "--server.port", str(port), "--server.address", "127.0.0.1", *extra],
                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True,
            ))
        for port in self.backends:
            if not _healthy(f"http://127.0.0.1:{port}/_stcore/health", 240):
                self.stop()
                raise RuntimeError(f"the rlviz server on port {port} did not start")
        conf = self.run_dir / "nginx.conf"
        conf.write_text(render_config(self.listen, self.backends, self.run_dir))
        self.nginx = subprocess.Popen(
            [nginx, "-p", str(self.run_dir), "-c", str(conf)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
        )
        if not _healthy(f"{self.url}/_stcore/health", 30):
            err = self.nginx.stderr.read().decode() if self.nginx.poll() is not None else ""
            self.stop()
            raise RuntimeError(f"nginx did not start: {err[-500:]}")
        return self

    def stop(self) -> None:
        for proc in [p for p in [self.nginx, *self.workers] if p is not None]:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in [p for p in [self.nginx, *self.workers] if p is not None]:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2,
                    help="rlviz server processes (default: one per core)")
    ap.add_argument("--listen", default="127.0.0.1:8080", help="nginx address:port")
    ap.add_argument("--first-port", type=int, default=8511, help="first backend port")
    args = ap.parse_args(argv)

    run_dir = Path(tempfile.mkdtemp(prefix="rlviz-nginx-"))
    server = ClassServer(args.listen, [args.first_port + i for i in range(args.workers)], run_dir)
    server.start()
    print(f"rlviz for a class: {server.url} -> {args.workers} workers (pids {server.pids})",
          flush=True)
    stop = {"now": False}

    def on_signal(*_):
        stop["now"] = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        while not stop["now"]:
            time.sleep(0.5)
    finally:
        server.stop()
        shutil.rmtree(run_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

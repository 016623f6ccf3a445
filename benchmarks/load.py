"""Load test: many browser-like sessions against a real rlviz server, over its websocket protocol.

Each session does what a browser does: opens ``/_stcore/stream``, asks for a page, and then about
once a second moves one of the page's sliders one step (alternating between two neighbouring
values, as a student dragging back and forth would), waiting for the server to finish the rerun.
The report gives rerun latency percentiles, failed sessions, and the server's memory and threads.

    python -m benchmarks.load                         # 20 sessions for 60 s on a fresh server
    python -m benchmarks.load --sessions 20 --duration 30 --burst --waves 5 --wave-size 100
    python -m benchmarks.load --url http://127.0.0.1:8080 --pid 1234   # an existing server

Everything stays on loopback. The server is started from this checkout when no URL is given,
and then the same sessions also run, at the same time, against the floor
(``benchmarks/floor_app.py``: the pages' figures and nothing else); the last row gives rlviz's
CPU time per run as a multiple of the floor's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

ROOT = Path(__file__).resolve().parents[1]
FINISHED = ForwardMsg.ScriptFinishedStatus
RUN_TIMEOUT = 30.0


# ---------------------------------------------------------------- one browser-like session
def _session_cookie(base_url: str) -> str:
    """The ``_streamlit_xsrf`` cookie the server hands a new browser, as a Cookie header value."""
    with urllib.request.urlopen(f"{base_url}/_stcore/health", timeout=30) as r:
        for header in r.headers.get_all("Set-Cookie") or []:
            name_value = header.split(";", 1)[0]
            if name_value.startswith("_streamlit_xsrf="):
                return name_value
    return ""


@dataclass
class Slider:
    """A slider the session can move (from the page's deltas)."""

    widget_id: str
    values: tuple[float, float]  # the two neighbouring values the session alternates between
    is_int: bool


@dataclass
class SessionStats:
    """What one session measured."""

    page: str
    latencies: list[float] = field(default_factory=list)
    first_run: float | None = None
    failures: list[str] = field(default_factory=list)
    runs_started: int = 0
    runs_finished: int = 0
    interrupted: int = 0
    requested: int = 0  # rerun requests sent, including the unanswered ones of a burst
    executed: int = 0  # script runs the server started and ended (finished or cut short)


class Session:
    """A websocket client speaking Streamlit's browser protocol (protobuf BackMsg/ForwardMsg)."""

    def __init__(self, base_url: str, page: str, query: str, stats: SessionStats):
        self.base_url = base_url.rstrip("/")
        self.ws_url = self.base_url.replace("http://", "ws://") + "/_stcore/stream"
        self.page = page
        self.stats = stats
        self.query = query
        self.page_hash = ""
        self.cached: set[str] = set()  # hashes of the large messages a browser keeps
        self.sliders: dict[str, Slider] = {}
        self.states: dict[str, float] = {}
        self._finished = asyncio.Event()
        self._status: int | None = None
        self._ws = None
        self._reader: asyncio.Task | None = None

    async def __aenter__(self) -> Session:
        # Like a browser: the health check hands out the session cookie, which a proxy with
        # sticky sessions hashes on; the websocket then carries it.
        cookie = await asyncio.to_thread(_session_cookie, self.base_url)
        self._ws = await websockets.connect(
            self.ws_url, subprotocols=["streamlit"], max_size=None, open_timeout=30,
            ping_interval=None, additional_headers={"Cookie": cookie} if cookie else None,
        )
        self._reader = asyncio.create_task(self._read())
        return self

    async def __aexit__(self, *exc) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        with contextlib.suppress(Exception):
            await self._ws.close()

    async def _read(self) -> None:
        try:
            async for raw in self._ws:
                msg = ForwardMsg()
                msg.ParseFromString(raw)
                kind = msg.WhichOneof("type")
                if msg.metadata.cacheable and msg.hash:
                    # The browser keeps large elements and tells the server which it has, so
                    # that an unchanged one comes back as a reference to its hash.
                    self.cached.add(msg.hash)
                if kind == "navigation":
                    # The page that ran: later reruns ask for it by its script hash.
                    self.page_hash = msg.navigation.page_script_hash
                elif kind == "delta":
                    self._on_delta(msg)
                elif kind == "script_finished":
                    self.stats.executed += 1
                    if msg.script_finished == FINISHED.FINISHED_EARLY_FOR_RERUN:
                        # Cut short by a newer request, whose own end is still to come (and
                        # must not be overwritten by this one if it has already arrived).
                        self.stats.interrupted += 1
                    else:
                        self._status = msg.script_finished
                        self._finished.set()
        except websockets.ConnectionClosed as err:
            self.stats.failures.append(f"connection closed: {err}")
            self._finished.set()

    def _on_delta(self, msg: ForwardMsg) -> None:
        delta = msg.delta
        if delta.WhichOneof("type") != "new_element":
            return
        element = delta.new_element
        which = element.WhichOneof("type")
        if which == "exception":
            self.stats.failures.append(f"exception shown: {element.exception.message[:120]}")
        elif which == "alert" and "Something went wrong" in element.alert.body:
            self.stats.failures.append("the page's error boundary caught an unexpected error")
        elif (which == "slider" and element.slider.id not in self.sliders
              and not element.slider.options):  # a select_slider sends option indices
            s = element.slider
            current = float(s.value[0] if s.value else s.default[0])
            step = float(s.step) or 1.0
            other = current + step if current + step <= s.max else current - step
            if len(s.default) == 1 and s.min < s.max:
                is_int = s.data_type == s.DataType.INT
                self.sliders[s.id] = Slider(s.id, (current, other), is_int)

    async def run(self, query: str = "", widgets: Sequence[WidgetState] = ()) -> float:
        """Ask for a rerun and wait until the server finishes it; returns the latency."""
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = query or self.query
        state.cached_message_hashes.extend(self.cached)
        state.page_script_hash = self.page_hash
        state.page_name = "" if self.page_hash else self.page
        state.widget_states.widgets.extend(widgets)
        self._finished.clear()
        self._status = None
        self.stats.runs_started += 1
        self.stats.requested += 1
        t0 = time.perf_counter()
        await self._ws.send(msg.SerializeToString())
        try:
            await asyncio.wait_for(self._finished.wait(), RUN_TIMEOUT)
        except TimeoutError:
            self.stats.failures.append(f"no answer within {RUN_TIMEOUT:g} s")
            return float("nan")
        if self._status not in (FINISHED.FINISHED_SUCCESSFULLY,):
            if not self.stats.failures:
                self.stats.failures.append(f"run ended with status {self._status}")
            return float("nan")
        self.stats.runs_finished += 1
        return time.perf_counter() - t0

    def nudge(self, rng: random.Random, explore: bool = False) -> list[WidgetState]:
        """Widget states with a slider moved to its other value.

        By default a session keeps to one slider (the first it drew) and moves it back and
        forth by one step, as a student comparing two settings does: after the first visit
        both views are cached, so what is measured is the cost of a rerun. With ``explore`` it
        moves a random slider each time and keeps the others where they were, so the settings
        wander and most reruns compute afresh.
        """
        if explore or not self.states:
            slider = rng.choice(list(self.sliders.values()))
        else:
            slider = next(s for s in self.sliders.values() if s.widget_id in self.states)
        now = self.states.get(slider.widget_id, slider.values[0])
        new = slider.values[1] if now == slider.values[0] else slider.values[0]
        self.states[slider.widget_id] = new
        out = []
        for widget_id, value in self.states.items():
            ws = WidgetState(id=widget_id)
            ws.double_array_value.data.append(value)
            out.append(ws)
        return out


class Arrivals:
    """Lets every session wait until all have loaded their page (or given up).

    The steady state starts when the whole class is in: slider moves measured while other
    sessions are still loading would time the opening rush, which is reported separately.
    """

    def __init__(self, expected: int):
        self.expected = expected
        self.arrived = 0
        self.all_in = asyncio.Event()

    def arrive(self) -> None:
        self.arrived += 1
        if self.arrived >= self.expected:
            self.all_in.set()


async def browse(base_url: str, page: str, duration: float, interval: float, seed: int,
                 stats: SessionStats, burst: bool = False, explore: bool = False,
                 arrivals: Arrivals | None = None, floor: bool = False) -> None:
    """One session: open the page, then move a slider every ``interval`` seconds.

    With ``floor`` the server is ``benchmarks/floor_app.py``, a single script that draws the
    page named in its query string.
    """
    rng = random.Random(seed)
    arrivals = arrivals or Arrivals(1)
    arrived = False
    where = ("", f"page={page}") if floor else (page, "")
    try:
        async with Session(base_url, *where, stats) as session:
            stats.first_run = await session.run()
            arrivals.arrive()
            arrived = True
            if stats.failures:
                return
            await arrivals.all_in.wait()
            end = time.perf_counter() + duration
            await asyncio.sleep(rng.uniform(0, interval))
            while time.perf_counter() < end and session.sliders and not stats.failures:
                if burst:
                    # Ten slider moves 20 ms apart: only the last may cost a full run.
                    for _ in range(9):
                        session._finished.clear()
                        msg = BackMsg()
                        msg.rerun_script.page_script_hash = session.page_hash
                        msg.rerun_script.query_string = session.query
                        msg.rerun_script.cached_message_hashes.extend(session.cached)
                        msg.rerun_script.widget_states.widgets.extend(session.nudge(rng, explore))
                        await session._ws.send(msg.SerializeToString())
                        stats.requested += 1
                        await asyncio.sleep(0.02)
                latency = await session.run(widgets=session.nudge(rng, explore))
                if latency == latency:
                    stats.latencies.append(latency)
                await asyncio.sleep(max(0.0, interval + rng.uniform(-0.2, 0.2)))
    except (OSError, websockets.WebSocketException) as err:
        stats.failures.append(f"{type(err).__name__}: {err}")
    finally:
        if not arrived:
            arrivals.arrive()


# ---------------------------------------------------------------- the server and its process
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(base_url: str, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{base_url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"{base_url} did not become healthy")


def start_server(port: int, *extra: str, script: Path = ROOT / "app.py",
                 env: dict[str, str] | None = None) -> subprocess.Popen:
    """``streamlit run app.py`` (or another ``script``) from this checkout, on loopback.

    It runs in this checkout's folder, so it reads the same ``.streamlit/config.toml``.
    """
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(script),
         "--server.port", str(port), "--server.address", "127.0.0.1", *extra],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, env={**os.environ, **(env or {})},
    )
    wait_healthy(f"http://127.0.0.1:{port}")
    return proc


def start_floor(port: int, figures: Path) -> subprocess.Popen:
    """The floor script (``benchmarks/floor_app.py``) serving the captured ``figures``."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return start_server(port, script=ROOT / "benchmarks" / "floor_app.py",
                        env={"RLVIZ_FLOOR_FIGURES": str(figures), "PYTHONPATH": path})


def capture_floor(pages: Sequence[str], out: Path) -> None:
    """The pages' figures at their defaults, pickled for the floor (in a fresh process)."""
    cmd = [sys.executable, "-m", "benchmarks.floor_app", "--capture", str(out),
           "--pages", ",".join(p for p in pages if p)]
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def stop_server(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)


def proc_status(pid: int) -> tuple[float, int]:
    """(resident memory in MB, thread count) of a process, from /proc."""
    rss = threads = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) / 1024
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    return rss, threads


class Sampler:
    """Samples a process's RSS and threads in the background."""

    def __init__(self, pids: Sequence[int], every: float = 0.25):
        self.pids = list(pids)
        self.every = every
        self.samples: list[tuple[float, float, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(OSError):
                stats = [proc_status(p) for p in self.pids]
                self.samples.append(
                    (time.monotonic(), sum(s[0] for s in stats), sum(s[1] for s in stats))
                )
            self._stop.wait(self.every)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def peak_rss(self) -> float:
        return max((s[1] for s in self.samples), default=float("nan"))

    @property
    def peak_threads(self) -> int:
        return max((s[2] for s in self.samples), default=0)


# ---------------------------------------------------------------- scenarios
def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def available_pages() -> list[str]:
    sys.path.insert(0, str(ROOT))
    from rlviz.ui.catalog import available_pages as pages

    return ["", *(p.url_path for p in pages())]  # "" is the home page


def cpu_seconds(pids: Sequence[int]) -> float:
    """User plus system CPU time the processes have used so far, from /proc."""
    ticks = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()  # after the command name
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


@dataclass
class Window:
    """The steady part of a scenario, from the moment every session is in to the end.

    ``cpu_per_run_ms`` is the server's CPU time over that window divided by the script runs it
    executed in it: what a rerun costs the server, whatever else the machine is doing (the
    latency instead grows with every other process that wants the cores).
    """

    pids: Sequence[int]
    seconds: float = 0.0
    cpu: float = 0.0
    runs: int = 0

    @property
    def cpu_per_run_ms(self) -> float:
        return 1e3 * self.cpu / self.runs if self.runs else float("nan")

    @property
    def runs_per_s(self) -> float:
        return self.runs / self.seconds if self.seconds else float("nan")


async def concurrent(base_url: str, pages: Sequence[str], sessions: int, duration: float,
                     interval: float, burst: bool = False, explore: bool = False,
                     floor: bool = False, window: Window | None = None) -> list[SessionStats]:
    """``sessions`` sessions spread over ``pages``; once all are in, ``duration`` s of moves.

    With a ``window``, the server's CPU time and the runs it executed once every session was in
    are recorded there.
    """
    stats = [SessionStats(pages[i % len(pages)]) for i in range(sessions)]
    arrivals = Arrivals(sessions)
    start: list[tuple[float, float, int]] = []

    async def mark() -> None:
        await arrivals.all_in.wait()
        if window is not None and window.pids:
            start.append((time.perf_counter(), cpu_seconds(window.pids),
                          sum(s.executed for s in stats)))

    marker = asyncio.create_task(mark())
    await asyncio.gather(*(
        browse(base_url, s.page, duration, interval, seed=i, stats=s, burst=burst,
               explore=explore, arrivals=arrivals, floor=floor)
        for i, s in enumerate(stats)
    ))
    await marker
    if window is not None and start:
        t0, cpu0, runs0 = start[0]
        window.seconds = time.perf_counter() - t0
        window.cpu = cpu_seconds(window.pids) - cpu0
        window.runs = sum(s.executed for s in stats) - runs0
    return stats


async def side_by_side(targets: Sequence[tuple[str, bool]], pages: Sequence[str], sessions: int,
                       duration: float, interval: float,
                       windows: Sequence[Window | None] = ()) -> list[list[SessionStats]]:
    """The same ``sessions`` against each ``(url, is_floor)`` target, all at the same time.

    Run side by side, rlviz and the floor share whatever else the machine is doing in those
    seconds, so the ratio of their costs does not move with it (one after the other, a machine
    whose speed drifts by a tenth between two rounds moves the ratio by as much).
    """
    windows = list(windows) or [None] * len(targets)
    return list(await asyncio.gather(*(
        concurrent(url, pages, sessions, duration, interval, floor=is_floor, window=window)
        for (url, is_floor), window in zip(targets, windows, strict=True)
    )))


def against_floor(rounds: Sequence[tuple[dict, dict]]) -> dict:
    """The summary row: rlviz's CPU time per run as a multiple of the floor's, round by round.

    Each round ran both at the same time; the figure given is the median of the rounds' ratios
    (and the medians of the rounds' costs and latencies beside it).
    """
    def median(key: str, side: int) -> float:
        return statistics.median(r[side].get(key, math.nan) for r in rounds)

    ratios = [ours.get("server_cpu_ms_per_run", math.nan) / bare.get("server_cpu_ms_per_run",
                                                                       math.nan)
              for ours, bare in rounds]
    return {
        "scenario": f"rlviz against the floor, side by side (median of {len(rounds)} rounds)",
        "ratio": statistics.median(ratios),
        "ratios": [round(r, 2) for r in ratios],
        "rlviz_cpu_ms_per_run": median("server_cpu_ms_per_run", 0),
        "floor_cpu_ms_per_run": median("server_cpu_ms_per_run", 1),
        "rlviz_p50_ms": median("p50_ms", 0), "floor_p50_ms": median("p50_ms", 1),
        "rlviz_p95_ms": median("p95_ms", 0), "floor_p95_ms": median("p95_ms", 1),
        "failed_sessions": sum(r[0]["failed_sessions"] + r[1]["failed_sessions"] for r in rounds),
    }


async def wave(base_url: str, pages: Sequence[str], size: int) -> list[SessionStats]:
    """``size`` sessions connect at once, load a page, and leave."""
    stats = [SessionStats(pages[i % len(pages)]) for i in range(size)]

    async def visit(s: SessionStats) -> None:
        try:
            async with Session(base_url, s.page, "", s) as session:
                s.first_run = await session.run()
        except (OSError, websockets.WebSocketException) as err:
            s.failures.append(f"{type(err).__name__}: {err}")

    await asyncio.gather(*(visit(s) for s in stats))
    return stats


def summarise(name: str, stats: Sequence[SessionStats], sampler: Sampler | None,
              window: Window | None = None) -> dict:
    latencies = [x for s in stats for x in s.latencies]
    firsts = [s.first_run for s in stats if s.first_run is not None]
    failed = [s for s in stats if s.failures]
    out = {
        "scenario": name,
        "sessions": len(stats),
        "reruns": len(latencies),
        "p50_ms": 1e3 * percentile(latencies, 0.50),
        "p95_ms": 1e3 * percentile(latencies, 0.95),
        "p99_ms": 1e3 * percentile(latencies, 0.99),
        "first_load_p95_ms": 1e3 * percentile(firsts, 0.95),
        "failed_sessions": len(failed),
        "interrupted_runs": sum(s.interrupted for s in stats),
        "requested_runs": sum(s.requested for s in stats),
        "executed_runs": sum(s.executed for s in stats),
        "failures": sorted({f for s in failed for f in s.failures})[:5],
    }
    if window is not None and window.runs:
        out["server_cpu_ms_per_run"] = window.cpu_per_run_ms
        out["runs_per_s"] = window.runs_per_s
    if sampler is not None:
        out["peak_rss_mb"] = sampler.peak_rss
        out["peak_threads"] = sampler.peak_threads
    return out


def print_report(rows: Sequence[dict]) -> None:
    for row in rows:
        print(json.dumps({k: (round(v, 2 if k == "ratio" else 1) if isinstance(v, float) else v)
                          for k, v in row.items()}))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--url", help="an already running server (default: start one here)")
    ap.add_argument("--pid", type=int, action="append", default=[],
                    help="server process id(s) to sample RSS/threads from (with --url)")
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--run-timeout", type=float, default=RUN_TIMEOUT,
                    help="seconds a session waits for a run before it counts as failed")
    ap.add_argument("--duration", type=float, default=60.0, help="seconds of steady load")
    ap.add_argument("--warmup", type=float, default=10.0,
                    help="seconds of the same load first, unmeasured (imports, caches)")
    ap.add_argument("--interval", type=float, default=1.0, help="seconds between slider moves")
    ap.add_argument("--pages", default="all", help="comma-separated url paths, or 'all'")
    ap.add_argument("--workers", type=int, default=1,
                    help="serve through nginx with this many rlviz processes (deploy/serve_class)")
    ap.add_argument("--no-steady", action="store_true",
                    help="skip the steady scenario (run only the ones asked for below)")
    ap.add_argument("--burst", action="store_true", help="also run the rapid-burst scenario")
    ap.add_argument("--explore", action="store_true",
                    help="also run sessions that wander over random sliders (cold computations)")
    ap.add_argument("--reruns", type=int, default=0,
                    help="also measure RSS growth over this many reruns after warm-up")
    ap.add_argument("--waves", type=int, default=0, help="connect/leave waves to run")
    ap.add_argument("--wave-size", type=int, default=100)
    ap.add_argument("--floor", action=argparse.BooleanOptionalAction, default=None,
                    help="also run the steady sessions against the floor script "
                         "(benchmarks/floor_app.py) and print the ratio of the server's CPU "
                         "time per run (default: on when this starts one rlviz process)")
    ap.add_argument("--floor-figures", type=Path,
                    help="figures captured before (python -m benchmarks.floor_app --capture)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="steady rounds (rlviz and the floor side by side); the summary gives "
                         "the median of the rounds' ratios")
    args = ap.parse_args(argv)
    globals()["RUN_TIMEOUT"] = args.run_timeout  # every session of this run waits as long
    floor = args.floor if args.floor is not None else (not args.url and args.workers == 1)

    pages = available_pages() if args.pages == "all" else args.pages.split(",")
    proc = cls = None
    if args.url:
        base_url, pids = args.url.rstrip("/"), args.pid
    elif args.workers > 1:
        import tempfile

        from deploy.serve_class import ClassServer

        run_dir = Path(tempfile.mkdtemp(prefix="rlviz-load-"))
        backends = [free_port() for _ in range(args.workers)]
        cls = ClassServer(f"127.0.0.1:{free_port()}", backends, run_dir).start()
        base_url, pids = cls.url, cls.pids
    else:
        port = free_port()
        proc = start_server(port)
        base_url, pids = f"http://127.0.0.1:{port}", [proc.pid]
    floor_proc = None
    rows = []
    try:
        if floor and not args.no_steady:
            figures = args.floor_figures
            if figures is None:
                import tempfile

                figures = Path(tempfile.mkdtemp(prefix="rlviz-floor-")) / "figures.pkl"
                capture_floor(pages, figures)
            floor_port = free_port()
            floor_proc = start_floor(floor_port, figures)
            floor_url = f"http://127.0.0.1:{floor_port}"
        if args.warmup > 0:
            warm = [(base_url, False)] + ([(floor_url, True)] if floor_proc is not None else [])
            asyncio.run(side_by_side(warm, pages, args.sessions, args.warmup, args.interval))
        if not args.no_steady:
            rounds = []
            for _ in range(max(args.repeat, 1)):
                targets = [("steady", base_url, pids, False)]
                if floor_proc is not None:
                    targets.append(("floor: figures only, at the same time", floor_url,
                                    [floor_proc.pid], True))
                windows = [Window(server_pids) for _, _, server_pids, _ in targets]
                with contextlib.ExitStack() as stack:
                    samplers = [stack.enter_context(Sampler(server_pids))
                                for _, _, server_pids, _ in targets]
                    results = asyncio.run(side_by_side(
                        [(url, is_floor) for _, url, _, is_floor in targets], pages,
                        args.sessions, args.duration, args.interval, windows))
                got = [summarise(name, stats, sampler, window) for (name, *_), stats, sampler,
                       window in zip(targets, results, samplers, windows, strict=True)]
                rows += got
                if len(got) == 2:
                    rounds.append(tuple(got))
            if rounds:
                rows.append(against_floor(rounds))
        if args.explore:
            with Sampler(pids) as sampler:
                stats = asyncio.run(concurrent(base_url, pages, args.sessions, args.duration,
                                               args.interval, explore=True))
            rows.append(summarise("exploring: random sliders, mostly cold", stats, sampler))
        if args.burst:
            with Sampler(pids) as sampler:
                stats = asyncio.run(concurrent(base_url, pages, max(args.sessions // 2, 1),
                                               min(args.duration, 20), args.interval, burst=True))
            rows.append(summarise("bursts of 10 moves", stats, sampler))
        if args.reruns and pids:
            rows.append(rss_growth(base_url, pages, pids, args.reruns))
        for i in range(args.waves):
            with Sampler(pids) as sampler:
                stats = asyncio.run(wave(base_url, pages, args.wave_size))
            time.sleep(1.0)
            row = summarise(f"wave {i + 1} of {args.wave_size}", stats, sampler)
            row["rss_after_mb"] = sum(proc_status(p)[0] for p in pids)
            row["threads_after"] = sum(proc_status(p)[1] for p in pids)
            rows.append(row)
    finally:
        if floor_proc is not None:
            stop_server(floor_proc)
        if proc is not None:
            stop_server(proc)
        if cls is not None:
            cls.stop()
    print_report(rows)
    return 0


def rss_growth(base_url: str, pages: Sequence[str], pids: Sequence[int], reruns: int,
               runner=asyncio.run, every: int = 50) -> dict:
    """The server's memory over ``reruns`` slider moves, after a warm-up of the same work.

    One session per page stays open throughout, moving its slider back and forth (sessions
    coming and going are the waves' scenario). The server's RSS is read after every ``every``
    reruns. A single reading wanders by up to 30 MB with what is in flight and what the
    allocator happens to hold at that moment, so growth is measured between averages: the mean
    reading over the last third of the run minus the mean over the first third. A leak lifts
    every reading; the wander averages out.
    """
    pages = [p for p in pages if p] or list(pages)  # the home page has no slider to move
    stats = [SessionStats(page) for page in pages]
    readings: list[float] = []

    def rss() -> float:
        return sum(proc_status(p)[0] for p in pids)

    async def drive() -> None:
        rngs = [random.Random(i) for i in range(len(stats))]
        sessions = [Session(base_url, s.page, "", s) for s in stats]
        for session in sessions:
            await session.__aenter__()
        try:
            for session in sessions:
                await session.run()

            async def moves(i: int, n: int, record: bool) -> None:
                session = sessions[i]
                for _ in range(n):
                    if not session.sliders or stats[i].failures:
                        return
                    latency = await session.run(widgets=session.nudge(rngs[i]))
                    if record and latency == latency:
                        stats[i].latencies.append(latency)

            per_chunk = max(every // len(sessions), 1)
            warm_chunks = max(reruns // 2 // every, 1)
            for chunk in range(warm_chunks + max(reruns // every, 3)):
                record = chunk >= warm_chunks
                await asyncio.gather(*(moves(i, per_chunk, record) for i in range(len(sessions))))
                await asyncio.sleep(0.5)
                if record:
                    readings.append(rss())
        finally:
            for session in sessions:
                await session.__aexit__(None, None, None)

    try:
        runner(drive())
    except (OSError, websockets.WebSocketException) as err:
        stats[0].failures.append(f"{type(err).__name__}: {err}")
    row = summarise(f"{reruns} reruns after warm-up", stats, None)
    third = max(len(readings) // 3, 1)
    if readings:
        row["rss_first_mb"] = statistics.fmean(readings[:third])
        row["rss_last_mb"] = statistics.fmean(readings[-third:])
        row["rss_growth_mb"] = row["rss_last_mb"] - row["rss_first_mb"]
        row["rss_readings_mb"] = [round(x) for x in readings]
    return row


if __name__ == "__main__":
    sys.exit(main())

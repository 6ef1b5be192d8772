"""gunicorn settings (sync workers, as the design card says)."""

import os
import shutil
import sys
import tempfile
from pathlib import Path

_port = os.environ.get("PORT", "8000")
bind = [f"{os.environ.get('HOST', '127.0.0.1')}:{_port}"]
# METRICS_BIND: a second listener where /metrics needs no token and nothing else is
# served (app.web.metrics, which tells the listeners apart by port: never the same one).
_metrics_bind = os.environ.get("METRICS_BIND", "").strip()
if _metrics_bind:
    if not _metrics_bind.startswith("unix:") and _metrics_bind.rpartition(":")[2] == _port:
        raise SystemExit(f"METRICS_BIND ({_metrics_bind}) must not use the service's PORT")
    bind.append(_metrics_bind)
# Sync workers; errors gunicorn answers itself (414, 431, 400) come as problem+json too.
worker_class = "app.platform.gunicorn_worker.ProblemJsonSyncWorker"
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
# The master makes the app once (preload_app) and each worker is a fork of it, ready to
# answer at once: a reload (HUP) or a recycled worker leaves no gap. What must not cross
# the fork (the database pools' connections, the threads of Sentry's transport and
# tracing's exporter) is started or reset in each worker (app.platform.forking). A HUP
# rereads this file but keeps the master's app: new code needs a restart (docs/operations.md).
preload_app = True
# No control socket (gunicornc): signals and systemd manage the server, and two instances
# on one host would otherwise share the default path.
control_socket_disable = True
# Sync workers hold one request each; an outbound link check or image resize must finish
# well inside this, and a stuck worker is recycled instead of holding the slot forever.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = 20  # SIGTERM: finish in-flight requests, then exit
# Each worker is replaced after about this many requests (a jitter apart, so they do not
# all restart at once): whatever a long-lived process accumulates (a leak in a library,
# fragmented memory) is bounded. A new worker is a fork of the master's app (preload_app),
# so a replacement costs milliseconds, not the app's making. GUNICORN_MAX_REQUESTS=0 keeps
# workers for good.
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "100000"))
max_requests_jitter = int(os.environ.get("GUNICORN_MAX_REQUESTS_JITTER", "10000"))
# ACCESS_LOG: `-` (stdout, the default), a file path, or `off` (benchmarks, or a proxy
# that already logs every request). The error log stays on stdout.
_access_log = os.environ.get("ACCESS_LOG", "-").strip() or "-"
accesslog = None if _access_log.lower() in {"off", "none", "false", "0"} else _access_log
errorlog = "-"
# Access lines carry the request id and never a trackable secret (app.platform.logs.redact).
logger_class = "app.platform.logs.RedactingGunicornLogger"
access_log_format = '%(h)s "%(r)s" %(s)s %(b)s %(L)ss rid=%({x-request-id}o)s'
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")


# Metrics (app.platform.metrics): each worker writes its counts to files in
# PROMETHEUS_MULTIPROC_DIR and a scrape adds up every process's. The directory is fresh
# for each start of the server (counts of an earlier run would be added in): one of our
# own (a new temporary directory, removed on exit) or the operator's, emptied here. It is
# set while this file loads, before gunicorn imports the worker and logger classes: they
# import prometheus_client, which chooses between per-process and file-backed values when
# it is first imported, and the workers inherit that choice from the master.
# A directory made by another process (a server that started this one) is not ours to
# share: the marker names the process that made it.
_OWN_METRICS_DIR = "LOCATION_NOTES_OWN_METRICS_DIR"
MASTER = "LOCATION_NOTES_GUNICORN_MASTER"
_configured = os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")
_maker, _, _made = os.environ.get(_OWN_METRICS_DIR, "").partition(":")
if not _configured or (_made == _configured and _maker != str(os.getpid())):
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="location-notes-metrics-")
    os.environ[_OWN_METRICS_DIR] = f"{os.getpid()}:{os.environ['PROMETHEUS_MULTIPROC_DIR']}"

# wsgi.py, imported by this process (the master) to preload the app, defers to each worker
# what must not cross the fork (app.platform.forking).
os.environ[MASTER] = str(os.getpid())


def on_starting(server):
    # Unsafe production settings stop the master before any worker starts: the refusal is
    # printed once (each worker would print it again), and no traceback.
    from app.platform.startup_checks import environment_refusal

    refusal = environment_refusal(str(Path(__file__).resolve().parent / "instance"))
    if refusal is not None:
        print(refusal, file=sys.stderr)
        sys.exit(3)
    directory = Path(os.environ["PROMETHEUS_MULTIPROC_DIR"])
    if os.environ.get(_OWN_METRICS_DIR) == f"{os.getpid()}:{directory}":
        server.metrics_dir_made = directory  # the arbiter outlives a reload (SIGHUP)
        return
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.db"):
        stale.unlink()


def when_ready(server):
    # Before the first workers: the master closes what making the app opened (the code key
    # check's database connection), so no worker inherits a live connection.
    from app.platform import forking

    forking.before_forks()


def post_fork(server, worker):
    from app.platform import forking

    forking.after_fork_in_worker()


def child_exit(server, worker):
    # A gone worker's gauges ("live" ones: the pool in use) leave the sum; its counters stay.
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def on_exit(server):
    made = getattr(server, "metrics_dir_made", None)
    if made is not None:
        shutil.rmtree(made, ignore_errors=True)

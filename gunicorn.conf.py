"""gunicorn settings (sync workers, as the design card says)."""

import os

bind = f"{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"
# Sync workers; errors gunicorn answers itself (414, 431, 400) come as problem+json too.
worker_class = "app.platform.gunicorn_worker.ProblemJsonSyncWorker"
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
# Sync workers hold one request each; an outbound link check or image resize must finish
# well inside this, and a stuck worker is recycled instead of holding the slot forever.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = 20  # SIGTERM: finish in-flight requests, then exit
# Each worker is replaced after about this many requests (a jitter apart, so they do not
# all restart at once): whatever a long-lived process accumulates (a leak in a library,
# fragmented memory) is bounded. GUNICORN_MAX_REQUESTS=0 keeps workers for good.
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "10000"))
max_requests_jitter = int(os.environ.get("GUNICORN_MAX_REQUESTS_JITTER", "1000"))
# ACCESS_LOG: `-` (stdout, the default), a file path, or `off` (benchmarks, or a proxy
# that already logs every request). The error log stays on stdout.
_access_log = os.environ.get("ACCESS_LOG", "-").strip() or "-"
accesslog = None if _access_log.lower() in {"off", "none", "false", "0"} else _access_log
errorlog = "-"
# Access lines carry the request id and never a trackable secret (app.platform.logs.redact).
logger_class = "app.platform.logs.RedactingGunicornLogger"
access_log_format = '%(h)s "%(r)s" %(s)s %(b)s %(L)ss rid=%({x-request-id}o)s'
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")

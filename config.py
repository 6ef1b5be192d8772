"""Settings, read once from the environment, with the decisions page's defaults.

Every number the contract or the decisions page names is a setting here, never a literal
scattered through the code. `instance/config.py`, when present, overrides these values.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent
INSTANCE_DIR = BASE_DIR / "instance"

# Development defaults for secrets. The factory refuses to start with any of them outside
# development and tests (see app.check_production_secrets).
DEV_SECRET = "development-only-secret-refused-in-production"  # noqa: S105 - a marker, refused in production
SECRET_SETTINGS = ("SECRET_KEY", "JWT_SECRET_KEY", "TRACKABLE_CODE_KEY", "WEBHOOK_SECRETS_KEY")


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value not in (None, "") else default


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    return float(value) if value not in (None, "") else default


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value in (None, ""):
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in env_str(name, default).split(",") if item.strip()]


def normalize_database_url(url: str) -> str:
    """postgres:// and postgresql:// mean psycopg2 (the driver we install), whatever
    SQLAlchemy's default driver for the scheme is."""
    for scheme in ("postgres://", "postgresql://"):
        if url.startswith(scheme):
            return "postgresql+psycopg2://" + url[len(scheme) :]
    return url


def database_url() -> str:
    return normalize_database_url(
        os.environ.get("DATABASE_URL") or f"sqlite:///{INSTANCE_DIR / 'app.db'}"
    )


class Config:
    ENV_NAME = env_str("APP_ENV", "development")  # development | production | testing
    SECRET_KEY = env_str("SECRET_KEY", DEV_SECRET)
    # Keys SECRET_KEY replaced (comma-separated, SECRET_KEYS_PREVIOUS in the environment;
    # Flask's name here): what they signed (website sessions, finders' unlock cookies, e-mail
    # links, page cursors) is still accepted, and signed anew with SECRET_KEY. Keep them for
    # the overlap docs/operations.md gives, then remove them.
    SECRET_KEY_FALLBACKS = env_list("SECRET_KEYS_PREVIOUS")
    # The key of what is stored as an HMAC (recovery codes, unlock sessions' client keys, the
    # guess budget's, lockout's and reports' keys), one derived key per purpose, never
    # rotated with SECRET_KEY (app.platform.secret_keys). Unset, SECRET_KEY serves, as in
    # 0.1.0: set it to SECRET_KEY's value of then before SECRET_KEY's first rotation.
    RECORDS_KEY = env_str("RECORDS_KEY", "")
    JWT_SECRET_KEY = env_str("JWT_SECRET_KEY", DEV_SECRET)
    TRACKABLE_CODE_KEY = env_str("TRACKABLE_CODE_KEY", DEV_SECRET)
    # Encrypts webhook signing secrets at rest (services.webhooks.signing); a key of its
    # own, so a leaked SECRET_KEY does not also reveal them. A start whose key cannot open
    # the stored secrets is refused; to change it, see WEBHOOK_SECRETS_KEYS_PREVIOUS.
    WEBHOOK_SECRETS_KEY = env_str("WEBHOOK_SECRETS_KEY", DEV_SECRET)
    # Keys WEBHOOK_SECRETS_KEY replaced (comma-separated): they still open the secrets they
    # sealed until `flask webhooks rotate-secrets-key` has sealed them anew.
    WEBHOOK_SECRETS_KEYS_PREVIOUS = env_list("WEBHOOK_SECRETS_KEYS_PREVIOUS")
    # The code keys this one replaced, oldest first (comma-separated): kept for the codes
    # stored under them (`flask trackables rotate-code-key`, app.services.trackables).
    TRACKABLE_CODE_KEYS_PREVIOUS = env_list("TRACKABLE_CODE_KEYS_PREVIOUS")
    # Signing keys JWT_SECRET_KEY replaced (comma-separated): access tokens they signed
    # are still accepted (each token names its key by a fingerprint, app.auth); keep them
    # one ACCESS_TOKEN_SECONDS after the change, then remove them.
    JWT_SECRET_KEYS_PREVIOUS = env_list("JWT_SECRET_KEYS_PREVIOUS")
    # Development only: where keys left unset are made on first start (app.platform.devkeys).
    DEV_KEYS_FILE = Path(env_str("DEV_KEYS_FILE", str(INSTANCE_DIR / "dev-keys.json")))
    # Base of scan URLs and mail links. Required in production (https, a public host);
    # unset elsewhere, the address gunicorn serves at (app.use_served_address).
    PUBLIC_BASE_URL = env_str("PUBLIC_BASE_URL", "")
    # A test rig on one machine: production with an http or local PUBLIC_BASE_URL.
    PUBLIC_BASE_URL_ALLOW_LOCAL = env_bool("PUBLIC_BASE_URL_ALLOW_LOCAL", False)
    # Production on SQLite, for a test rig on one machine only (app.platform.startup_checks).
    DATABASE_ALLOW_SQLITE = env_bool("DATABASE_ALLOW_SQLITE", False)

    # Database
    SQLALCHEMY_DATABASE_URI = database_url()
    # A pooled connection idle longer than this is pinged before use (app.platform.database).
    DATABASE_PING_AFTER_IDLE_SECONDS = env_float("DATABASE_PING_AFTER_IDLE_SECONDS", 1.0)
    # PostgreSQL: how long opening a connection may take, and how long one statement may
    # run on the server, before the request gives up with 503 (app.platform.database).
    DATABASE_CONNECT_TIMEOUT_SECONDS = env_int("DATABASE_CONNECT_TIMEOUT_SECONDS", 2)
    DATABASE_STATEMENT_TIMEOUT_SECONDS = env_float("DATABASE_STATEMENT_TIMEOUT_SECONDS", 7.0)
    # PostgreSQL: the client's own bound on any wait for an answer (a silent partition:
    # the server never sees the statement, so its timeout cannot end it); also TCP's
    # user timeout and keepalives. Above the statement timeout, so a slow statement is
    # cancelled by the server first (app.platform.database.guard).
    DATABASE_SOCKET_TIMEOUT_SECONDS = env_float("DATABASE_SOCKET_TIMEOUT_SECONDS", 8.0)
    # PostgreSQL: the readiness check's deadline, and the breaker's probe's.
    DATABASE_CHECK_TIMEOUT_SECONDS = env_float("DATABASE_CHECK_TIMEOUT_SECONDS", 0.5)
    # PostgreSQL: once the database was found unreachable, requests answer 503 at once; a
    # request probes it again at most this often (app.platform.database.guard.Breaker).
    DATABASE_BREAKER_COOLDOWN_SECONDS = env_float("DATABASE_BREAKER_COOLDOWN_SECONDS", 1.0)
    # PostgreSQL: anonymous discovery of small windows and the token's account read run as
    # prepared statements, planned once per connection (app.platform.database.prepared). Off behind
    # a pooler that does not keep one server session per client connection (PgBouncer in
    # transaction mode).
    DATABASE_PREPARED_STATEMENTS = env_bool("DATABASE_PREPARED_STATEMENTS", True)
    # `pgbouncer`: DATABASE_URL names PgBouncer in transaction mode (Debian's 1.18 passes
    # on neither prepared statements nor the `options` startup parameter). The app then
    # prepares nothing and sends no startup options: the statement timeout is the role's
    # (`ALTER ROLE ... SET statement_timeout`, docs/configuration.md). Empty: a direct connection.
    DATABASE_POOLER = env_str("DATABASE_POOLER", "")
    # A PostgreSQL read replica for anonymous public reads (app.platform.database.replica):
    # used while at most MAX_LAG behind (measured every LAG_CHECK seconds per process); a
    # client that wrote reads the primary for STICKY seconds (longer than MAX_LAG).
    DATABASE_REPLICA_URL = env_str("DATABASE_REPLICA_URL", "")
    DATABASE_REPLICA_MAX_LAG_SECONDS = env_float("DATABASE_REPLICA_MAX_LAG_SECONDS", 5.0)
    DATABASE_REPLICA_STICKY_SECONDS = env_float("DATABASE_REPLICA_STICKY_SECONDS", 15.0)
    DATABASE_REPLICA_LAG_CHECK_SECONDS = env_float("DATABASE_REPLICA_LAG_CHECK_SECONDS", 1.0)
    # How long a request waits for a free pooled connection.
    DATABASE_POOL_TIMEOUT_SECONDS = env_float("DATABASE_POOL_TIMEOUT_SECONDS", 5.0)
    # SQLite: how long a writer waits for another writer's lock (BEGIN IMMEDIATE) before
    # giving up. The driver's default of 5 s ran out for barrier-released writers on a
    # busy machine; writers queue, they do not fail.
    DATABASE_SQLITE_BUSY_TIMEOUT_SECONDS = env_float("DATABASE_SQLITE_BUSY_TIMEOUT_SECONDS", 20.0)

    # Request bodies: JSON bodies and image uploads share one hard cap (20 MB images + form).
    MAX_CONTENT_LENGTH = env_int("MAX_CONTENT_LENGTH", 21 * 1024 * 1024)
    # A multipart form's parts and a text part's bytes (Flask's defaults): each is its own
    # 413 that names the limit (app.platform.application.ServiceRequest).
    MAX_FORM_PARTS = env_int("MAX_FORM_PARTS", 1_000)
    MAX_FORM_MEMORY_SIZE = env_int("MAX_FORM_MEMORY_SIZE", 500_000)
    MAX_JSON_DEPTH = env_int("MAX_JSON_DEPTH", 32)

    # Tokens (decisions: Identity)
    JWT_ACCESS_TOKEN_EXPIRES = timedelta(seconds=env_int("ACCESS_TOKEN_SECONDS", 3600))
    REFRESH_TOKEN_EXPIRES = timedelta(days=env_int("REFRESH_TOKEN_DAYS", 14))
    JWT_TOKEN_LOCATION = ["headers"]
    JWT_ALGORITHM = "HS256"
    JWT_DECODE_ALGORITHMS = ["HS256"]  # never "none", never an asymmetric confusion
    REQUIRE_CONFIRMED_EMAIL = env_bool("REQUIRE_CONFIRMED_EMAIL", False)
    LOCKOUT_MAX_FAILURES = env_int("LOCKOUT_MAX_FAILURES", 5)
    LOCKOUT_MINUTES = env_int("LOCKOUT_MINUTES", 5)
    EMAIL_CODE_HOURS = env_int("EMAIL_CODE_HOURS", 24)
    # Passwords (decisions: Identity): 8-128 characters, not common, not the email/user name.
    PASSWORD_MIN_LENGTH = env_int("PASSWORD_MIN_LENGTH", 8)
    PASSWORD_MAX_LENGTH = env_int("PASSWORD_MAX_LENGTH", 128)

    # Mail: console (logs), file (instance/outbox/*.eml) or smtp
    MAIL_BACKEND = env_str("MAIL_BACKEND", "console")
    MAIL_FROM = env_str("MAIL_FROM", "Location Notes <no-reply@localhost>")
    MAIL_SMTP_HOST = env_str("MAIL_SMTP_HOST", "localhost")
    MAIL_SMTP_PORT = env_int("MAIL_SMTP_PORT", 25)
    MAIL_SMTP_USER = env_str("MAIL_SMTP_USER", "")
    MAIL_SMTP_PASSWORD = env_str("MAIL_SMTP_PASSWORD", "")
    MAIL_SMTP_STARTTLS = env_bool("MAIL_SMTP_STARTTLS", False)
    # The `file` backend writes one .eml per message here (default: instance/outbox).
    MAIL_OUTBOX_DIR = Path(env_str("MAIL_OUTBOX_DIR", str(INSTANCE_DIR / "outbox")))
    # Notification mail (services.events.mail): the hour (UTC) daily digests go out.
    NOTIFICATION_DIGEST_HOUR_UTC = env_int("NOTIFICATION_DIGEST_HOUR_UTC", 7)

    # Background work (app.platform.jobs, `flask worker`): how often an idle worker looks
    # for due jobs, how long finished jobs are kept (done, dead), and the age of the
    # oldest waiting job past which /readyz reports the workers as behind.
    JOBS_POLL_SECONDS = env_float("JOBS_POLL_SECONDS", 1.0)
    JOBS_KEEP_DONE_HOURS = env_float("JOBS_KEEP_DONE_HOURS", 24)
    JOBS_KEEP_DEAD_DAYS = env_float("JOBS_KEEP_DEAD_DAYS", 30)
    JOBS_BACKLOG_ALERT_SECONDS = env_float("JOBS_BACKLOG_ALERT_SECONDS", 300)
    # A `flask worker`'s threads per lane (account, events, exports, webhooks: one each
    # unless named here; 0 leaves a lane to other workers), and its own metrics listener
    # (host:port; empty: none). docs/operations.md, Background work.
    WORKER_LANES = env_str("WORKER_LANES", "webhooks=2")
    WORKER_METRICS_BIND = env_str("WORKER_METRICS_BIND", "")

    # Rate limits (Flask-Limiter); memory by default, Redis when workers must share.
    RATELIMIT_ENABLED = env_bool("RATELIMIT_ENABLED", True)
    # Shortcuts on library internals (app.platform.fast): all (default), off, or names.
    FAST_PATHS = env_str("FAST_PATHS", "all")
    # database:// (the app's own database, app.platform.ratelimit_storage) or redis://...: every
    # worker and instance counts each limit once. memory:// is per process (refused in
    # production).
    RATELIMIT_STORAGE_URI = env_str("RATELIMIT_STORAGE_URI", "database://")
    # A Redis that accepts and never answers must not hold a worker: each call gives up
    # after this long and the request answers 503 (app.platform.ratelimit_storage). Passed
    # to the store's client (redis-py); the database and memory stores ignore it.
    RATELIMIT_STORE_TIMEOUT_SECONDS = env_float("RATELIMIT_STORE_TIMEOUT_SECONDS", 1.0)
    RATELIMIT_STORAGE_OPTIONS = {
        "socket_connect_timeout": RATELIMIT_STORE_TIMEOUT_SECONDS,
        "socket_timeout": RATELIMIT_STORE_TIMEOUT_SECONDS,
    }
    RATELIMIT_HEADERS_ENABLED = True
    RATE_LIMIT_LOGIN = env_str("RATE_LIMIT_LOGIN", "20 per minute")
    RATE_LIMIT_REGISTER = env_str("RATE_LIMIT_REGISTER", "10 per hour")
    RATE_LIMIT_ACCOUNT_MAIL = env_str("RATE_LIMIT_ACCOUNT_MAIL", "5 per 15 minutes")
    # The guess budget of secret codes (decisions: Trackable codes), in the database: misses
    # per client (IPv4 address, IPv6 /64) and per network (IPv4 /24, IPv6 /48) in the
    # window; misses of all clients in one window that raise the alarm (0: never).
    SECRET_GUESS_LIMIT = env_int("SECRET_GUESS_LIMIT", 10)
    SECRET_GUESS_NETWORK_LIMIT = env_int("SECRET_GUESS_NETWORK_LIMIT", 30)
    SECRET_GUESS_WINDOW_MINUTES = env_int("SECRET_GUESS_WINDOW_MINUTES", 10)
    SECRET_GUESS_ALARM_MISSES = env_int("SECRET_GUESS_ALARM_MISSES", 500)
    # A signed-in account with a confirmed e-mail address spends its own budget instead,
    # wherever it is, and its network's allowance for such accounts: a crowd's anonymous
    # misses behind one address do not lock it out (docs/contract/trackables.md, Guess budget).
    SECRET_GUESS_ACCOUNT_LIMIT = env_int("SECRET_GUESS_ACCOUNT_LIMIT", 10)
    SECRET_GUESS_ACCOUNT_NETWORK_LIMIT = env_int("SECRET_GUESS_ACCOUNT_NETWORK_LIMIT", 100)
    # Per account, in the database: secret codes rotated (trackables created per hour:
    # TRACKABLES_PER_USER_PER_HOUR, below).
    SECRET_ROTATE_LIMIT = env_int("SECRET_ROTATE_LIMIT", 10)
    SECRET_ROTATE_WINDOW_MINUTES = env_int("SECRET_ROTATE_WINDOW_MINUTES", 60)

    # Public lists and discovery (contract: Limits)
    PUBLIC_LIST_CAP = env_int("PUBLIC_LIST_CAP", 500)
    # Paged lists (docs/contract/wire.md, Pagination): the largest `limit` a client may
    # ask for, and the page size of a request that sends a `cursor` without one.
    PAGE_SIZE_MAX = env_int("PAGE_SIZE_MAX", 100)
    NEARBY_RADIUS_KM = env_float("NEARBY_RADIUS_KM", 5.0)
    NEARBY_MAX_RADIUS_KM = env_float("NEARBY_MAX_RADIUS_KM", 500.0)
    # Notes and categories: the content language of a note or category that names none
    # (and whose category names none either).
    DEFAULT_CONTENT_LANGUAGE = env_str("DEFAULT_CONTENT_LANGUAGE", "en")

    # Sync (contract: Sync): most records one push may carry, per kind
    SYNC_PUSH_MAX_NOTES = env_int("SYNC_PUSH_MAX_NOTES", 500)
    SYNC_PUSH_MAX_CATEGORIES = env_int("SYNC_PUSH_MAX_CATEGORIES", 500)
    # All link fetches of one push together (each also within OUTBOUND_TIMEOUT_SECONDS):
    # well under gunicorn's 30 s timeout, leaving the rest for the push's writes.
    SYNC_PUSH_LINK_BUDGET_SECONDS = env_float("SYNC_PUSH_LINK_BUDGET_SECONDS", 10.0)

    # Trackable codes (decisions: Placeholders, Trackable codes)
    TRACKABLE_PUBLIC_PREFIX = env_str("TRACKABLE_PUBLIC_PREFIX", "LN")
    TRACKABLE_SECRET_PREFIX = env_str("TRACKABLE_SECRET_PREFIX", "LN")
    TRACKABLE_SISTER_PREFIX = env_str("TRACKABLE_SISTER_PREFIX", "GT")
    TRACKABLE_FOREIGN_PREFIX = env_str("TRACKABLE_FOREIGN_PREFIX", "TB")
    TRACKABLE_FOREIGN_HELP_URL = env_str("TRACKABLE_FOREIGN_HELP_URL", "/help/foreign-codes")
    TRACKABLE_PUBLIC_CODE_LENGTH = env_int("TRACKABLE_PUBLIC_CODE_LENGTH", 6)
    TRACKABLE_SECRET_CODE_LENGTH = env_int("TRACKABLE_SECRET_CODE_LENGTH", 8)
    TRACKABLE_QR_TOKEN_LENGTH = env_int("TRACKABLE_QR_TOKEN_LENGTH", 100)
    TRACKABLES_PER_GROUP_MAX = env_int("TRACKABLES_PER_GROUP_MAX", 100)
    # Area watches one account may keep (docs/contract/events.md, Events and notifications).
    AREA_WATCHES_PER_USER_MAX = env_int("AREA_WATCHES_PER_USER_MAX", 20)
    # Trackables one account may create in an hour (429 past it), single or in groups;
    # keep it at least TRACKABLES_PER_GROUP_MAX so that one full group still fits.
    TRACKABLES_PER_USER_PER_HOUR = env_int("TRACKABLES_PER_USER_PER_HOUR", 200)
    # Comments and journey stops may say when the item was really seen (`observedUtc`, sent
    # later by a phone that was offline): older than this many days is refused.
    TRACKABLE_OBSERVED_MAX_AGE_DAYS = env_int("TRACKABLE_OBSERVED_MAX_AGE_DAYS", 365)
    # Printable label sheets (POST /api/trackables/labels) per client address, Flask-Limiter
    # notation: each draws up to 200 QR codes into a PDF, far more work than a read.
    RATE_LIMIT_TRACKABLE_LABELS = env_str("RATE_LIMIT_TRACKABLE_LABELS", "30 per hour")
    # --- access sessions for secret codes (decisions: Access sessions for secret codes) ---
    # The signed HttpOnly SameSite=Lax cookie holding only a random client id; its sessions
    # are rows in trackable_access_sessions. Secure: None means "when ENV_NAME is production".
    # The website pages' own cookie (Flask's signed session, no expiry: it ends with the
    # browser session): their forms' CSRF token, one-time notices and the name of a
    # finder's last find. Secure follows TRACKABLE_ACCESS_COOKIE_SECURE.
    SESSION_COOKIE_NAME = "ln_pages"
    SESSION_COOKIE_SAMESITE = "Lax"
    SESSION_COOKIE_HTTPONLY = True
    # A website sign-in (app.web.account) lasts at most this long, then asks again.
    SESSION_MAX_AGE_HOURS = env_float("SESSION_MAX_AGE_HOURS", 168.0)
    # CSRF (Flask-WTF) guards the pages' forms only: the API takes bearer tokens.
    WTF_CSRF_CHECK_DEFAULT = False
    # The pages send no Referer (Referrer-Policy: no-referrer), so Flask-WTF's Referer
    # check on HTTPS would refuse every form: the token and SameSite=Lax guard them.
    WTF_CSRF_SSL_STRICT = False
    # A form's token lasts as long as the pages' session cookie (a browser session), not
    # Flask-WTF's default hour: a finder may write a long comment with the page left open.
    # The token is still bound to that cookie, which another site cannot read or send
    # cross-site with a POST (SameSite=Lax).
    WTF_CSRF_TIME_LIMIT = None
    TRACKABLE_ACCESS_COOKIE_NAME = env_str("TRACKABLE_ACCESS_COOKIE_NAME", "ln_trackable_access")
    TRACKABLE_ACCESS_COOKIE_MAX_AGE_DAYS = env_int("TRACKABLE_ACCESS_COOKIE_MAX_AGE_DAYS", 30)
    TRACKABLE_ACCESS_COOKIE_SECURE: bool | None = (
        env_bool("TRACKABLE_ACCESS_COOKIE_SECURE", True)
        if os.environ.get("TRACKABLE_ACCESS_COOKIE_SECURE")
        else None
    )
    # --- end access sessions --------------------------------------------------------------

    # Images (decisions: Images)
    IMAGE_ROOT = Path(env_str("IMAGE_ROOT", str(INSTANCE_DIR / "images")))
    IMAGE_MAX_BYTES = env_int("IMAGE_MAX_BYTES", 20 * 1024 * 1024)
    IMAGE_MAX_PIXELS = env_int("IMAGE_MAX_PIXELS", 60_000_000)
    # Peak memory one upload's decoding and resizing may take, estimated from the header
    # before any pixel is decoded (app.storage.image_headers). 640 MiB takes 60-megapixel
    # JPEG, HEIC, RGB(A) and palette PNG (at most about 590 MiB) and refuses the costlier
    # shapes: grey-with-alpha or colour-profiled RGBA PNGs near 60 megapixels, WebP over 40.
    IMAGE_MAX_DECODE_BYTES = env_int("IMAGE_MAX_DECODE_BYTES", 640 * 1024 * 1024)
    # Longest side over shortest: 50 keeps every panorama and phone scrolling screenshot
    # (rarely beyond 1:30); past it even the large variant is a line.
    IMAGE_MAX_ASPECT_RATIO = env_float("IMAGE_MAX_ASPECT_RATIO", 50.0)
    # Images one parent (profile, note, team, trackable, group) may hold: 400 (code
    # image_limit_reached past it); images one account may upload in 24 hours (429).
    IMAGES_PER_PARENT_MAX = env_int("IMAGES_PER_PARENT_MAX", 400)
    IMAGES_PER_USER_PER_DAY = env_int("IMAGES_PER_USER_PER_DAY", 500)
    # Finders' photos (images of a trackable comment or journey stop): at most this many
    # per comment or stop (400 image_limit_reached), a few shots of one find. An anonymous
    # finder has no account to count against: its photos count per access session and per
    # network (IPv4 /24, IPv6 /48) in any window of FINDER_PHOTOS_WINDOW_MINUTES (429
    # finder_photo_limit_reached), kept in the database so every process shares them.
    FINDER_PHOTOS_PER_ENTRY = env_int("FINDER_PHOTOS_PER_ENTRY", 4)
    FINDER_PHOTOS_PER_SESSION = env_int("FINDER_PHOTOS_PER_SESSION", 12)
    FINDER_PHOTOS_PER_NETWORK = env_int("FINDER_PHOTOS_PER_NETWORK", 60)
    FINDER_PHOTOS_WINDOW_MINUTES = env_int("FINDER_PHOTOS_WINDOW_MINUTES", 1440)
    # Where variants are stored: "local" (IMAGE_ROOT) or "s3" (an S3-compatible bucket;
    # credentials from boto3's usual chain: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, ...).
    IMAGE_STORAGE = env_str("IMAGE_STORAGE", "local")
    IMAGE_S3_BUCKET = env_str("IMAGE_S3_BUCKET", "")
    IMAGE_S3_PREFIX = env_str("IMAGE_S3_PREFIX", "")
    IMAGE_S3_ENDPOINT_URL = env_str("IMAGE_S3_ENDPOINT_URL", "")  # MinIO, Ceph, R2, ...
    IMAGE_S3_REGION = env_str("IMAGE_S3_REGION", "us-east-1")
    # How /Images/... hands out a file once its parent's visibility is checked (docs/operations.md,
    # Images from storage). With s3: a 302 to a presigned URL that lives this many seconds,
    # so a hidden or deleted image stops being served at once (off: the app streams the
    # bytes, for clients that cannot reach the store). The URL is signed for
    # IMAGE_S3_PUBLIC_ENDPOINT when set: the store's address as clients reach it, where the
    # app uses an internal one (IMAGE_S3_ENDPOINT_URL).
    IMAGE_S3_REDIRECT = env_bool("IMAGE_S3_REDIRECT", True)
    IMAGE_PRESIGNED_SECONDS = env_int("IMAGE_PRESIGNED_SECONDS", 30)
    IMAGE_S3_PUBLIC_ENDPOINT = env_str("IMAGE_S3_PUBLIC_ENDPOINT", "")
    # Local storage behind nginx: an empty body with `X-Accel-Redirect: <prefix><key>`,
    # and nginx sends the file from an `internal` location of that prefix whose alias is
    # IMAGE_ROOT (e.g. /_protected_images/). Empty: the app streams the bytes.
    IMAGE_ACCEL_REDIRECT_PREFIX = env_str("IMAGE_ACCEL_REDIRECT_PREFIX", "")

    # Maps and privacy (contract: System)
    MAP_TILE_ROOT = Path(env_str("MAP_TILE_ROOT", str(INSTANCE_DIR / "tiles")))
    HOSTED_MAP_TILE_URL_TEMPLATE = "/maps/tiles/{z}/{x}/{y}.png"
    # A full raster tile set as one MBTiles file (served where MAP_TILE_ROOT has no tile).
    MAP_TILE_MBTILES = env_str("MAP_TILE_MBTILES", "")
    # The built-in base map (zoom 0-10, drawn on first request) and where it is kept.
    MAP_BASE_TILES = env_bool("MAP_BASE_TILES", True)
    MAP_TILE_CACHE = Path(env_str("MAP_TILE_CACHE", str(INSTANCE_DIR / "tile-cache")))
    # The highest zoom of the website's journey maps: the server-drawn map fits the stops
    # at most this close, the pannable one zooms in no further (10: the base map's; raise
    # it with a full tile set).
    MAP_PAGE_MAX_ZOOM = env_int("MAP_PAGE_MAX_ZOOM", 10)
    # The tiles' credit shown on the journey maps: the built-in base map's sources; an
    # operator serving other tiles names theirs (plain text).
    MAP_TILE_ATTRIBUTION = env_str("MAP_TILE_ATTRIBUTION", "Natural Earth, GeoNames")
    GOOGLE_MAPS_API_KEY = env_str("GOOGLE_MAPS_API_KEY", "")
    OPENSTREETMAP_ENABLED = env_bool("OPENSTREETMAP_ENABLED", True)
    DEFAULT_EXPERIENCE_MODE = env_str("DEFAULT_EXPERIENCE_MODE", "latest_and_greatest")
    EXPERIENCE_MODE_COOKIE = "experience_mode"
    MAP_SOURCE_COOKIE = "map_source"

    # Mobile client compatibility gating (contract: Versioning)
    ANDROID_MIN_DISPLAY_VERSION = env_str("ANDROID_MIN_DISPLAY_VERSION", "1.0.0")
    ANDROID_MIN_VERSION_CODE = env_str("ANDROID_MIN_VERSION_CODE", "1")
    ANDROID_COMPATIBILITY_MESSAGE = env_str(
        "ANDROID_COMPATIBILITY_MESSAGE",
        "This version of the app is too old for sync and team management. Please update.",
    )
    ANDROID_BETA_PAGE_URL = env_str("ANDROID_BETA_PAGE_URL", "/beta/android")
    ANDROID_BETA_DISPLAY_VERSION = env_str("ANDROID_BETA_DISPLAY_VERSION", "1.0.0")
    ANDROID_BETA_VERSION_CODE = env_str("ANDROID_BETA_VERSION_CODE", "1")
    ANDROID_BETA_RELEASE_NOTES = env_str("ANDROID_BETA_RELEASE_NOTES", "")
    ANDROID_BETA_DOWNLOAD_URL = env_str("ANDROID_BETA_DOWNLOAD_URL", "")

    # Client IP and geolocation (integrations/geo.py)
    TRUSTED_PROXIES = env_list("TRUSTED_PROXIES")  # addresses or CIDR ranges
    DEV_FALLBACK_IP = env_str("DEV_FALLBACK_IP", "")  # development only: stands in for a local IP
    GEOIP_PROVIDER = env_str("GEOIP_PROVIDER", "builtin")  # builtin | maxmind
    GEOIP_DATABASE_PATH = env_str("GEOIP_DATABASE_PATH", "")
    GEOCODER_PROVIDER = env_str("GEOCODER_PROVIDER", "builtin")  # builtin | http
    GEOCODER_HTTP_URL = env_str("GEOCODER_HTTP_URL", "")
    GEOCODER_MAX_DISTANCE_KM = env_float("GEOCODER_MAX_DISTANCE_KM", 50.0)

    # Outbound HTTP (external link verification)
    OUTBOUND_TIMEOUT_SECONDS = env_float("OUTBOUND_TIMEOUT_SECONDS", 5.0)
    OUTBOUND_MAX_BYTES = env_int("OUTBOUND_MAX_BYTES", 512 * 1024)
    OUTBOUND_MAX_REDIRECTS = env_int("OUTBOUND_MAX_REDIRECTS", 5)
    OUTBOUND_ALLOWED_PORTS = [int(p) for p in env_list("OUTBOUND_ALLOWED_PORTS", "80,443")]
    OUTBOUND_ALLOW_LOOPBACK = False  # tests only; never from the environment
    LINK_SUPPORT_URL = env_str("LINK_SUPPORT_URL", "/help/external-links")
    OUTBOUND_MAX_URL_LENGTH = env_int("OUTBOUND_MAX_URL_LENGTH", 2048)  # external link URLs
    OUTBOUND_CA_BUNDLE = env_str("OUTBOUND_CA_BUNDLE", "")  # empty: requests' certifi bundle
    LINK_DESCRIPTION_MAX_LENGTH = env_int("LINK_DESCRIPTION_MAX_LENGTH", 200)  # page title cap
    # Each verification makes outbound requests; per client IP, Flask-Limiter notation.
    RATE_LIMIT_LINK_VERIFY = env_str("RATE_LIMIT_LINK_VERIFY", "30 per minute")

    # Metrics (app.web.metrics): GET /metrics answers a scraper sending this as
    # `Authorization: Bearer ...` (at least 32 characters in production); unset, it is 404
    # on the service's address.
    METRICS_TOKEN = env_str("METRICS_TOKEN", "")
    # A second address gunicorn listens on (`HOST:PORT` or `unix:PATH`, not the service's
    # port), where /metrics needs no token and nothing but /metrics and the health probes
    # is served: keep it where only the monitoring can reach it. gunicorn.conf.py reads it.
    METRICS_BIND = env_str("METRICS_BIND", "")
    # Error reporting (app.platform.telemetry, the `sentry` extra): set, the 500s
    # are reported to this Sentry DSN, scrubbed like the logs and of personal data. The
    # environment defaults to APP_ENV; performance traces are off at 0 (0.0 to 1.0).
    SENTRY_DSN = env_str("SENTRY_DSN", "")
    SENTRY_ENVIRONMENT = env_str("SENTRY_ENVIRONMENT", "")
    SENTRY_TRACES_SAMPLE_RATE = env_float("SENTRY_TRACES_SAMPLE_RATE", 0.0)
    # Tracing (the `otel` extra): on when the standard OTEL_EXPORTER_OTLP_ENDPOINT
    # names a collector (OTLP/HTTP), or with OTEL_TRACING=true (the exporter's default,
    # http://localhost:4318). The exporter reads the other OTEL_* variables itself.
    OTEL_EXPORTER_OTLP_ENDPOINT = env_str("OTEL_EXPORTER_OTLP_ENDPOINT", "")
    OTEL_TRACING = env_bool("OTEL_TRACING", False)

    # Webhooks (docs/contract/webhooks.md, Webhooks). Deliveries go out under the
    # outbound rules above (checked addresses), with their own budget and answer cap.
    WEBHOOKS_PER_OWNER = env_int("WEBHOOKS_PER_OWNER", 20)  # per user, and per team
    WEBHOOK_TIMEOUT_SECONDS = env_float("WEBHOOK_TIMEOUT_SECONDS", 5.0)
    WEBHOOK_RESPONSE_MAX_BYTES = env_int("WEBHOOK_RESPONSE_MAX_BYTES", 4096)
    WEBHOOK_ALLOWED_PORTS = [int(p) for p in env_list("WEBHOOK_ALLOWED_PORTS", "80,443")]
    WEBHOOK_DELIVERIES_KEEP_DAYS = env_int("WEBHOOK_DELIVERIES_KEEP_DAYS", 30)
    WEBHOOK_DISABLE_AFTER_DAYS = env_float("WEBHOOK_DISABLE_AFTER_DAYS", 3.0)  # failing
    WEBHOOK_SECRET_OVERLAP_HOURS = env_float("WEBHOOK_SECRET_OVERLAP_HOURS", 24.0)
    # Test messages and redeliveries an account may ask for per hour, and one webhook
    # (429 `webhook_sends_limited` past either).
    WEBHOOK_MANUAL_SENDS_PER_HOUR = env_int("WEBHOOK_MANUAL_SENDS_PER_HOUR", 60)
    WEBHOOK_MANUAL_SENDS_PER_WEBHOOK_PER_HOUR = env_int(
        "WEBHOOK_MANUAL_SENDS_PER_WEBHOOK_PER_HOUR", 20
    )
    # Test rigs only (a receiver on 127.0.0.1); a production start refuses it.
    WEBHOOKS_ALLOW_LOOPBACK = env_bool("WEBHOOKS_ALLOW_LOOPBACK", False)

    # Personal data export (docs/contract/privacy.md, Data export): exports one
    # account may ask for in any 24 hours (429 past it), how long a finished one may be
    # downloaded, and how long its record stays after that (then GET answers 404).
    EXPORTS_PER_USER_PER_DAY = env_int("EXPORTS_PER_USER_PER_DAY", 3)
    EXPORT_DOWNLOAD_HOURS = env_float("EXPORT_DOWNLOAD_HOURS", 24.0)
    EXPORT_KEEP_DAYS = env_float("EXPORT_KEEP_DAYS", 7.0)
    # The image files put into one export, in all (the largest kept size of each); past
    # it images are listed without their file (the website addresses still work).
    EXPORT_IMAGE_FILES_MAX_BYTES = env_int("EXPORT_IMAGE_FILES_MAX_BYTES", 512 * 1024 * 1024)
    # Where finished exports are kept until they expire: "local" (EXPORT_ROOT; shared by
    # every machine that serves downloads) or "s3"; empty follows IMAGE_STORAGE. On S3 the
    # bucket is EXPORT_S3_BUCKET (empty: IMAGE_S3_BUCKET) under EXPORT_S3_PREFIX, with
    # the image store's endpoint, region and credentials.
    EXPORT_STORAGE = env_str("EXPORT_STORAGE", "")
    EXPORT_ROOT = Path(env_str("EXPORT_ROOT", str(INSTANCE_DIR / "exports")))
    EXPORT_S3_BUCKET = env_str("EXPORT_S3_BUCKET", "")
    EXPORT_S3_PREFIX = env_str("EXPORT_S3_PREFIX", "exports")

    # Compliance (contract: Compliance; docs/contract/compliance.md, Compliance)
    # Reports and error posts per client IP (Flask-Limiter notation), signed in or not.
    RATE_LIMIT_COMPLIANCE = env_str("RATE_LIMIT_COMPLIANCE", "20 per hour")
    # The same client reporting the same content again within this window gets its report.
    REPORT_DUPLICATE_WINDOW_MINUTES = env_int("REPORT_DUPLICATE_WINDOW_MINUTES", 60)
    # Most reports the super-admin list returns (newest first; X-Result-Truncated beyond).
    REPORT_LIST_CAP = env_int("REPORT_LIST_CAP", 500)
    # Unexpected 500s: identical failures of one client within the window share a ticket,
    # and a client gets at most this many new tickets in it (then its latest is reused).
    ERROR_TICKET_WINDOW_MINUTES = env_int("ERROR_TICKET_WINDOW_MINUTES", 10)
    ERROR_TICKETS_PER_CLIENT = env_int("ERROR_TICKETS_PER_CLIENT", 10)

    # GPX
    GPX_MAX_BYTES = env_int("GPX_MAX_BYTES", 10 * 1024 * 1024)
    # Each imported waypoint becomes a note in one request (a sync worker): keep it bounded.
    GPX_MAX_WAYPOINTS = env_int("GPX_MAX_WAYPOINTS", 5000)
    # The work of reading one file: elements of any kind, and CPU seconds of the parse.
    GPX_MAX_ELEMENTS = env_int("GPX_MAX_ELEMENTS", 200_000)
    GPX_MAX_PARSE_SECONDS = env_float("GPX_MAX_PARSE_SECONDS", 2.0)

    # Security headers (app/platform/headers.py). CORS: comma-separated exact origins of third-party
    # web clients (e.g. "https://app.example.org"); empty: CORS off. HSTS: production only.
    CORS_ALLOWED_ORIGINS = env_str("CORS_ALLOWED_ORIGINS", "")
    HSTS_MAX_AGE_SECONDS = env_int("HSTS_MAX_AGE_SECONDS", 31_536_000)

    # Logging
    LOG_FORMAT = env_str("LOG_FORMAT", "plain")  # plain | json
    LOG_LEVEL = env_str("LOG_LEVEL", "INFO")

    # API documentation (flask-smorest)
    API_TITLE = "Location Notes Service"
    API_VERSION = "1.0"
    OPENAPI_VERSION = "3.1.0"
    OPENAPI_URL_PREFIX = "/api"
    OPENAPI_JSON_PATH = "openapi.json"
    OPENAPI_SWAGGER_UI_PATH = "docs"
    OPENAPI_SWAGGER_UI_URL = "/api/docs/assets/"

import logging
import sys
from logging.config import fileConfig

from alembic import context
from flask import current_app

from app.models.note_search import compared_with_models
from app.platform.logs import JsonFormatter

# this is the Alembic Config object, which provides
# access to the values within the .ini file in use.
config = context.config

# Interpret the config file for Python logging.
# This line sets up loggers basically.
# Keep the application's loggers working when migrations run inside the app (tests).
if current_app.config.get("LOG_FORMAT") == "json":
    # The same JSON lines as the app's and gunicorn's (app.platform.logs), on stderr.
    _json = logging.StreamHandler(sys.stderr)
    _json.setFormatter(JsonFormatter())
    logging.getLogger("alembic").handlers = [_json]
    logging.getLogger("alembic").setLevel(logging.INFO)
else:
    fileConfig(config.config_file_name, disable_existing_loggers=False)
logger = logging.getLogger("alembic.env")
LOCK_TIMEOUT = "5s"  # PostgreSQL: how long any statement of a migration waits for a lock


def get_engine():
    return current_app.extensions["migrate"].db.engine


def get_engine_url():
    try:
        return get_engine().url.render_as_string(hide_password=False).replace("%", "%%")
    except AttributeError:
        return str(get_engine().url).replace("%", "%%")


# add your model's MetaData object here
# for 'autogenerate' support
# from myapp import mymodel
# target_metadata = mymodel.Base.metadata
config.set_main_option("sqlalchemy.url", get_engine_url())
target_db = current_app.extensions["migrate"].db

# other values from the config, defined by the needs of env.py,
# can be acquired:
# my_important_option = config.get_main_option("my_important_option")
# ... etc.


def get_metadata():
    if hasattr(target_db, "metadatas"):
        return target_db.metadatas[None]
    return target_db.metadata


def run_migrations_offline():
    """Run migrations in 'offline' mode.

    This configures the context with just a URL
    and not an Engine, though an Engine is acceptable
    here as well.  By skipping the Engine creation
    we don't even need a DBAPI to be available.

    Calls to context.execute() here emit the given string to the
    script output.

    """
    url = config.get_main_option("sqlalchemy.url")
    context.configure(
        url=url,
        target_metadata=get_metadata(),
        literal_binds=True,
        include_name=compared_with_models,
    )

    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online():
    """Run migrations in 'online' mode.

    In this scenario we need to create an Engine
    and associate a connection with the context.

    """

    # this callback is used to prevent an auto-migration from being generated
    # when there are no changes to the schema
    # reference: http://alembic.zzzcomputing.com/en/latest/cookbook.html
    def process_revision_directives(context, revision, directives):
        if getattr(config.cmd_opts, "autogenerate", False):
            script = directives[0]
            if script.upgrade_ops.is_empty():
                directives[:] = []
                logger.info("No changes in schema detected.")

    conf_args = current_app.extensions["migrate"].configure_args
    if conf_args.get("process_revision_directives") is None:
        conf_args["process_revision_directives"] = process_revision_directives

    connectable = get_engine()

    with connectable.connect() as connection:
        sqlite = connection.dialect.name == "sqlite"
        if sqlite:
            # Batch mode rebuilds a SQLite table by copying it and dropping the original;
            # with foreign keys on, dropping a referenced table would run its ON DELETE
            # actions. Off while migrating (outside a transaction, where the pragma works),
            # then every key is checked before the connection goes back on.
            connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
            connection.commit()
        elif connection.dialect.name == "postgresql":
            # The app's statement timeout bounds a request (app.platform.database.engine_options);
            # a migration rewriting a large table may take longer, and must not be cut off.
            connection.exec_driver_sql("SET statement_timeout = 0")
            # A migration waiting for a lock (a long request holding the table) would hold
            # every request queued behind its own lock request: it gives up instead, and is
            # run again (docs/operations.md, "Upgrading").
            connection.exec_driver_sql(f"SET lock_timeout = '{LOCK_TIMEOUT}'")
            connection.commit()
        # The search index's objects are not in the models (app/models/note_search.py):
        # autogenerate must not offer to drop them.
        conf_args.setdefault("include_name", compared_with_models)
        context.configure(connection=connection, target_metadata=get_metadata(), **conf_args)

        with context.begin_transaction():
            context.run_migrations()
        if sqlite:
            broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
            connection.exec_driver_sql("PRAGMA foreign_keys=ON")
            connection.commit()
            if broken:
                raise RuntimeError(f"migrations left broken foreign keys: {broken[:10]}")


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()

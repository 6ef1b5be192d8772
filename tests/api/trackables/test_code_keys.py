"""The code key is never silently wrong (README: the code key): the database keeps the
key chain's fingerprints, a start with another key is refused, and a key is replaced by
wrapping the stored hashes while every printed code keeps working. Real codes, made and
looked up through HTTP, on both databases."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import select

from app import InsecureConfiguration, create_app
from app.extensions import db
from app.models.trackable import TrackableCode
from app.services import trackables
from tests.conftest import ApiClient, make_test_app
from tests.factories import make_user
from tests.racing import BARRIER_SECONDS, LockBarrier, stop_after

OLD = "old-code-key-" + "o" * 40
NEW = "new-code-key-" + "n" * 40
NEWER = "newer-code-key-" + "w" * 40
BYO = "Falcon-Nest_7"


def keyed_app(database_url, tmp_path, key, previous=()):
    return make_test_app(
        database_url, tmp_path, TRACKABLE_CODE_KEY=key, TRACKABLE_CODE_KEYS_PREVIOUS=list(previous)
    )


def settings_of(app):
    return trackables.CodeSettings.from_config(app.config)


def found(app, code):
    """Whether `code` unlocks a trackable through the app's lookup route."""
    response = ApiClient(app.test_client()).post("/api/trackables/lookup", json={"code": code})
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.get_json()["found"]


def rotate(app, *options):
    """`flask trackables rotate-code-key` run by `app` (the test's own app context is
    active, and a command runs in the current one)."""
    with app.app_context():
        result = app.test_cli_runner().invoke(args=["trackables", "rotate-code-key", *options])
        db.session.remove()
    assert result.exit_code == 0, result.output
    return result.output


def in_context(app, work):
    with app.app_context():
        try:
            return work()
        finally:
            db.session.remove()


@pytest.fixture
def printed(app, database_url, tmp_path):
    """Codes printed under the old key: a trackable with a bring-your-own secret, a
    group of three, and their QR tokens (the lookup's codes; their public codes are
    stored and wrapped too); the old-key app and the codes."""
    old = keyed_app(database_url, tmp_path / "old", OLD)
    user = make_user("olga")
    db.session.commit()
    codes = []
    with old.app_context():
        api = ApiClient(old.test_client()).as_user(user)
        single = api.post("/api/trackables", json={"name": "Bug", "secretCode": BYO})
        group = api.post("/api/trackables/groups", json={"name": "Batch", "trackableCount": 3})
        db.session.remove()
    assert single.status_code == 201, single.get_data(as_text=True)
    assert group.status_code == 201, group.get_data(as_text=True)
    for item in single.get_json()["items"] + group.get_json()["items"]:
        codes += [item["secretCode"], item["scanUrl"].rsplit("/", 1)[1]]
    in_context(old, lambda: trackables.check_code_keys(settings_of(old)))  # first start
    db.session.rollback()
    return old, codes


def test_a_start_with_another_code_key_is_refused_and_says_what_would_break(
    printed, database_url, tmp_path
):
    with pytest.raises(InsecureConfiguration) as error:
        create_app(
            {
                "ENV_NAME": "development",
                "SQLALCHEMY_DATABASE_URI": database_url,
                "TRACKABLE_CODE_KEY": NEW,
                "DEV_KEYS_FILE": tmp_path / "keys.json",
                "RATELIMIT_STORAGE_URI": "memory://",
            }
        )
    message = str(error.value)
    assert "TRACKABLE_CODE_KEY" in message
    assert "printed would be answered as a miss" in message
    assert "rotate-code-key" in message


def test_a_start_with_the_recorded_key_is_accepted(printed, database_url, tmp_path):
    app = create_app(
        {
            "ENV_NAME": "development",
            "SQLALCHEMY_DATABASE_URI": database_url,
            "TRACKABLE_CODE_KEY": OLD,
            "DEV_KEYS_FILE": tmp_path / "keys.json",
            "RATELIMIT_STORAGE_URI": "memory://",
        }
    )
    assert app.config["TRACKABLE_CODE_KEY"] == OLD


def test_dropping_the_newest_key_after_a_rotation_is_refused(printed, database_url, tmp_path):
    rotated = keyed_app(database_url, tmp_path / "new", NEW, [OLD])
    in_context(rotated, lambda: trackables.check_code_keys(settings_of(rotated)))
    old, _codes = printed
    with pytest.raises(trackables.CodeKeyMismatch, match="only the first 1 are configured"):
        in_context(old, lambda: trackables.check_code_keys(settings_of(old)))


def test_every_printed_code_works_before_during_and_after_the_rotation(
    printed, database_url, tmp_path
):
    old, codes = printed
    rotated = keyed_app(database_url, tmp_path / "new", NEW, [OLD])
    settings = settings_of(rotated)
    state = in_context(rotated, lambda: trackables.check_code_keys(settings))
    assert (state.stored, state.added) == (1, 1)
    assert all(found(rotated, code) for code in codes)  # nothing wrapped yet

    def one_batch():
        wrapped = trackables.wrap_batch(settings, 5)
        db.session.commit()
        return wrapped

    assert in_context(rotated, one_batch) == 5
    assert in_context(rotated, lambda: trackables.unwrapped(settings)) == 12 - 5
    assert all(found(rotated, code) for code in codes)  # half wrapped

    assert "done: 0 left under older keys" in rotate(rotated)
    assert all(found(rotated, code) for code in codes)  # all wrapped
    # The old key alone verifies no printed code any more.
    assert not any(found(old, code) for code in codes)
    generations = in_context(
        rotated, lambda: set(db.session.scalars(select(TrackableCode.key_generation)))
    )
    assert generations == {1}


def test_a_bring_your_own_secret_not_yet_wrapped_still_counts_as_taken(
    printed, database_url, tmp_path
):
    rotated = keyed_app(database_url, tmp_path / "new", NEW, [OLD])
    in_context(rotated, lambda: trackables.check_code_keys(settings_of(rotated)))
    user = in_context(rotated, lambda: make_user("bert").id)
    with rotated.app_context():
        from app.models.user import User

        api = ApiClient(rotated.test_client()).as_user(db.session.get(User, user))
        taken = api.post("/api/trackables", json={"name": "Twin", "secretCode": BYO.lower()})
        free = api.post("/api/trackables", json={"name": "Own", "secretCode": "Heron-Lake_42"})
        db.session.remove()
    assert taken.status_code == 400, taken.get_data(as_text=True)
    assert "secretCode" in taken.get_json()["errors"]
    assert free.status_code == 201, free.get_data(as_text=True)
    assert found(rotated, "Heron-Lake_42")


def test_a_second_rotation_wraps_codes_of_both_older_generations(printed, database_url, tmp_path):
    _old, codes = printed
    rotated = keyed_app(database_url, tmp_path / "new", NEW, [OLD])
    assert "wrapped 12 of 12" in rotate(rotated, "--batch-size", "4")
    newest = keyed_app(database_url, tmp_path / "newer", NEWER, [OLD, NEW])
    rotate(newest)
    assert all(found(newest, code) for code in codes)
    assert not any(found(rotated, code) for code in codes)


def test_two_starts_at_once_on_a_new_database_record_one_key(
    app, database_url, tmp_path, monkeypatch
):
    """The web server and the job worker start at once on a database without a key, each
    with another key (a mistake): one records its key; the other waits for it, reads it,
    and is refused. Never a database error, never a key written over another. Each start
    stops after the read that decides (with the lock, the second waits before it)."""
    starts = {"web": keyed_app(database_url, tmp_path / "web", OLD)}
    starts["worker"] = keyed_app(database_url, tmp_path / "worker", NEW)
    barrier = LockBarrier(2, timeout=BARRIER_SECONDS, database_url=database_url)
    stop_after(monkeypatch, "app.services.trackables.codes.code_keys._stored_chain", barrier)
    db.session.commit()
    together = threading.Barrier(2, timeout=30)
    outcomes: dict[str, str] = {}

    def start(name: str) -> None:
        together.wait()
        started = starts[name]
        try:
            in_context(started, lambda: trackables.check_code_keys(settings_of(started)))
            outcomes[name] = "recorded"
        except trackables.CodeKeyMismatch:
            outcomes[name] = "refused"
        except Exception as error:  # a database error: the race was lost, not decided
            outcomes[name] = repr(error)

    threads = [threading.Thread(target=start, args=(name,)) for name in starts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(outcomes.values()) == ["recorded", "refused"], outcomes
    monkeypatch.undo()
    winner = next(name for name, outcome in outcomes.items() if outcome == "recorded")
    again = in_context(
        starts[winner], lambda: trackables.check_code_keys(settings_of(starts[winner]))
    )
    assert (again.stored, again.added) == (1, 0)

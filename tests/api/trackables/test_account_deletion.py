"""DELETE /api/account and team deletion: what becomes of trackables, groups, watches,
unlocks and journey stops (services.trackables.accounts). No row names the user after."""

from __future__ import annotations

import pytest
from sqlalchemy import or_, select

from app.extensions import db
from app.models.trackable import (
    JourneyStop,
    Trackable,
    TrackableCode,
    TrackableComment,
    TrackableGroup,
    TrackableGroupWatch,
    TrackableUnlock,
    TrackableWatch,
)
from tests.factories import (
    count_rows,
    make_group,
    make_note,
    make_team,
    make_trackable,
    make_user,
    unlock_trackable,
)


def delete_account(api, user):
    response = api.as_user(user).delete("/api/account")
    assert response.status_code == 200, response.get_data(as_text=True)


def stop(trackable, user=None, note=None):
    row = JourneyStop(
        trackable_id=trackable.id,
        coordinate_id=trackable.id,
        latitude=1.0,
        longitude=2.0,
        created_by_user_id=user.id if user else None,
        note_id=note.id if note else None,
    )
    db.session.add(row)
    db.session.commit()
    return row


@pytest.fixture
def ada(app):
    return make_user("ada")


def test_personal_trackables_go_with_their_codes_stops_and_watches(api, ada):
    mine = make_trackable(ada)
    other = make_user()
    stop(mine, other)
    db.session.add(TrackableWatch(user_id=other.id, trackable_id=mine.id))
    db.session.commit()
    mine_id = mine.id
    delete_account(api, ada)
    assert db.session.get(Trackable, mine_id) is None
    for model in (TrackableCode, TrackableWatch, JourneyStop):
        assert count_rows(model, model.trackable_id == mine_id) == 0


def test_unactivated_trackables_the_user_created_go_too(api, ada):
    created_id = make_trackable(None, created_by_user_id=ada.id).id
    delete_account(api, ada)  # expires the rows loaded here (they are read again)
    assert db.session.get(Trackable, created_id) is None


def test_a_trackable_someone_else_activated_stays_without_its_creator(api, ada):
    finder = make_user()
    found = make_trackable(finder, created_by_user_id=ada.id)
    delete_account(api, ada)
    kept = db.session.get(Trackable, found.id)
    assert kept is not None
    assert (kept.owner_user_id, kept.created_by_user_id) == (finder.id, None)


def test_team_trackables_stay_with_the_team_and_pass_to_an_admin(api, ada):
    admin = make_user()
    team = make_team(admin, members=(ada,))
    team_owned = make_trackable(ada, team_id=team.id)
    delete_account(api, ada)
    kept = db.session.get(Trackable, team_owned.id)
    assert (kept.owner_user_id, kept.team_id) == (admin.id, team.id)


def test_the_users_watches_unlocks_and_stops_go_others_stay(api, ada):
    other = make_user()
    theirs = make_trackable(other)
    unlock_trackable(ada, theirs)
    db.session.add(TrackableWatch(user_id=ada.id, trackable_id=theirs.id))
    group = make_group(other)
    db.session.add(TrackableGroupWatch(user_id=ada.id, group_id=group.id))
    db.session.commit()
    own_stop, other_stop = stop(theirs, ada).id, stop(theirs, other).id
    delete_account(api, ada)
    assert count_rows(TrackableUnlock, TrackableUnlock.user_id == ada.id) == 0
    assert count_rows(TrackableWatch, TrackableWatch.user_id == ada.id) == 0
    assert count_rows(TrackableGroupWatch, TrackableGroupWatch.user_id == ada.id) == 0
    assert db.session.get(JourneyStop, own_stop) is None
    assert db.session.get(JourneyStop, other_stop) is not None


def test_stops_at_the_users_notes_stay_without_the_note(api, ada):
    other = make_user()
    theirs = make_trackable(other)
    note = make_note(ada)
    kept = stop(theirs, other, note)
    delete_account(api, ada)
    db.session.expire_all()
    assert db.session.get(JourneyStop, kept.id).note_id is None


def test_a_personal_group_is_deleted_and_its_items_leave_it(api, ada):
    group = make_group(ada)
    group_id = group.id
    finder = make_user()
    item = make_trackable(finder, group_id=group_id)
    delete_account(api, ada)
    assert db.session.get(TrackableGroup, group_id) is None
    assert db.session.get(Trackable, item.id).group_id is None


def test_a_team_group_stays_with_its_team(api, ada):
    admin = make_user()
    team = make_team(admin, members=(ada,))
    group = make_group(ada, team_id=team.id)
    delete_account(api, ada)
    kept = db.session.get(TrackableGroup, group.id)
    assert (kept.owner_user_id, kept.team_id) == (None, team.id)


def test_no_trackable_row_names_the_user_after_deletion(api, ada):
    other = make_user()
    team = make_team(other, members=(ada,))
    make_trackable(ada)
    make_trackable(ada, team_id=team.id)
    make_trackable(other, created_by_user_id=ada.id)
    make_group(ada)
    unlock_trackable(ada, make_trackable(other))
    db.session.add(
        TrackableComment(trackable_id=make_trackable(other).id, author_user_id=ada.id, body="Hi")
    )
    db.session.commit()
    delete_account(api, ada)
    for model, columns in (
        (Trackable, ("owner_user_id", "created_by_user_id")),
        (TrackableGroup, ("owner_user_id",)),
        (JourneyStop, ("created_by_user_id",)),
        (TrackableUnlock, ("user_id",)),
        (TrackableWatch, ("user_id",)),
        (TrackableGroupWatch, ("user_id",)),
        (TrackableComment, ("author_user_id",)),
    ):
        where = or_(*(getattr(model, column) == ada.id for column in columns))
        assert db.session.scalars(select(model).where(where)).all() == [], model.__name__


def test_deleting_a_team_releases_its_trackables_and_groups(api):
    admin = make_user()
    team = make_team(admin)
    owned = make_trackable(admin, team_id=team.id)
    group = make_group(admin, team_id=team.id)
    assert api.as_user(admin).delete(f"/api/teams/{team.id}").status_code == 204
    db.session.expire_all()
    assert db.session.get(Trackable, owned.id).team_id is None
    assert db.session.get(Trackable, owned.id).owner_user_id == admin.id
    assert db.session.get(TrackableGroup, group.id).team_id is None


def test_comments_on_the_users_trackables_and_by_the_user_go_others_stay(api, ada):
    other = make_user()
    mine, theirs = make_trackable(ada), make_trackable(other)
    on_mine = TrackableComment(trackable_id=mine.id, author_user_id=other.id, body="Hi")
    by_ada = TrackableComment(trackable_id=theirs.id, author_user_id=ada.id, body="Hi")
    kept = TrackableComment(trackable_id=theirs.id, author_display_name="Kim", body="Hi")
    db.session.add_all([on_mine, by_ada, kept])
    db.session.commit()
    ids = (on_mine.id, by_ada.id, kept.id)
    delete_account(api, ada)
    assert [db.session.get(TrackableComment, i) is not None for i in ids] == [False, False, True]

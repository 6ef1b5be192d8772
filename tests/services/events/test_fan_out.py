"""Events through services.events, without HTTP: an event recorded with a change is fanned
out by the worker (tests.jobs.run_jobs) to the inboxes of those who may hear it now and
never to its actor; a team's events reach its admins only; a note newly in discovery
reaches the area watchers of its language, once; a rolled-back change leaves no event and
no job. Inboxes are read and marked through the face."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.auth import build_viewer
from app.extensions import db
from app.models.enums import NoteVisibility
from app.models.event import Event
from app.models.trackable import TrackableVisibility, TrackableWatch
from app.services import events
from app.services.shared.areas import Bounds
from tests.factories import (
    count_rows,
    make_membership,
    make_note,
    make_team,
    make_trackable,
    make_user,
    unlock_trackable,
)
from tests.jobs import run_jobs

BERLIN = Bounds(52.0, 13.0, 53.0, 14.0)


def inbox(user):
    return [
        (item.event_type, item.read_utc is None)
        for item in events.list_notifications(build_viewer(user)).items
    ]


def watch(user, trackable):
    db.session.add(TrackableWatch(user_id=user.id, trackable_id=trackable.id))
    db.session.commit()


def test_a_trackable_event_reaches_who_may_see_it_never_its_actor(app):
    owner, finder, snoop = make_user(), make_user(), make_user()
    trackable = make_trackable(owner, visibility=TrackableVisibility.ONCE_ACCESSED)
    unlock_trackable(finder, trackable)
    watch(finder, trackable)
    watch(snoop, trackable)  # watches, but may not see it: hears nothing

    events.record(events.EventType.STATUS_MESSAGE_CHANGED, trackable, actor_id=owner.id)
    events.record(events.EventType.COMMENT_WRITTEN, trackable, actor_id=finder.id)
    db.session.commit()
    assert run_jobs(app) >= 2

    changed, written = "trackable.status_message.changed", "trackable.comment.written"
    assert inbox(owner) == [(written, True)]
    assert inbox(finder) == [(changed, True)]
    assert inbox(snoop) == []


def test_marking_read_leaves_the_unread_count_at_zero(app):
    owner, actor = make_user(), make_user()
    trackable = make_trackable(owner, visibility=TrackableVisibility.ALWAYS_VISIBLE)
    for _ in range(3):
        events.record(events.EventType.COMMENT_WRITTEN, trackable, actor_id=actor.id)
    db.session.commit()
    run_jobs(app)
    viewer = build_viewer(owner)
    newest = events.list_notifications(viewer).items[0]
    assert events.unread_count(viewer) == 3

    events.mark_read(viewer, notification_ids=[newest.notification_id])
    db.session.commit()
    assert events.unread_count(viewer) == 2
    # another user's mark_read does not reach this inbox
    events.mark_read(build_viewer(actor), up_to=newest.notification_id)
    db.session.commit()
    assert events.unread_count(viewer) == 2
    events.mark_read(viewer, up_to=newest.notification_id)
    db.session.commit()
    assert events.unread_count(viewer) == 0


def test_a_teams_events_reach_its_admins_only(app):
    admin, other_admin, member = make_user(), make_user(), make_user()
    team = make_team(admin, members=(member,))
    make_membership(team, other_admin, is_admin=True)

    events.record_team(events.EventType.MEMBER_JOINED, team, actor_id=admin.id)
    db.session.commit()
    run_jobs(app)

    assert inbox(other_admin) == [("team.member.joined", True)]
    assert inbox(admin) == []  # the actor
    assert inbox(member) == []


def test_a_published_note_reaches_area_watchers_of_its_language_once(app):
    german, french, any_language, elsewhere = (make_user() for _ in range(4))
    events.create_area_watch(build_viewer(german), BERLIN, content_language="de", most=5)
    events.create_area_watch(build_viewer(french), BERLIN, content_language="fr", most=5)
    events.create_area_watch(build_viewer(any_language), BERLIN, most=5)
    events.create_area_watch(build_viewer(elsewhere), Bounds(40.0, 0.0, 41.0, 1.0), most=5)
    note = make_note(
        visibility=NoteVisibility.PUBLIC, latitude=52.5, longitude=13.4, content_language="de"
    )

    events.record_note_published(note, actor_id=note.owner_user_id, is_new=False)
    events.record_note_published(note, actor_id=note.owner_user_id, is_new=False)  # not news
    db.session.commit()
    run_jobs(app)

    assert count_rows(Event, Event.note_id == note.id) == 1
    assert inbox(german) == inbox(any_language) == [("note.published", True)]
    assert inbox(french) == inbox(elsewhere) == []


def test_a_rolled_back_change_leaves_no_event_and_no_job(app):
    owner, actor = make_user(), make_user()
    trackable = make_trackable(owner, visibility=TrackableVisibility.ALWAYS_VISIBLE)

    events.record(events.EventType.COMMENT_WRITTEN, trackable, actor_id=actor.id)
    db.session.rollback()

    assert run_jobs(app) == 0
    assert db.session.scalars(select(Event)).all() == []
    assert inbox(owner) == []


@pytest.mark.parametrize("private", [True, False])
def test_a_note_not_in_discovery_is_never_published(app, private):
    watcher = make_user()
    events.create_area_watch(build_viewer(watcher), BERLIN, most=5)
    visibility = NoteVisibility.PRIVATE if private else NoteVisibility.PUBLIC
    # private, or public without a position: nothing for an area watcher
    note = make_note(
        visibility=visibility,
        latitude=52.5 if private else None,
        longitude=13.4 if private else None,
    )

    events.record_note_published(note, actor_id=note.owner_user_id, is_new=True)
    db.session.commit()
    run_jobs(app)

    assert count_rows(Event) == 0
    assert inbox(watcher) == []

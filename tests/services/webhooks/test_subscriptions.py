"""Webhook subscriptions through services.webhooks, without HTTP: a URL that is not public
http(s) on an allowed port is refused with `webhook_url_not_allowed`; the secret is shown
once; a rotation shows a new one and keeps the old one signing for the overlap; the list
holds the caller's own and their admin teams' subscriptions; only a team's admins
subscribe for it; the per-owner cap holds."""

from __future__ import annotations

from datetime import timedelta

import pytest

from app.auth import build_viewer
from app.errors import ApiError, Forbidden, NotFound, ValidationFailed
from app.extensions import db
from app.models.base import utcnow
from app.models.webhook import WebhookSubscription
from app.services import webhooks
from tests.factories import count_rows, make_team, make_user

GOOD_URL = "https://hooks.example.com/location-notes"


@pytest.mark.parametrize(
    "url",
    [
        "ftp://hooks.example.com/in",
        "http://127.0.0.1/in",
        "http://10.1.2.3/in",
        "https://localhost/in",
        "https://hooks.example.com:8443/in",
        "https://user:secret@hooks.example.com/in",
    ],
    ids=["ftp", "loopback", "private", "localhost", "port", "user-info"],
)
def test_a_url_that_is_not_public_https_is_refused(app, url):
    viewer = build_viewer(make_user())

    with pytest.raises(ValidationFailed) as refused:
        webhooks.create_webhook(viewer, app.config, url=url)

    assert refused.value.code == "webhook_url_not_allowed"
    assert "url" in refused.value.extra["errors"]
    assert count_rows(WebhookSubscription) == 0


def test_the_secret_is_shown_once_and_a_rotation_keeps_the_old_one_for_the_overlap(app):
    owner = make_user()
    viewer = build_viewer(owner)
    made = webhooks.create_webhook(
        viewer, app.config, url=GOOD_URL, event_types=["team.member.joined", "a.b", "a.b"]
    )
    db.session.commit()

    assert made.secret
    assert made.event_types == ["a.b", "team.member.joined"]
    assert made.previous_secret_expires_utc is None
    assert webhooks.get_webhook(viewer, made.webhook_id).secret is None
    rotated = webhooks.rotate_secret(viewer, made.webhook_id, app.config)
    db.session.commit()

    assert rotated.secret
    assert rotated.secret != made.secret
    overlap = timedelta(hours=app.config["WEBHOOK_SECRET_OVERLAP_HOURS"])
    ends = rotated.previous_secret_expires_utc
    assert ends is not None
    assert abs(ends - (utcnow() + overlap)) < timedelta(minutes=1)
    assert webhooks.get_webhook(viewer, made.webhook_id).secret is None
    with pytest.raises(NotFound) as hidden:
        webhooks.rotate_secret(build_viewer(make_user()), made.webhook_id, app.config)
    assert hidden.value.code == "webhook_not_found"


def test_the_list_holds_own_and_admin_teams_subscriptions(app):
    admin, member, stranger = make_user(), make_user(), make_user()
    team = make_team(admin, members=(member,))
    personal = webhooks.create_webhook(build_viewer(admin), app.config, url=GOOD_URL)
    for_team = webhooks.create_webhook(
        build_viewer(admin), app.config, url=GOOD_URL, team_id=team.id
    )
    members_own = webhooks.create_webhook(build_viewer(member), app.config, url=GOOD_URL)
    db.session.commit()

    def listed(user):
        return {view.webhook_id for view in webhooks.list_webhooks(build_viewer(user)).items}

    assert listed(admin) == {personal.webhook_id, for_team.webhook_id}
    assert listed(member) == {members_own.webhook_id}
    assert listed(stranger) == set()
    assert webhooks.get_webhook(build_viewer(admin), for_team.webhook_id).team_id == team.id


def test_only_a_teams_admins_subscribe_for_it(app):
    admin, member = make_user(), make_user()
    team = make_team(admin, members=(member,))

    with pytest.raises(Forbidden) as refused:
        webhooks.create_webhook(build_viewer(member), app.config, url=GOOD_URL, team_id=team.id)

    assert refused.value.code == "team_admin_required"
    assert count_rows(WebhookSubscription) == 0


def test_each_owner_holds_at_most_the_cap(app):
    owner = make_user()
    config = {**app.config, "WEBHOOKS_PER_OWNER": 2}
    for _ in range(2):
        webhooks.create_webhook(build_viewer(owner), config, url=GOOD_URL)
    db.session.commit()

    with pytest.raises(ApiError) as refused:
        webhooks.create_webhook(build_viewer(owner), config, url=GOOD_URL)
    # another owner has a cap of their own
    webhooks.create_webhook(build_viewer(make_user()), config, url=GOOD_URL)

    assert refused.value.code == "webhook_limit_reached"
    assert count_rows(WebhookSubscription, WebhookSubscription.owner_user_id == owner.id) == 2

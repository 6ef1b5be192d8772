"""Who may see a personal data export (policies.privacy) as a table: its account alone;
anyone else, super-admins included, gets 404 `account_export_not_found`, as for an
export that does not exist."""

from __future__ import annotations

import uuid

import pytest

from app.auth import build_viewer
from app.errors import NotFound
from app.extensions import db
from app.models.privacy import AccountExport
from app.policies import privacy as privacy_policy
from tests.factories import make_team, make_user

ROLES = ("owner", "team_admin", "stranger", "superadmin", "anonymous")
ALLOWED = (True, False, False, False, False)


@pytest.fixture
def world(app):
    owner, admin, stranger = make_user(), make_user(), make_user()
    make_team(admin, members=(owner,))  # an admin of the owner's team: no more rights
    superadmin = make_user(is_superadmin=True)
    export = AccountExport(user_id=owner.id)
    db.session.add(export)
    db.session.commit()
    users = {
        "owner": owner,
        "team_admin": admin,
        "stranger": stranger,
        "superadmin": superadmin,
        "anonymous": None,
    }
    return export, {role: build_viewer(user) for role, user in users.items()}


@pytest.mark.parametrize(("role", "allowed"), list(zip(ROLES, ALLOWED, strict=True)))
def test_an_export_is_its_accounts_alone(world, role, allowed):
    export, viewers = world
    assert privacy_policy.can_view(viewers[role], export) is allowed
    if allowed:
        assert privacy_policy.get_own(viewers[role], export.id) is export
        return
    with pytest.raises(NotFound) as hidden:
        privacy_policy.get_own(viewers[role], export.id)
    assert hidden.value.code == "account_export_not_found"


def test_a_missing_export_looks_like_someone_elses(world):
    _, viewers = world
    with pytest.raises(NotFound) as missing:
        privacy_policy.get_own(viewers["owner"], uuid.uuid4())
    assert missing.value.code == "account_export_not_found"

"""Who may see or change images (contract: Images rules 3-5; Authentication item 7).

Images follow their parent: whoever can open the parent page sees its images, and
uploading or deleting needs the right to manage the parent. Each parent kind asks its own
policy, so a parent's rule is written once:

- profile: everyone sees it (profiles are public); only its own user manages it;
- note: `policies.notes.can_view` / `can_manage` (owner or team admin);
- team: the team page's visibility; its admins manage it;
- trackable: `policies.trackables.can_view` / `can_manage`;
- trackable group: `policies.trackables.can_view_group` / `controls_group`.
"""

from __future__ import annotations

import uuid
from typing import Any

from app.auth import ANONYMOUS, Viewer
from app.errors import Forbidden, NotFound
from app.extensions import db
from app.models.image import ContentImage, ImageTarget
from app.models.note import Note
from app.models.team import Team
from app.models.trackable import Trackable, TrackableGroup
from app.models.user import User
from app.policies import notes as note_policy
from app.policies import teams as team_policy
from app.policies import trackables as trackable_policy

PARENT_MODELS: dict[ImageTarget, Any] = {
    ImageTarget.PROFILE: User,
    ImageTarget.NOTE: Note,
    ImageTarget.TEAM: Team,
    ImageTarget.TRACKABLE: Trackable,
    ImageTarget.TRACKABLE_GROUP: TrackableGroup,
}
PARENT_NAMES = {
    ImageTarget.PROFILE: "Profile",
    ImageTarget.NOTE: "Note",
    ImageTarget.TEAM: "Team",
    ImageTarget.TRACKABLE: "Trackable",
    ImageTarget.TRACKABLE_GROUP: "Trackable group",
}
# A hidden parent answers as its own area's routes do (a group as the trackable routes).
PARENT_NOT_FOUND = {
    ImageTarget.PROFILE: "profile_not_found",
    ImageTarget.NOTE: "note_not_found",
    ImageTarget.TEAM: "team_not_found",
    ImageTarget.TRACKABLE: "trackable_not_found",
    ImageTarget.TRACKABLE_GROUP: "trackable_not_found",
}


def load_parent(target: ImageTarget, parent_id: uuid.UUID) -> Any | None:
    return db.session.get(PARENT_MODELS[target], parent_id)


def can_view_parent(viewer: Viewer, target: ImageTarget, parent: Any) -> bool:
    if target is ImageTarget.PROFILE:
        return True
    if target is ImageTarget.NOTE:
        return note_policy.can_view(viewer, parent)
    if target is ImageTarget.TEAM:
        return team_policy.can_view_page(viewer, parent)
    if target is ImageTarget.TRACKABLE:
        return trackable_policy.can_view(viewer, parent)
    return trackable_policy.can_view_group(viewer, parent)


def can_manage_parent(viewer: Viewer, target: ImageTarget, parent: Any) -> bool:
    if viewer.user_id is None:
        return False
    if target is ImageTarget.PROFILE:
        return bool(viewer.user_id == parent.id)
    if target is ImageTarget.NOTE:
        return note_policy.can_manage(viewer, parent)
    if target is ImageTarget.TEAM:
        return viewer.is_admin_of(parent.id)
    if target is ImageTarget.TRACKABLE:
        return trackable_policy.can_manage(viewer, parent)
    return trackable_policy.controls_group(viewer, parent)


def visible_parent(viewer: Viewer, target: ImageTarget, parent_id: uuid.UUID) -> Any | None:
    """The parent when it exists and the viewer may open it, else None."""
    parent = load_parent(target, parent_id)
    if parent is None or not can_view_parent(viewer, target, parent):
        return None
    return parent


def require_manage_parent(viewer: Viewer, target: ImageTarget, parent_id: uuid.UUID) -> Any:
    """The parent, for an upload or a delete: 404 when hidden, 403 when seen but not managed."""
    parent = visible_parent(viewer, target, parent_id)
    if parent is None:
        raise NotFound(f"{PARENT_NAMES[target]} not found.", code=PARENT_NOT_FOUND[target])
    if not can_manage_parent(viewer, target, parent):
        raise Forbidden(
            f"Only whoever manages this {PARENT_NAMES[target].lower()} may do this.",
            code="image_change_forbidden",
        )
    return parent


def get_visible(viewer: Viewer, image_id: uuid.UUID) -> ContentImage:
    """The image when its parent is visible to the viewer, else 404 (they look alike)."""
    image = db.session.get(ContentImage, image_id)
    if image is None or visible_parent(viewer, image.target, image.parent_id) is None:
        raise NotFound("Image not found.", code="image_not_found")
    return image


def is_public(image: ContentImage) -> bool:
    """An anonymous visitor may see it (shared caches may keep it)."""
    return visible_parent(ANONYMOUS, image.target, image.parent_id) is not None

"""Who may see or change images (contract: Images rules 3-5; Authentication item 7).

Images follow their parent: whoever can open the parent page sees its images, and
uploading or deleting needs the right to manage the parent. Each parent kind asks its own
policy, so a parent's rule is written once. A finder's photos (images of a trackable comment
or journey stop) are the only images an anonymous caller may change, its access session
being its proof; for any other image an anonymous delete is 401.
"""

from __future__ import annotations

import uuid
from typing import Any

from app.auth import ANONYMOUS, Viewer
from app.error_codes import Code
from app.errors import Forbidden, NotFound, Unauthorized
from app.extensions import db
from app.models.image import ContentImage, ImageTarget
from app.models.note import Note
from app.models.team import Team
from app.models.trackable import JourneyStop, Trackable, TrackableComment, TrackableGroup
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
    ImageTarget.TRACKABLE_COMMENT: TrackableComment,
    ImageTarget.JOURNEY_STOP: JourneyStop,
}
# A finder's photo: its parent is what a finder wrote about the trackable.
ENTRY_TARGETS = frozenset({ImageTarget.TRACKABLE_COMMENT, ImageTarget.JOURNEY_STOP})
PARENT_NAMES = {
    ImageTarget.PROFILE: "Profile",
    ImageTarget.NOTE: "Note",
    ImageTarget.TEAM: "Team",
    ImageTarget.TRACKABLE: "Trackable",
    ImageTarget.TRACKABLE_GROUP: "Trackable group",
    ImageTarget.TRACKABLE_COMMENT: "Comment",
    ImageTarget.JOURNEY_STOP: "Journey stop",
}
# A hidden parent answers as its own area's routes do (a group as the trackable routes).
PARENT_NOT_FOUND = {
    ImageTarget.PROFILE: Code.PROFILE_NOT_FOUND,
    ImageTarget.NOTE: Code.NOTE_NOT_FOUND,
    ImageTarget.TEAM: Code.TEAM_NOT_FOUND,
    ImageTarget.TRACKABLE: Code.TRACKABLE_NOT_FOUND,
    ImageTarget.TRACKABLE_GROUP: Code.TRACKABLE_NOT_FOUND,
    ImageTarget.TRACKABLE_COMMENT: Code.TRACKABLE_COMMENT_NOT_FOUND,
    ImageTarget.JOURNEY_STOP: Code.TRACKABLE_JOURNEY_STOP_NOT_FOUND,
}


def load_parent(target: ImageTarget, parent_id: uuid.UUID) -> Any | None:
    if target is ImageTarget.TEAM:  # an upload and the team's deletion take turns
        return team_policy.team_for(parent_id)
    return db.session.get(PARENT_MODELS[target], parent_id)


# profile: everyone sees it, only its own user manages it; note: policies.notes (owner or team
# admin); team: the team page's visibility, its admins manage; trackable and group:
# policies.trackables; a comment or journey stop (a finder's photo): seen with the trackable,
# uploaded by the entry's writer only, removed by the writer or the trackable's owner side
# (can_add_entry_photo / can_remove_entry_photo).
def can_view_parent(viewer: Viewer, target: ImageTarget, parent: Any) -> bool:
    if target is ImageTarget.PROFILE:
        return True
    if target is ImageTarget.NOTE:
        return note_policy.can_view(viewer, parent)
    if target is ImageTarget.TEAM:
        return team_policy.can_view_page(viewer, parent)
    if target is ImageTarget.TRACKABLE:
        return trackable_policy.can_view(viewer, parent)
    if target in ENTRY_TARGETS:
        trackable = trackable_policy.entry_trackable(parent)
        return trackable is not None and trackable_policy.can_view(viewer, trackable)
    return trackable_policy.can_view_group(viewer, parent)


def can_manage_parent(viewer: Viewer, target: ImageTarget, parent: Any) -> bool:
    """Upload to or delete from a parent of the first five kinds (not a finder's entry)."""
    if viewer.user_id is None or target in ENTRY_TARGETS:
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


def can_upload(viewer: Viewer, target: ImageTarget, parent: Any) -> bool:
    """Add an image to a (visible) parent."""
    if target in ENTRY_TARGETS:
        trackable = trackable_policy.entry_trackable(parent)
        return trackable is not None and trackable_policy.can_add_entry_photo(
            viewer, trackable, parent
        )
    return can_manage_parent(viewer, target, parent)


def can_delete(viewer: Viewer, image: ContentImage, parent: Any) -> bool:
    """Remove an image of a (visible) parent."""
    if image.target in ENTRY_TARGETS:
        trackable = trackable_policy.entry_trackable(parent)
        return trackable is not None and trackable_policy.can_remove_entry_photo(
            viewer, trackable, parent
        )
    return can_manage_parent(viewer, image.target, parent)


def _visible_or_not_found(viewer: Viewer, target: ImageTarget, parent_id: uuid.UUID) -> Any:
    parent = visible_parent(viewer, target, parent_id)
    if parent is None:
        raise NotFound(f"{PARENT_NAMES[target]} not found.", code=PARENT_NOT_FOUND[target])
    return parent


def _forbidden(target: ImageTarget) -> Forbidden:
    if target in ENTRY_TARGETS:
        detail = (
            f"Only this {PARENT_NAMES[target].lower()}'s writer adds photos to it; its "
            "writer and the trackable's owner or team admins remove them."
        )
    else:
        detail = f"Only whoever manages this {PARENT_NAMES[target].lower()} may do this."
    return Forbidden(detail, code=Code.IMAGE_CHANGE_FORBIDDEN)


def require_upload(viewer: Viewer, target: ImageTarget, parent_id: uuid.UUID) -> Any:
    """The parent, for an upload: 404 when hidden, 403 when seen but not the viewer's to
    add to."""
    parent = _visible_or_not_found(viewer, target, parent_id)
    if not can_upload(viewer, target, parent):
        raise _forbidden(target)
    return parent


def require_delete(viewer: Viewer, image_id: uuid.UUID) -> ContentImage:
    """The image, for a delete: 404 when hidden, 403 when seen but not the viewer's to
    remove. An anonymous caller may only ever remove a finder's photo it can see: any
    other image id is 401 for it (the route needed a bearer token before finders' photos
    existed, and an anonymous caller learns nothing more from it now)."""
    image = db.session.get(ContentImage, image_id)
    parent = visible_parent(viewer, image.target, image.parent_id) if image else None
    if image is None or parent is None:
        if not viewer.is_authenticated:
            raise _bearer_required()
        raise NotFound("Image not found.", code=Code.IMAGE_NOT_FOUND)
    if not viewer.is_authenticated and image.target not in ENTRY_TARGETS:
        raise _bearer_required()
    if not can_delete(viewer, image, parent):
        raise _forbidden(image.target)
    return image


def _bearer_required() -> Unauthorized:
    return Unauthorized(
        "A bearer access token is required (without one, only a finder's own photos can "
        "be deleted).",
        code=Code.AUTHENTICATION_REQUIRED,
    )


def get_visible(viewer: Viewer, image_id: uuid.UUID) -> ContentImage:
    """The image when its parent is visible to the viewer, else 404 (they look alike)."""
    image = db.session.get(ContentImage, image_id)
    if image is None or visible_parent(viewer, image.target, image.parent_id) is None:
        raise NotFound("Image not found.", code=Code.IMAGE_NOT_FOUND)
    return image


def is_public(image: ContentImage) -> bool:
    """An anonymous visitor may see it (shared caches may keep it)."""
    return visible_parent(ANONYMOUS, image.target, image.parent_id) is not None

"""Image use cases (contract: Images rules 1-5; decisions: Images): list, read a variant,
upload, delete, and the removal of a parent's images.

An upload is also held to counts, against abuse: images per parent, and images an account
uploads per day (a budget of services.shared.budgets); an anonymous finder's photos count
against its access session and its network instead. All are checked before decoding, then
again under locks (the parent's, then the budgets', always in this order) just before the
row is added, so parallel uploads cannot both take the last slot.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import IO, Any

from flask import current_app
from sqlalchemy import and_, func, or_, select

from app.auth import Viewer
from app.error_codes import Code
from app.errors import ApiError, NotFound
from app.extensions import db
from app.hooks import DeletionCounts
from app.models.image import ContentImage, ImageTarget
from app.models.trackable import JourneyStop, TrackableComment
from app.models.user import User
from app.platform import metrics
from app.platform.database import lock_for_write
from app.policies import images as image_policy
from app.services import trackables
from app.services.images.files import (
    image_store,
    redirecting_store,
    remove_after_commit,
    removed_in_transaction,
)
from app.services.shared import budgets
from app.storage import imaging
from app.storage.images import image_keys, internal_uri, variant_key


@dataclass(frozen=True)
class VariantFile:
    data: bytes
    etag: str  # strong: a variant's bytes never change under its name
    is_public: bool


class ImageRejected(ApiError):
    """400 with the reason: not an accepted format, too big, broken, or the parent is full."""

    code = Code.IMAGE_REJECTED


# 400 image_limit_reached: IMAGES_PER_PARENT_MAX (a finder's comment or stop:
# FINDER_PHOTOS_PER_ENTRY). 429 image_daily_limit_reached: IMAGES_PER_USER_PER_DAY. 429
# finder_photo_limit_reached: FINDER_PHOTOS_PER_SESSION or FINDER_PHOTOS_PER_NETWORK in any
# FINDER_PHOTOS_WINDOW_MINUTES.
LIMIT_REACHED = Code.IMAGE_LIMIT_REACHED
DAILY_LIMIT_REACHED = Code.IMAGE_DAILY_LIMIT_REACHED
FINDER_LIMIT_REACHED = Code.FINDER_PHOTO_LIMIT_REACHED
SESSION_BUDGET, NETWORK_BUDGET = "finder-photo-session", "finder-photo-network"


def daily_budget(config: Mapping[str, Any]) -> budgets.Budget:
    """IMAGES_PER_USER_PER_DAY uploads per account in any 24 hours."""
    limit = int(config["IMAGES_PER_USER_PER_DAY"])
    return budgets.Budget(
        "image-upload",
        limit,
        timedelta(days=1),
        refusal=f"At most {limit} images uploaded per account per day.",
        code=DAILY_LIMIT_REACHED,
    )


def finder_budgets(config: Mapping[str, Any]) -> tuple[budgets.Budget, budgets.Budget]:
    """An anonymous finder's photos: per access session and per network (the guess
    budget's network: an IPv4 /24, an IPv6 /48) in any FINDER_PHOTOS_WINDOW_MINUTES."""
    window = "FINDER_PHOTOS_WINDOW_MINUTES"
    minutes = int(config[window])
    return (
        budgets.Budget.from_config(
            SESSION_BUDGET,
            config,
            "FINDER_PHOTOS_PER_SESSION",
            window,
            refusal=f"At most {config['FINDER_PHOTOS_PER_SESSION']} photos per finder "
            f"session in {minutes} minutes.",
            code=FINDER_LIMIT_REACHED,
        ),
        budgets.Budget.from_config(
            NETWORK_BUDGET,
            config,
            "FINDER_PHOTOS_PER_NETWORK",
            window,
            refusal=f"At most {config['FINDER_PHOTOS_PER_NETWORK']} photos from anonymous "
            f"finders on your network in {minutes} minutes.",
            code=FINDER_LIMIT_REACHED,
        ),
    )


def _spenders(
    viewer: Viewer, parent: Any, client_address: str, config: Mapping[str, Any]
) -> list[tuple[budgets.Budget, str]]:
    """The budgets an upload spends: the account's day, or an anonymous finder's session
    (the one it wrote the entry with: the policy checked it is this client's) and network."""
    if viewer.user is not None:
        return [(daily_budget(config), str(viewer.user.id))]
    session_budget, network_budget = finder_budgets(config)
    network = trackables.guess_key(client_address, config).network
    return [(session_budget, str(parent.writer_session_id)), (network_budget, network)]


def parent_limit(target: ImageTarget, config: Mapping[str, Any]) -> int:
    if target in image_policy.ENTRY_TARGETS:
        return int(config["FINDER_PHOTOS_PER_ENTRY"])
    return int(config["IMAGES_PER_PARENT_MAX"])


def image_limits(config: Mapping[str, Any]) -> imaging.ImageLimits:
    return imaging.ImageLimits(
        max_pixels=config["IMAGE_MAX_PIXELS"],
        max_aspect_ratio=config["IMAGE_MAX_ASPECT_RATIO"],
        max_decode_bytes=config["IMAGE_MAX_DECODE_BYTES"],
    )


def _check_parent_room(target: ImageTarget, parent_id: uuid.UUID, limit: int) -> None:
    held = db.session.scalar(
        select(func.count())
        .select_from(ContentImage)
        .where(ContentImage.target_type == int(target), ContentImage.parent_id == parent_id)
    )
    if (held or 0) >= limit:
        raise ImageRejected(
            f"This holds {limit} images, the most allowed: delete one to add another.",
            code=LIMIT_REACHED,
        )


def list_images(viewer: Viewer, target: ImageTarget, parent_id: uuid.UUID) -> list[ContentImage]:
    """The parent's images, oldest first; none when the parent is hidden (rule 1)."""
    if image_policy.visible_parent(viewer, target, parent_id) is None:
        return []
    statement = (
        select(ContentImage)
        .where(ContentImage.target_type == int(target), ContentImage.parent_id == parent_id)
        .order_by(ContentImage.created_utc, ContentImage.id)
    )
    return list(db.session.scalars(statement))


def _visible_variant(
    viewer: Viewer, image_id: uuid.UUID, variant_name: str
) -> tuple[ContentImage, imaging.Variant]:
    variant = imaging.VARIANTS_BY_NAME.get(variant_name)
    if variant is None:
        raise NotFound(
            "No such variant: use thumbnail, small, medium or large.",
            code=Code.IMAGE_VARIANT_NOT_FOUND,
        )
    return image_policy.get_visible(viewer, image_id), variant


def read_variant(viewer: Viewer, image_id: uuid.UUID, variant_name: str) -> VariantFile:
    """One variant's JPEG bytes; 404 for a hidden parent or an unknown variant (rule 2)."""
    image, variant = _visible_variant(viewer, image_id, variant_name)
    data = image_store(current_app.config).read(variant_key(image.id, variant))
    if data is None:
        raise NotFound("Image not found.", code=Code.IMAGE_NOT_FOUND)
    return VariantFile(
        data=data, etag=f"{image.id}-{variant.size}", is_public=image_policy.is_public(image)
    )


@dataclass(frozen=True)
class ServedVariant:
    """How a visible variant leaves: `store_url` (a presigned URL to redirect to, good for
    `seconds`), `internal_uri` (nginx sends the file from it), or else `data`, the bytes."""

    etag: str
    is_public: bool
    data: bytes = b""
    store_url: str | None = None
    seconds: int = 0
    internal_uri: str | None = None


def presigned_cache_control(seconds: int) -> str:
    """What the store answers a presigned URL with: no longer than the URL lives, and in
    the caller's cache only (it may be a private image)."""
    return f"private, max-age={seconds}"


def serve_variant(
    viewer: Viewer, image_id: uuid.UUID, variant_name: str, *, head: bool = False
) -> ServedVariant:
    """The visibility check of `read_variant` (rule 2), then the way out the settings
    name (docs/operations.md, Images from storage): with S3 a presigned URL of
    IMAGE_PRESIGNED_SECONDS (for a HEAD when `head`) unless IMAGE_S3_REDIRECT is off; locally with
    IMAGE_ACCEL_REDIRECT_PREFIX the nginx-internal URI; else the bytes. The key comes from
    the image row's id and the variant table, never from the request's path."""
    config = current_app.config
    store = redirecting_store(config)
    local = config["IMAGE_STORAGE"] == "local"
    prefix = config["IMAGE_ACCEL_REDIRECT_PREFIX"] if local else ""
    if store is None and not prefix:
        found = read_variant(viewer, image_id, variant_name)
        return ServedVariant(etag=found.etag, is_public=found.is_public, data=found.data)
    image, variant = _visible_variant(viewer, image_id, variant_name)
    key = variant_key(image.id, variant)
    etag, is_public = f"{image.id}-{variant.size}", image_policy.is_public(image)
    if store is None:
        return ServedVariant(etag, is_public, internal_uri=internal_uri(prefix, key))
    seconds = max(1, int(config["IMAGE_PRESIGNED_SECONDS"]))
    url = store.presigned_url(
        key, seconds=seconds, cache_control=presigned_cache_control(seconds), head=head
    )
    return ServedVariant(etag, is_public, store_url=url, seconds=seconds)


def upload_image(
    viewer: Viewer,
    target: ImageTarget,
    parent_id: uuid.UUID,
    upload: IO[bytes],
    *,
    client_address: str = "",
    image_id: uuid.UUID | None = None,
) -> ContentImage:
    """Screen the upload, store its four variants, then add the row (rule 3). Flushes.
    `client_address` (app.extensions.client_ip) names an anonymous finder's network.
    `image_id`, an id the caller derives from its own retry tag (the website's find
    form), makes a resend return the image already stored under it on this parent."""
    parent = image_policy.require_upload(viewer, target, parent_id)
    stored = _already_stored(image_id, target, parent_id)
    if stored is not None:
        return stored
    config = current_app.config
    limit = parent_limit(target, config)
    spenders = _spenders(viewer, parent, client_address, config)
    upload.seek(0, 2)
    size = upload.tell()
    if size > config["IMAGE_MAX_BYTES"]:
        raise ImageRejected(f"The image is larger than {config['IMAGE_MAX_BYTES']:,} bytes.")
    # Refused early, before the decoding work, then decided again under the locks below.
    _check_parent_room(target, parent_id, limit)
    for budget, subject in spenders:
        budgets.check(budget, subject)
    try:
        with metrics.IMAGE_PIPELINE.labels(stage="process").time():
            made = imaging.make_variants(upload, image_limits(config))
    except imaging.ImageRejected as error:
        raise ImageRejected(str(error), code=error.code) from error
    image = ContentImage(
        id=image_id or uuid.uuid4(),
        target_type=int(target),
        parent_id=parent_id,
        uploaded_by_user_id=viewer.user_id,
        original_width=made.original_width,
        original_height=made.original_height,
    )
    store = image_store(config)
    parent_lock = f"images:{int(target)}:{parent_id}"
    if image_id is not None:
        # A retry id is decided under the parent's lock before any file is written, so a
        # twin sent at the same moment never writes over the files of the one stored.
        lock_for_write(db.session, parent_lock)
        stored = _already_stored(image_id, target, parent_id)
        if stored is not None:
            return stored
    try:
        with metrics.IMAGE_PIPELINE.labels(stage="store").time():
            for variant in imaging.VARIANTS:
                store.put(variant_key(image.id, variant), made.variants[variant.name])
        # Files first (no lock held while writing them, but for a retry id), then count
        # and insert under the parent's lock and the budgets' locks, in this order.
        lock_for_write(db.session, parent_lock)
        _check_parent_room(target, parent_id, limit)
        for budget, subject in spenders:
            budgets.spend_or_refuse(budget, subject)
        db.session.add(image)
        db.session.flush()
    except BaseException:
        discard_files(image.id)
        raise
    return image


def _already_stored(
    image_id: uuid.UUID | None, target: ImageTarget, parent_id: uuid.UUID
) -> ContentImage | None:
    """The image stored under a caller's retry id, on this parent; another parent's image
    of that id is a refusal (the id is derived from the parent, so only a forged one)."""
    if image_id is None:
        return None
    found = db.session.scalar(
        select(ContentImage)
        .where(ContentImage.id == image_id)
        .execution_options(populate_existing=True)
    )
    if found is None:
        return None
    if (found.target, found.parent_id) != (target, parent_id):
        raise ImageRejected("This image id is taken.")
    return found


def discard_files(image_id: uuid.UUID) -> None:
    """Remove an image's files now (an upload whose row was not committed)."""
    store = image_store(current_app.config)
    for key in image_keys(image_id):
        store.delete(key)


def delete_image(viewer: Viewer, image_id: uuid.UUID) -> None:
    """The row now, the files after the commit (rule 4). Flushes."""
    _remove([image_policy.require_delete(viewer, image_id)])


def entry_images(viewer: Viewer, trackable_id: uuid.UUID) -> dict[uuid.UUID, list[ContentImage]]:
    """The finders' photos of a trackable's comments and stops, by entry id, oldest
    first (one query); none when the viewer may not see the trackable (they follow it)."""
    if image_policy.visible_parent(viewer, ImageTarget.TRACKABLE, trackable_id) is None:
        return {}
    comments = select(TrackableComment.id).where(TrackableComment.trackable_id == trackable_id)
    stops = select(JourneyStop.id).where(JourneyStop.trackable_id == trackable_id)
    statement = (
        select(ContentImage)
        .where(
            or_(
                and_(
                    ContentImage.target_type == int(ImageTarget.TRACKABLE_COMMENT),
                    ContentImage.parent_id.in_(comments),
                ),
                and_(
                    ContentImage.target_type == int(ImageTarget.JOURNEY_STOP),
                    ContentImage.parent_id.in_(stops),
                ),
            )
        )
        .order_by(ContentImage.created_utc, ContentImage.id)
    )
    found: dict[uuid.UUID, list[ContentImage]] = {}
    for image in db.session.scalars(statement):
        found.setdefault(image.parent_id, []).append(image)
    return found


def remove_images_of(target: ImageTarget, parent_ids: Collection[uuid.UUID]) -> int:
    """Remove the images of these parents (being deleted); how many. Flushes."""
    if not parent_ids:
        return 0
    found = list(
        db.session.scalars(
            select(ContentImage).where(
                ContentImage.target_type == int(target),
                ContentImage.parent_id.in_(list(parent_ids)),
            )
        )
    )
    _remove(found)
    return len(found)


def remove_children_images(kind: str, parent_ids: Collection[uuid.UUID]) -> int:
    """The parent-removal hook (app.hooks): `kind` is the ImageTarget's lower-case name."""
    return remove_images_of(ImageTarget[kind.upper()], parent_ids)


def delete_account_images(user: User, counts: DeletionCounts) -> None:
    """The images area's part of account deletion, after the other areas removed the
    account's notes, teams, trackables and groups (and, through the parent-removal hook,
    their images): the profile's images go, and all are counted."""
    remove_images_of(ImageTarget.PROFILE, [user.id])
    counts.images_deleted += removed_in_transaction()


def _remove(found: list[ContentImage]) -> None:
    store = image_store(current_app.config)
    for image in found:
        db.session.delete(image)
        remove_after_commit(store, image_keys(image.id))
    db.session.flush()

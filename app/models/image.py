"""Content images (contract: Image (read shape), Images; decisions: Images).

An image belongs to one parent, named by `target_type` and `parent_id` (the parent kinds
live in different tables, so there is no foreign key: deleting a parent removes its images
through the images area, which also removes the files). Only resized JPEG variants are
stored, as files named after the image id and the variant's size; the original is not kept.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import IntEnum

from sqlalchemy import Index, Integer
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base, new_id, utcnow


class ImageTarget(IntEnum):
    """`targetType` (decisions: Images)."""

    PROFILE = 0
    NOTE = 1
    TEAM = 2
    TRACKABLE = 3
    TRACKABLE_GROUP = 4
    # A finder's photo hangs off what the finder wrote, never off the trackable itself
    # (only its managers upload there): docs/contract/images.md, Finders' photos.
    TRACKABLE_COMMENT = 5
    JOURNEY_STOP = 6


class ContentImage(Base):
    __tablename__ = "content_images"
    __table_args__ = (Index("ix_content_images_target", "target_type", "parent_id"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    target_type: Mapped[int] = mapped_column(Integer)
    parent_id: Mapped[uuid.UUID]
    uploaded_by_user_id: Mapped[uuid.UUID | None] = mapped_column(default=None)
    original_width: Mapped[int] = mapped_column(Integer)
    original_height: Mapped[int] = mapped_column(Integer)
    created_utc: Mapped[datetime] = mapped_column(default=utcnow)

    @property
    def target(self) -> ImageTarget:
        return ImageTarget(self.target_type)

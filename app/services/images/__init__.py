"""Images (contract: Image (read shape), Images; decisions: Images): list, read a variant,
upload, delete, remove a parent's images, and the sweep of files without a row. The face
other areas, the API, the website and the CLI call."""

from app.services.images.files import image_store
from app.services.images.images import (
    ImageRejected,
    VariantFile,
    delete_account_images,
    delete_image,
    discard_files,
    entry_images,
    list_images,
    read_variant,
    remove_children_images,
    remove_images_of,
    upload_image,
)
from app.services.images.sweep import sweep_files

__all__ = [
    "ImageRejected",
    "VariantFile",
    "delete_account_images",
    "delete_image",
    "discard_files",
    "entry_images",
    "image_store",
    "list_images",
    "read_variant",
    "remove_children_images",
    "remove_images_of",
    "sweep_files",
    "upload_image",
]

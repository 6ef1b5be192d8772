"""Images (contract: Image (read shape), Images; decisions: Images): list, read a variant,
upload, delete, remove a parent's images, and the sweep of files without a row. The face
other areas, the API, the website and the CLI call."""

from app.services.images.files import check_store, image_store, redirect_origins
from app.services.images.images import (
    ImageRejected,
    ServedVariant,
    VariantFile,
    delete_account_images,
    delete_image,
    discard_files,
    entry_images,
    list_images,
    presigned_cache_control,
    read_variant,
    remove_children_images,
    remove_images_of,
    serve_variant,
    upload_image,
)
from app.services.images.sweep import sweep_files

__all__ = [
    "ImageRejected",
    "ServedVariant",
    "VariantFile",
    "check_store",
    "delete_account_images",
    "delete_image",
    "discard_files",
    "entry_images",
    "image_store",
    "list_images",
    "presigned_cache_control",
    "read_variant",
    "redirect_origins",
    "remove_children_images",
    "remove_images_of",
    "serve_variant",
    "sweep_files",
    "upload_image",
]

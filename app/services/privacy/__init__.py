"""Personal data export (GDPR articles 15 and 20): an account asks for a copy of
everything the service keeps about it, a worker makes the ZIP (`JOB_KINDS`) and mails its
owner, who downloads it through the API or the website until it expires; the hourly
`sweep_exports` removes what expired. What the ZIP holds, and what it leaves out and why,
is the table in `catalogue`, and each JSON file's JSON Schema is made from it
(`file_schemas`). The face other areas, the API, the website and the factory call."""

from app.services.privacy.exports import (
    BUILD_KIND,
    ExportDownload,
    ExportView,
    delete_account_exports,
    get_export,
    open_download,
    start_export,
    sweep_exports,
)
from app.services.privacy.file_schemas import MEDIA_TYPE as SCHEMA_MEDIA_TYPE
from app.services.privacy.file_schemas import schema_file, schema_files
from app.services.privacy.mail import MAIL_KIND, export_page_url

JOB_KINDS = (BUILD_KIND, MAIL_KIND)

__all__ = [
    "JOB_KINDS",
    "SCHEMA_MEDIA_TYPE",
    "ExportDownload",
    "ExportView",
    "delete_account_exports",
    "export_page_url",
    "get_export",
    "open_download",
    "schema_file",
    "schema_files",
    "start_export",
    "sweep_exports",
]

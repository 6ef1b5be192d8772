"""Compliance (contract: Content report, Content report status, Compliance): content
reports and support requests, tracked system errors (500 tickets and client-side errors),
super-admin review, and the account clean-up that detaches a reporter. The face other
areas, the API and the CLI call."""

from app.services.compliance.reports import (
    FiledReport,
    ReportList,
    ReportView,
    client_key,
    detach_account_reports,
    file_report,
    get_report,
    list_reports,
    my_reports,
    operator_reports,
    operator_resolve,
    review_report,
)
from app.services.compliance.tracked_errors import (
    ErrorReportOutcome,
    explain_ticket,
    report_client_error,
    track_unexpected_error,
)

__all__ = [
    "ErrorReportOutcome",
    "FiledReport",
    "ReportList",
    "ReportView",
    "client_key",
    "detach_account_reports",
    "explain_ticket",
    "file_report",
    "get_report",
    "list_reports",
    "my_reports",
    "operator_reports",
    "operator_resolve",
    "report_client_error",
    "review_report",
    "track_unexpected_error",
]

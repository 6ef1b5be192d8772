"""Trackables (contract: Trackable; Trackable group; Trackable activation; Trackable group
membership; Trackable watch; Active secret session; decisions: Trackable codes, Access
sessions for secret codes): codes, creation, groups, activation, lookup, access sessions,
watches, comments, journeys and printable labels. The face other areas and the API call."""

from app.services.trackables.codes.active import (
    ActiveItem,
    ActiveLanding,
    active_landing,
    end_active,
    list_active,
    set_status_message,
)
from app.services.trackables.codes.code_keys import (
    CodeKeyMismatch,
    check_code_keys,
    unwrapped,
    wrap_batch,
)
from app.services.trackables.codes.formats import CodeSettings
from app.services.trackables.codes.guesses import (
    GuessBudgetExceeded,
    GuessClient,
    check_budget,
    count_miss,
    guess_key,
)
from app.services.trackables.codes.issuing import IssuedCodes, SecretCodeTaken
from app.services.trackables.codes.lookup import (
    NOT_ACTIVATED,
    SITE_LANGUAGES,
    LookupResult,
    find_by_public_code,
    lookup_code,
    resolve,
    site_language,
)
from app.services.trackables.codes.possession import Credential
from app.services.trackables.codes.sessions import (
    AccessCookie,
    access_session_unlocks,
    new_client_id,
    session_trackable_ids,
)
from app.services.trackables.items.accounts import delete_account_trackables
from app.services.trackables.items.activation import Activation, activate
from app.services.trackables.items.attaching import attach_to_note
from app.services.trackables.items.creation import (
    CreatedGroup,
    CreatedTrackable,
    IssuedTrackable,
    create_group,
    create_trackable,
)
from app.services.trackables.items.feeds import (
    EntryKind,
    Feed,
    FeedEntry,
    group_feed,
    has_public_feed,
    trackable_feed,
)
from app.services.trackables.items.groups import GroupMembership, attach_to_group, detach_from_group
from app.services.trackables.items.reads import (
    TrackableList,
    TrackableRelation,
    TrackableView,
    get_trackable,
    my_trackables,
    public_trackables,
    trackable_view,
    trackable_views,
)
from app.services.trackables.items.secrets import rotate_secret
from app.services.trackables.items.watches import (
    MyWatches,
    WatchedTarget,
    WatchedTargets,
    WatchOutcome,
    describe_watches,
    list_watches,
    unwatch_group,
    unwatch_trackable,
    watch_group,
    watch_trackable,
)
from app.services.trackables.journey.comments import (
    CommentList,
    CommentView,
    add_comment,
    delete_comment,
    edit_comment,
    list_comments,
)
from app.services.trackables.journey.exports import (
    ExportedStop,
    JourneyExport,
    export_journey,
    gpx_track,
)
from app.services.trackables.journey.recording import record_stop
from app.services.trackables.journey.statistics import JourneyStatistics
from app.services.trackables.journey.stops import (
    NoteAtPoint,
    StopView,
    add_stop,
    convert_stop,
    delete_stop,
    get_journey,
)
from app.services.trackables.labels.label_sheets import LAYOUTS as LABEL_LAYOUTS
from app.services.trackables.labels.label_sheets import PAPERS as LABEL_PAPERS
from app.services.trackables.labels.printing import (
    LABEL_TEXT_MAX_LENGTH,
    LABELS_MAX_ITEMS,
    LabelItem,
    LabelItemsRefused,
    LabelSheet,
    check_labels,
)

__all__ = [
    "LABELS_MAX_ITEMS",
    "LABEL_LAYOUTS",
    "LABEL_PAPERS",
    "LABEL_TEXT_MAX_LENGTH",
    "NOT_ACTIVATED",
    "SITE_LANGUAGES",
    "AccessCookie",
    "Activation",
    "ActiveItem",
    "ActiveLanding",
    "CodeKeyMismatch",
    "CodeSettings",
    "CommentList",
    "CommentView",
    "CreatedGroup",
    "CreatedTrackable",
    "Credential",
    "EntryKind",
    "ExportedStop",
    "Feed",
    "FeedEntry",
    "GroupMembership",
    "GuessBudgetExceeded",
    "GuessClient",
    "IssuedCodes",
    "IssuedTrackable",
    "JourneyExport",
    "JourneyStatistics",
    "LabelItem",
    "LabelItemsRefused",
    "LabelSheet",
    "LookupResult",
    "MyWatches",
    "NoteAtPoint",
    "SecretCodeTaken",
    "StopView",
    "TrackableList",
    "TrackableRelation",
    "TrackableView",
    "WatchOutcome",
    "WatchedTarget",
    "WatchedTargets",
    "access_session_unlocks",
    "activate",
    "active_landing",
    "add_comment",
    "add_stop",
    "attach_to_group",
    "attach_to_note",
    "check_budget",
    "check_code_keys",
    "check_labels",
    "convert_stop",
    "count_miss",
    "create_group",
    "create_trackable",
    "delete_account_trackables",
    "delete_comment",
    "delete_stop",
    "describe_watches",
    "detach_from_group",
    "edit_comment",
    "end_active",
    "export_journey",
    "find_by_public_code",
    "get_journey",
    "get_trackable",
    "gpx_track",
    "group_feed",
    "guess_key",
    "has_public_feed",
    "list_active",
    "list_comments",
    "list_watches",
    "lookup_code",
    "my_trackables",
    "new_client_id",
    "public_trackables",
    "record_stop",
    "resolve",
    "rotate_secret",
    "session_trackable_ids",
    "set_status_message",
    "site_language",
    "trackable_feed",
    "trackable_view",
    "trackable_views",
    "unwatch_group",
    "unwatch_trackable",
    "unwrapped",
    "watch_group",
    "watch_trackable",
    "wrap_batch",
]

"""The website's forms, one WTForms class each (Flask-WTF): what a form takes and how its
fields are checked. The CSRF token is checked for every POST of the pages blueprint
(app.web.pages), so these classes leave it to that one check."""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from babel import Locale
from flask import current_app
from flask_babel import format_decimal
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_wtf import FlaskForm
from flask_wtf.file import FileField
from werkzeug.datastructures import FileStorage
from wtforms import (
    Field,
    HiddenField,
    PasswordField,
    RadioField,
    SelectField,
    StringField,
    TextAreaField,
)
from wtforms.fields.choices import SelectChoice
from wtforms.validators import DataRequired, Length, ValidationError

from app.models.base import utcnow
from app.models.notification_mail import MailChoice
from app.models.text import IN_NAMES, IN_TEXT
from app.models.trackable import (
    COMMENT_BODY_MAX_LENGTH,
    COMMENT_NAME_MAX_LENGTH,
    TRACKABLE_NAME_MAX_LENGTH,
    StopPrecision,
)
from app.services.events import MAIL_LANGUAGES
from app.web.coordinates import Axis, CoordinateError, Problem, parse

# Longer than any code the service issues (the QR token is 100 characters); what is
# longer matches nothing and is refused before a lookup counts it.
CODE_MAX_LENGTH = 200


def _strip(value: Any) -> Any:
    return value.strip() if isinstance(value, str) else value


class CodeForm(FlaskForm):
    """ "Enter your code": a public code, a secret code or a QR token, as typed."""

    class Meta:
        csrf = False  # checked once for the whole blueprint (pages.check_csrf)

    code = StringField(
        _l("Enter the code printed on the item"),
        validators=[
            DataRequired(message=_l("Enter a code.")),
            Length(max=CODE_MAX_LENGTH, message=_l("This is longer than any code.")),
        ],
        filters=[_strip],
    )


class FindForm(FlaskForm):
    """ "Log a find" on the active landing: a comment, a journey stop, or both in one
    submit, with an optional "seen on" date. Field names are the API's (camelCase). After
    `validate()`, `position` holds the parsed (latitude, longitude) or None and
    `observed_utc` the instant the date stands for, or None."""

    class Meta:
        csrf = False  # checked once for the whole blueprint (pages.check_csrf)

    client_mutation_id = HiddenField(name="clientMutationId")
    display_name = StringField(_l("Your name (optional)"), name="displayName", filters=[_strip])
    body = TextAreaField(_l("Comment (optional)"), filters=[_strip])
    seen_on = StringField(_l("Seen on (optional)"), name="seenOn", filters=[_strip])
    latitude = StringField(_l("Latitude"), filters=[_strip])
    longitude = StringField(_l("Longitude"), filters=[_strip])
    # A finder's photo of the find, attached to the comment (or the stop when there is no
    # comment) through the images service: screened, resized, metadata (GPS) dropped.
    photo = FileField(_l("Photo (optional)"))
    # How precisely the stop is kept: the API's `precision` (only the snapped point is stored).
    precision = SelectField(
        _l("Show the position"),
        choices=[
            SelectChoice(StopPrecision.EXACT.value, _l("Exactly (to about 10 m)")),
            SelectChoice(StopPrecision.ABOUT_1KM.value, _l("Roughly (to about 1 km)")),
            SelectChoice(StopPrecision.ABOUT_10KM.value, _l("Vaguely (to about 10 km)")),
        ],
        default=StopPrecision.EXACT.value,
    )

    position: tuple[float, float] | None = None
    observed_utc: datetime | None = None

    def validate(self, extra_validators: Any = None) -> bool:
        super().validate(extra_validators)
        self.position = self._position()
        self.observed_utc = self._observed()
        if not self.errors and not self.body.data and self.position is None:
            self.form_errors.append(_("Write a comment, give a position, or both."))
        return not self.errors

    @property
    def placeholders(self) -> dict[str, str]:
        """The coordinate fields' placeholders: decimal degrees as the page's language
        writes them."""
        return {axis.name.lower(): decimal_example(axis) for axis in Axis}

    @property
    def mutation_ids(self) -> tuple[str | None, str | None]:
        """The comment's and the stop's retry tags, both derived from the form's one id
        (a form not rendered by us has none: written without retry protection)."""
        try:
            form_id = uuid.UUID(self.client_mutation_id.data or "")
        except ValueError:
            return None, None
        return str(uuid.uuid5(form_id, "comment")), str(uuid.uuid5(form_id, "stop"))

    def photo_id(self, parent_id: uuid.UUID) -> uuid.UUID | None:
        """The photo's image id, derived from the form's id and the entry it goes to (a
        form sent again stores it once); None for a form not rendered by us."""
        try:
            form_id = uuid.UUID(self.client_mutation_id.data or "")
        except ValueError:
            return None
        return uuid.uuid5(form_id, f"photo:{parent_id}")

    def validate_body(self, field: Field) -> None:
        if len(field.data or "") > COMMENT_BODY_MAX_LENGTH:
            raise ValidationError(
                _(
                    "A comment may be at most %(count)d characters long.",
                    count=COMMENT_BODY_MAX_LENGTH,
                )
            )
        if IN_TEXT.search(field.data or ""):
            raise ValidationError(
                _("Your comment must not contain control or direction characters.")
            )

    @property
    def photo_file(self) -> FileStorage | None:
        """The chosen photo; None when the file input was left empty."""
        data = self.photo.data
        return data if isinstance(data, FileStorage) and data.filename else None

    def validate_photo(self, field: Field) -> None:
        photo = self.photo_file
        if photo is None:
            return
        photo.stream.seek(0, 2)
        size, limit = photo.stream.tell(), int(current_app.config["IMAGE_MAX_BYTES"])
        photo.stream.seek(0)
        if size > limit:
            raise ValidationError(_("The photo may be at most %(size)s.", size=file_size(limit)))

    def validate_display_name(self, field: Field) -> None:
        if len(field.data or "") > COMMENT_NAME_MAX_LENGTH:
            raise ValidationError(
                _(
                    "Your name may be at most %(count)d characters long.",
                    count=COMMENT_NAME_MAX_LENGTH,
                )
            )
        if IN_NAMES.search(field.data or ""):
            raise ValidationError(_("Your name must not contain control or direction characters."))

    def _position(self) -> tuple[float, float] | None:
        fields = ((self.latitude, Axis.LATITUDE), (self.longitude, Axis.LONGITUDE))
        if not self.latitude.data and not self.longitude.data:
            return None
        values = []
        for field, axis in fields:
            try:
                values.append(parse(field.data or "", axis))
            except CoordinateError as refused:
                field.errors = [*field.errors, coordinate_error(refused.problem, axis)]
        return (values[0], values[1]) if len(values) == 2 else None

    def _observed(self) -> datetime | None:
        """A day (the date input's `YYYY-MM-DD`) as the instant the API takes: noon UTC,
        which is that day in nearly every time zone, or now when noon is still ahead. A day
        that has not begun anywhere on earth (UTC+14) is in the future."""
        if not self.seen_on.data:
            return None
        try:
            day = date.fromisoformat(self.seen_on.data)
        except ValueError:
            self.seen_on.errors = [_("Enter a date such as %(example)s.", example=DATE_EXAMPLE)]
            return None
        earliest, latest = self.day_bounds()
        if day > latest:
            self.seen_on.errors = [_("This date is in the future: enter the day you found it.")]
            return None
        if day < earliest:
            max_age = int(current_app.config["TRACKABLE_OBSERVED_MAX_AGE_DAYS"])
            self.seen_on.errors = [_("Enter a day within the last %(count)d days.", count=max_age)]
            return None
        return min(datetime.combine(day, time(12), tzinfo=UTC), utcnow())

    def day_bounds(self) -> tuple[date, date]:
        """The first and the last day "seen on" takes: within the API's maximum age
        (TRACKABLE_OBSERVED_MAX_AGE_DAYS) and not after today anywhere on earth."""
        now = utcnow()
        max_age = timedelta(days=int(current_app.config["TRACKABLE_OBSERVED_MAX_AGE_DAYS"]))
        return (now - max_age).date() + timedelta(days=1), (now + EARLIEST_ZONE).date()


def file_size(count: int) -> str:
    """A byte count as the page's language writes it: in KB below a megabyte (at least
    1 KB), else in MB to a tenth: `12 KB`, `20 MB`, `1,5 MB`."""
    if count < 1024 * 1024:
        return f"{format_decimal(max(1, -(-count // 1024)))} KB"
    return f"{format_decimal(count / (1024 * 1024), format='#,##0.#')} MB"


DATE_EXAMPLE = "2026-05-17"
EARLIEST_ZONE = timedelta(hours=14)  # UTC+14 (Kiribati): the first place a day begins


def coordinate_error(problem: Problem, axis: Axis) -> str:
    """Why a typed latitude or longitude was refused, in words, with that axis's examples."""
    latitude = axis is Axis.LATITUDE
    example = coordinate_examples(axis)
    if problem is Problem.EMPTY:
        if latitude:
            return _("Enter the latitude too, such as %(example)s.", example=example)
        return _("Enter the longitude too, such as %(example)s.", example=example)
    if problem is Problem.WRONG_LETTER:
        if latitude:
            return _("A latitude takes N or S, such as %(example)s.", example=example)
        return _("A longitude takes E or W, such as %(example)s.", example=example)
    if problem is Problem.SIXTY:
        return _("Minutes and seconds must be less than 60, such as %(example)s.", example=example)
    if problem is Problem.OUT_OF_RANGE:
        if latitude:
            return _("A latitude lies from -90 to 90 (90° S to 90° N).")
        return _("A longitude lies from -180 to 180 (180° W to 180° E).")
    if problem is Problem.AMBIGUOUS:
        return _(
            "This can be read more than one way: use a sign or a letter, not both, and "
            "decimals only on the last number, such as %(example)s.",
            example=example,
        )
    if latitude:
        return _("Enter the latitude in degrees, such as %(example)s.", example=example)
    return _("Enter the longitude in degrees, such as %(example)s.", example=example)


# Zurich, the examples' point, as (decimal degrees, hemisphere letter, degrees, decimal
# minutes, minutes, seconds).
EXAMPLE_POINT = {
    Axis.LATITUDE: (47.3769, "N", 47, 22.614, 22, 36.8),
    Axis.LONGITUDE: (8.5417, "E", 8, 32.502, 32, 30.1),
}


def decimal_example(axis: Axis) -> str:
    """That axis's example in decimal degrees, with the page language's decimal sign
    (the form reads a decimal point and a decimal comma alike)."""
    return format_decimal(EXAMPLE_POINT[axis][0], format="0.0000")


def coordinate_examples(axis: Axis) -> str:
    """That axis's examples in the page's language, one per notation the form reads,
    with its decimal sign and the catalogue's words between them ("or", "oder")."""
    _decimal, letter, degrees, decimal_minutes, minutes, seconds = EXAMPLE_POINT[axis]
    return _(
        "%(decimal)s, %(minutes)s or %(seconds)s",
        decimal=decimal_example(axis),
        minutes=f"{letter} {degrees}° {format_decimal(decimal_minutes, format='0.000')}'",
        seconds=f"{degrees}°{minutes}'{format_decimal(seconds, format='0.0')}\"{letter}",
    )


class SignInForm(FlaskForm):
    """Sign in with an account: email and password, and the two-factor code (or a
    recovery code) when the account asks for one."""

    class Meta:
        csrf = False  # checked once for the whole blueprint (pages.check_csrf)

    email = StringField(
        _l("Email"),
        validators=[DataRequired(message=_l("Enter your email address.")), Length(max=256)],
        filters=[_strip],
    )
    password = PasswordField(
        _l("Password"),
        validators=[DataRequired(message=_l("Enter your password.")), Length(max=1024)],
    )
    code = StringField(
        _l("Code from your authenticator app"),
        validators=[Length(max=64)],
        filters=[_strip],
    )


class ActivateForm(FlaskForm):
    """Activation on the landing: the trackable's name, and whose it becomes ("personal"
    or the id of one of the caller's teams; the service decides which teams qualify)."""

    class Meta:
        csrf = False  # checked once for the whole blueprint (pages.check_csrf)

    name = StringField(
        validators=[
            Length(
                max=TRACKABLE_NAME_MAX_LENGTH,
                message=_l(
                    "A name may be at most %(count)d characters long.",
                    count=TRACKABLE_NAME_MAX_LENGTH,
                ),
            )
        ],
        filters=[_strip],
    )
    context = StringField(default="personal", filters=[_strip])

    def validate_context(self, field: Field) -> None:
        if field.data in (None, "", "personal"):
            field.data = "personal"
            return
        try:
            uuid.UUID(str(field.data))
        except ValueError as error:
            raise ValidationError(str(_l("Choose personal or one of your teams."))) from error

    @property
    def team_id(self) -> uuid.UUID | None:
        return None if self.context.data == "personal" else uuid.UUID(str(self.context.data))


class MailSettingsForm(FlaskForm):
    """The notification mail settings: the API's `mail` and `language`, both required
    (the page always sends both), the choices the API takes."""

    class Meta:
        csrf = False  # checked once for the whole blueprint (pages.check_csrf)

    mail = RadioField(
        _l("Mail me about notifications"),
        choices=[
            SelectChoice(MailChoice.NONE.value, _l("Never")),
            SelectChoice(MailChoice.EACH.value, _l("At once, one mail per notification")),
            SelectChoice(MailChoice.DAILY.value, _l("Once a day, in a digest")),
        ],
        validate_choice=False,  # validate_mail says it in words
    )
    # Each language in its own words (English, Deutsch), as a language menu shows them.
    language = SelectField(
        _l("Language of the mail"),
        choices=[
            SelectChoice(code, (Locale.parse(code).get_display_name(code) or code).capitalize())
            for code in MAIL_LANGUAGES
        ],
        validate_choice=False,  # validate_language says it in words
    )

    def validate_mail(self, field: Field) -> None:
        if field.data not in {choice.value for choice in MailChoice}:
            raise ValidationError(_("Choose how often mail tells you: never, at once or daily."))

    def validate_language(self, field: Field) -> None:
        if field.data not in MAIL_LANGUAGES:
            raise ValidationError(_("Choose one of the languages listed."))

    @property
    def choice(self) -> MailChoice:
        """The chosen setting, once validated."""
        return MailChoice(self.mail.data)


WATCH_KINDS = ("trackable", "group", "area")


class WatchRemovalForm(FlaskForm):
    """ "Stop watching" beside one watch on the settings page: its kind (`WATCH_KINDS`)
    and its target's id (a trackable's, a group's, or the area watch's own)."""

    class Meta:
        csrf = False  # checked once for the whole blueprint (pages.check_csrf)

    kind = HiddenField()
    target = HiddenField()

    def validate_kind(self, field: Field) -> None:
        if field.data not in WATCH_KINDS:
            raise ValidationError(_("This form was not complete: reload the page."))

    def validate_target(self, field: Field) -> None:
        try:
            uuid.UUID(str(field.data or ""))
        except ValueError as error:
            raise ValidationError(_("This form was not complete: reload the page.")) from error

    @property
    def target_id(self) -> uuid.UUID:
        """The target's id, once validated."""
        return uuid.UUID(str(self.target.data))

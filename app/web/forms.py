"""The website's forms, one WTForms class each (Flask-WTF): what a form takes and how its
fields are checked. The CSRF token is checked for every POST of the pages blueprint
(app.web.pages), so these classes leave it to that one check."""

from __future__ import annotations

from flask_babel import lazy_gettext as _l
from flask_wtf import FlaskForm
from wtforms import StringField
from wtforms.validators import DataRequired, Length

# Longer than any code the service issues (the QR token is 100 characters); what is
# longer matches nothing and is refused before a lookup counts it.
CODE_MAX_LENGTH = 200


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
        filters=[lambda value: value.strip() if isinstance(value, str) else value],
    )

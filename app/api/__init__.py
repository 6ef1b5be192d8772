"""API blueprints, one per area of the contract, on one flask-smorest Api."""

from __future__ import annotations

from flask import Flask

from app.api.base import Api

api = Api()


def register_blueprints(app: Flask) -> None:
    from app.api.categories.routes import blp as categories_blp
    from app.api.categories.routes import team_blp as team_categories_blp
    from app.api.compliance import blp as compliance_blp
    from app.api.identity import blp as identity_blp
    from app.api.images import blp as images_blp
    from app.api.links.routes import blp as links_blp
    from app.api.notes.routes import blp as notes_blp
    from app.api.notifications import blp as notifications_blp
    from app.api.privacy import blp as privacy_blp
    from app.api.sync.routes import blp as sync_blp
    from app.api.system.routes import blp as system_blp
    from app.api.teams import blp as teams_blp
    from app.api.trackables import blp as trackables_blp
    from app.api.watches import blp as watches_blp
    from app.api.webhooks import blp as webhooks_blp
    from app.api.webhooks.documentation import document_webhooks

    api.init_app(app)
    for blueprint in (
        system_blp,
        links_blp,
        identity_blp,
        privacy_blp,
        notes_blp,
        categories_blp,
        teams_blp,
        team_categories_blp,
        trackables_blp,
        notifications_blp,
        watches_blp,
        webhooks_blp,
        compliance_blp,
        images_blp,
        sync_blp,
    ):
        api.register_blueprint(blueprint)
    document_webhooks(api.spec)

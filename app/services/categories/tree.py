"""Category trees (contract: Categories; Category resource).

Written once for every owner scope (`OwnerScope.personal` or `.team`); each content
language has its own forest. A category's parent is in the same scope and language; a
category keeps its language (its notes are written in it). Moving under its own subtree is
refused. Delete never loses a note: live notes and child categories move to the parent, a
root that still holds either cannot be deleted, and the category stays as a tombstone. A
note with no category goes to the language's default root, "Notes", made on demand.
"""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

from sqlalchemy import delete, func, select, update

from app.auth import Viewer
from app.error_codes import Code
from app.errors import ApiError, NotFound, ValidationFailed
from app.extensions import db
from app.models.base import utcnow
from app.models.category import DEFAULT_CATEGORY_NAME, Category, OwnerScope
from app.models.note import Note
from app.models.user import User
from app.platform.database import first_in_transaction, lock_for_write
from app.policies import categories as category_policy
from app.services.shared.account_deletion import DeletionCounts
from app.services.shared.languages import canonical_language
from app.services.shared.pages import Key, Listing, Page, page_of


def _live(scope: OwnerScope) -> Any:
    return select(Category).where(scope.where(Category), Category.is_deleted.is_(False))


def lock_tree(scope: OwnerScope, *, reread: bool = True) -> None:
    """Serialise the scope's tree changes that read to decide (a move's cycle check, the
    "Notes" root made on demand, a sync push's base version): two crossing moves cannot
    both pass their check. Every change of an existing category (move, delete) takes it,
    and so does every write that files a note or a category into one (`_referenced`,
    `default_category`), so a category read under it stays as read until the commit: a
    note cannot land in a category deleted meanwhile. Taken once per transaction."""
    lock_for_write(db.session, f"category-tree:{scope.user_id}:{scope.team_id}", reread=reread)


def _sort_key(category: Category) -> Key:
    return (category.content_language, category.name.casefold(), str(category.id))


def _ordered(categories: list[Category]) -> list[Category]:
    return sorted(categories, key=_sort_key)


def get_category(scope: OwnerScope, category_id: uuid.UUID) -> Category:
    """A live category of this scope, or 404."""
    category = db.session.scalar(_live(scope).where(Category.id == category_id))
    if category is None:
        raise NotFound("Category not found.", code=Code.CATEGORY_NOT_FOUND)
    return category


def _referenced(scope: OwnerScope, category_id: uuid.UUID, field: str) -> Category:
    """A category named in a request body, read under the tree's lock (`lock_tree`): 400
    naming the field when it does not resolve. Read afresh once per transaction, then
    from the session's identity map: a batch naming one category (a sync push) loads it
    once."""
    category = _fresh(scope, category_id)
    if category is None or category.is_deleted or not scope.contains(category):
        raise ValidationFailed({field: ["No such category in this tree."]})
    return category


def _fresh(scope: OwnerScope, category_id: uuid.UUID) -> Category | None:
    """The category as it is under the tree's lock: the first time this transaction asks,
    the lock is taken and a copy the session holds from before it is read again; after
    that the session's copy is current."""
    if not first_in_transaction(db.session, ("category", category_id)):
        return db.session.get(Category, category_id)
    lock_tree(scope, reread=False)
    return db.session.get(Category, category_id, populate_existing=True)


def list_categories(
    viewer: Viewer,
    scope: OwnerScope,
    content_language: str | None = None,
    *,
    page: Page | None = None,
) -> Listing[Category]:
    """Every live category of the scope, by language then name (case-folded, which SQL
    cannot say alike on both databases: sorted here); all of them or one `page`."""
    return page_of(_categories(viewer, scope, content_language), _sort_key, page)


def _categories(viewer: Viewer, scope: OwnerScope, content_language: str | None) -> list[Category]:
    category_policy.require_scope(viewer, scope)
    query = _live(scope)
    if content_language:
        query = query.where(Category.content_language == canonical_language(content_language))
    return _ordered(list(db.session.scalars(query)))


def _node(category: Category, counts: Counter[uuid.UUID]) -> dict[str, Any]:
    return {
        "category_id": category.id,
        "name": category.name,
        "content_language": category.content_language,
        "parent_category_id": category.parent_category_id,
        "child_category_count": counts[category.id],
    }


def tree(viewer: Viewer, scope: OwnerScope, content_language: str | None = None) -> list[dict]:
    """The whole forest, nested: root nodes with `children`, recursively."""
    categories = _categories(viewer, scope, content_language)
    counts = Counter(c.parent_category_id for c in categories if c.parent_category_id)
    nodes = {c.id: {**_node(c, counts), "children": []} for c in categories}
    roots: list[dict] = []
    for category in categories:  # already ordered, so children come out ordered too
        parent = nodes.get(category.parent_category_id) if category.parent_category_id else None
        (parent["children"] if parent else roots).append(nodes[category.id])
    return roots


def sections(viewer: Viewer, scope: OwnerScope, content_language: str | None = None) -> list[dict]:
    """One section per content language: its root categories with their child counts."""
    categories = _categories(viewer, scope, content_language)
    counts = Counter(c.parent_category_id for c in categories if c.parent_category_id)
    result: dict[str, list[dict]] = {}
    for category in categories:
        section = result.setdefault(category.content_language, [])
        if category.parent_category_id is None:
            section.append(_node(category, counts))
    return [
        {"content_language": language, "root_categories": roots}
        for language, roots in result.items()
    ]


def children(
    viewer: Viewer,
    scope: OwnerScope,
    parent_category_id: uuid.UUID | None = None,
    content_language: str | None = None,
) -> list[dict]:
    """Direct children of a category (404 when it is not in the tree), or the roots."""
    category_policy.require_scope(viewer, scope)
    if parent_category_id is not None:
        get_category(scope, parent_category_id)
    query = _live(scope).where(Category.parent_category_id == parent_category_id)
    if content_language:
        query = query.where(Category.content_language == canonical_language(content_language))
    found = _ordered(list(db.session.scalars(query)))
    counts: Counter[uuid.UUID] = Counter()
    if found:
        rows = db.session.execute(
            select(Category.parent_category_id, func.count())  # (parent id, count) pairs
            .where(
                Category.parent_category_id.in_([c.id for c in found]),
                Category.is_deleted.is_(False),
            )
            .group_by(Category.parent_category_id)
        )
        counts.update({parent: count for parent, count in rows.all() if parent})
    return [_node(category, counts) for category in found]


def create_category(
    viewer: Viewer,
    scope: OwnerScope,
    *,
    name: str,
    content_language: str | None = None,
    parent_category_id: uuid.UUID | None = None,
    default_language: str,
    category_id: uuid.UUID | None = None,
) -> Category:
    """A new category; without a parent it is a root of its language's forest. Its
    language: `content_language`, else the parent's, else the team's for a team tree,
    else `default_language`. `category_id` is a client's own id (sync), else a new one."""
    team = category_policy.require_scope(viewer, scope)
    if team is not None:
        default_language = team.content_language
    language = canonical_language(content_language) if content_language else None
    parent = None
    if parent_category_id is not None:
        parent = _referenced(scope, parent_category_id, "parentCategoryId")
        if language is not None and language != parent.content_language:
            raise _language_mismatch("parentCategoryId", parent)
        language = parent.content_language
    category = Category(
        id=category_id or uuid.uuid4(),
        owner_user_id=None if scope.is_team else scope.user_id,
        team_id=scope.team_id,
        parent_category_id=parent.id if parent else None,
        name=name,
        content_language=language or canonical_language(default_language),
    )
    db.session.add(category)
    db.session.flush()
    return category


def _language_mismatch(field: str, category: Category) -> ValidationFailed:
    return ValidationFailed(
        {field: [f"That category is in content language {category.content_language}."]}
    )


def move_category(
    viewer: Viewer, scope: OwnerScope, category_id: uuid.UUID, changes: dict[str, Any]
) -> Category:
    """Rename and/or re-parent (fields present are applied); a cycle is refused."""
    category_policy.require_scope(viewer, scope)
    lock_tree(scope)
    category = get_category(scope, category_id)
    language = changes.get("content_language")
    if language and canonical_language(language) != category.content_language:
        raise ValidationFailed(
            {"contentLanguage": ["A category keeps its content language; create one instead."]}
        )
    # Everything is checked before anything is applied: a refused move changes nothing.
    parent_id = category.parent_category_id
    if "parent_category_id" in changes:
        parent_id = _checked_parent(scope, category, changes["parent_category_id"])
    if "name" in changes:
        category.name = changes["name"]
    category.parent_category_id = parent_id
    category.updated_utc = utcnow()
    db.session.flush()
    return category


def _checked_parent(
    scope: OwnerScope, category: Category, parent_id: uuid.UUID | None
) -> uuid.UUID | None:
    if parent_id is None:
        return None
    parent = _referenced(scope, parent_id, "parentCategoryId")
    if parent.content_language != category.content_language:
        raise _language_mismatch("parentCategoryId", parent)
    parents = dict(
        db.session.execute(
            select(Category.id, Category.parent_category_id).where(scope.where(Category))
        ).all()
    )
    cursor: uuid.UUID | None = parent.id
    while cursor is not None:  # walk up from the new parent; meeting ourselves is a cycle
        if cursor == category.id:
            raise ValidationFailed(
                {"parentCategoryId": ["A category cannot move inside its own subtree."]}
            )
        cursor = parents.get(cursor)
    return parent.id


def delete_category(viewer: Viewer, scope: OwnerScope, category_id: uuid.UUID) -> None:
    """Tombstone a category; its live notes and child categories move up to its parent."""
    category_policy.require_scope(viewer, scope)
    lock_tree(scope)
    category = get_category(scope, category_id)
    now = utcnow()
    child_filter = (Category.parent_category_id == category.id, Category.is_deleted.is_(False))
    note_filter = (Note.category_id == category.id, Note.is_deleted.is_(False))
    if category.parent_category_id is None:
        has_children = db.session.scalar(
            select(func.count()).select_from(Category).where(*child_filter)
        )
        has_notes = db.session.scalar(select(func.count()).select_from(Note).where(*note_filter))
        if has_children or has_notes:
            raise ApiError(
                "A root category that still holds notes or categories cannot be deleted: "
                "move or delete them first.",
                code=Code.CATEGORY_NOT_EMPTY,
            )
    else:
        db.session.execute(
            update(Category)
            .where(*child_filter)
            .values(parent_category_id=category.parent_category_id, updated_utc=now)
        )
        db.session.execute(
            update(Note)
            .where(*note_filter)
            .values(category_id=category.parent_category_id, updated_utc=now)
        )
    category.is_deleted = True
    category.updated_utc = now
    db.session.flush()


def default_category(scope: OwnerScope, content_language: str) -> Category:
    """The language's "Notes" root of this scope, read under the tree's lock (a root is
    deleted only when empty, under the same lock) and created on first use (once: two
    first notes share one)."""
    language = canonical_language(content_language)
    query = (
        _live(scope)
        .where(
            Category.content_language == language,
            Category.parent_category_id.is_(None),
            Category.name == DEFAULT_CATEGORY_NAME,
        )
        .order_by(Category.created_utc, Category.id)
        .limit(1)
    )
    lock_tree(scope, reread=False)
    found = db.session.scalar(query.execution_options(populate_existing=True))
    if found is not None:
        return found
    category = Category(
        owner_user_id=None if scope.is_team else scope.user_id,
        team_id=scope.team_id,
        name=DEFAULT_CATEGORY_NAME,
        content_language=language,
    )
    db.session.add(category)
    db.session.flush()
    return category


def category_for_note(
    scope: OwnerScope, category_id: uuid.UUID | None, content_language: str | None
) -> Category | None:
    """The category a note names (400 when it is not a live category of the same scope and
    language), or None when it names none."""
    if category_id is None:
        return None
    category = _referenced(scope, category_id, "categoryId")
    if content_language and canonical_language(content_language) != category.content_language:
        raise _language_mismatch("categoryId", category)
    return category


def delete_account_categories(user: User, counts: DeletionCounts) -> None:
    """Hard-delete the user's personal categories (after their notes)."""
    mine = Category.owner_user_id == user.id
    counts.categories_deleted += (
        db.session.scalar(
            select(func.count()).select_from(Category).where(mine, Category.is_deleted.is_(False))
        )
        or 0
    )
    # Unlink first: the tree's self-reference must not block deleting it in one statement.
    db.session.execute(update(Category).where(mine).values(parent_category_id=None))
    db.session.execute(delete(Category).where(mine))

"""Category trees (contract: Categories): one tree per owner scope (a user's, a team's)
and content language."""

from app.services.categories.tree import (
    canonical_language,
    category_for_note,
    children,
    create_category,
    default_category,
    delete_account_categories,
    delete_category,
    list_categories,
    lock_tree,
    move_category,
    sections,
    tree,
)

__all__ = [
    "canonical_language",
    "category_for_note",
    "children",
    "create_category",
    "default_category",
    "delete_account_categories",
    "delete_category",
    "list_categories",
    "lock_tree",
    "move_category",
    "sections",
    "tree",
]

"""Who may see or do what. Policies answer questions and raise NotFound/Forbidden; they
never write. Each rule is written once, with its predicate, SQL and load-or-404 forms
side by side (STYLE.md, section 3)."""

from app.policies import notes, teams

__all__ = ["notes", "teams"]

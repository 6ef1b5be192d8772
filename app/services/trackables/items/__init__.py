"""Trackables and groups: creation, reads, groups, activation, attaching to notes, secret
rotation, watches, feeds, and what deleting an account does to them."""

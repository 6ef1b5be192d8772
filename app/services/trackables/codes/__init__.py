"""Codes and lookup: code formats and keys, issuing, lookup, the guess budget, access
sessions for secret codes, and who holds a code (possession)."""

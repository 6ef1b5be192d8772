"""Data files shipped with the application (package data)."""

"""Printable labels: which items may be printed, and the sheets' layouts and drawing."""

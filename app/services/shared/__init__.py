"""What several areas use and none owns: map areas (bounds, circles), the external-link
rule, and the account-deletion run. Its modules are imported directly; it imports no area."""

"""What several areas use and none owns: map areas (bounds, circles), the external-link
rule, the account-deletion run, and the budgets counted in the database. Its modules are
imported directly; it imports no area."""

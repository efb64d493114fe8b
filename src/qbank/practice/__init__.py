"""Practice tests and code drills: content model, loading with positions, cross-checks and answer keys."""

"""Social cards: one PNG per page, drawn at build with a font that ships with the project (no font service)."""

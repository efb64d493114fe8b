"""The seal's room: region markers the renderer places around answer parts, the HTML sanitizer, and
the premium text of the sources (for the leak scan and the ``premium-duplicated`` check)."""

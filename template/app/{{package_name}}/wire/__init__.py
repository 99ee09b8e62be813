"""The wire boundary: Welt's request in, checked and typed; the events Welt renders out."""

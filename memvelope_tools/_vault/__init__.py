"""A folder of Markdown notes, one per conversation, kept current export after export (see :mod:`.vault`)."""

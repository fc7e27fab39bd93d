"""A recall question made ready to search, prepared as records are (sanitized, its errors,
words, symbols, tags, tools and environment extracted)."""

__all__: list[str] = []  # the preparation of recall's question moves here (issue 14, item 2)

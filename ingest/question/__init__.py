"""A recall question made ready to search, prepared as records are (sanitized, its errors,
words, symbols, tags, tools and environment extracted)."""

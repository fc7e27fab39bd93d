"""The explorer page at /explore: a page and its script and sheet, served as they ship."""

from metisgraph.api.http.explorer.routes import explorer_routes

__all__ = ["explorer_routes"]

"""Cypher text: the schema and the named queries the code runs, as package data."""

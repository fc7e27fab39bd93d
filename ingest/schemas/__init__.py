"""The versioned JSON Schema of the input format, as package data."""

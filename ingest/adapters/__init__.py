"""Adapters from real agent trajectory formats and other record sources to memory records."""

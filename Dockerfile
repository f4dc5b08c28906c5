# plancord in a container: the Discord bot with git and ripgrep, its state in the /data volume.
#
#   docker build -t plancord .
#   docker run -d --name plancord --security-opt seccomp=seccomp-bubblewrap.json \
#       --security-opt apparmor=unconfined --security-opt systempaths=unconfined \
#       -e DISCORD_TOKEN -e ANTHROPIC_API_KEY -v plancord-data:/data plancord
#
# The baked /etc/plancord/config.yaml sets only data_dir: /data. For your own settings mount a
# file over it, keeping data_dir: /data:
#   -v "$PWD/config.yaml:/etc/plancord/config.yaml:ro"
# /etc/plancord is the working directory, so commands inside the container find that config
# without --config:
#   docker exec plancord plancord doctor
#   docker exec plancord plancord plan status --agent NAME
# Agent commands run in bubblewrap, which needs user namespaces; Docker's default seccomp
# profile forbids them, hence the shipped profile and the two other options above (why each:
# docs/docker-sandbox.md; compose.example.yaml uses the same). Without them the weaker
# Landlock fallback is used (Linux 5.13 or later). plancord doctor reports the layer, and the
# health check fails when neither works unless the config sets sandbox.layer: off.

# Pinned to Debian 12: the plain python:3.11-slim tag moved to Debian 13 in August 2025.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PLANCORD_DATA_DIR=/data

RUN apt-get update \
    && apt-get install -y --no-install-recommends git ripgrep bubblewrap gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*

RUN groupadd --system --gid 10001 plancord \
    && useradd --system --uid 10001 --gid plancord --create-home --home-dir /home/plancord \
        --shell /usr/sbin/nologin plancord

WORKDIR /app
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install --no-cache-dir .
# The plan-mode Landlock wall as a native program (landlock-exec), beside the package, so a
# planning command does not start a Python interpreter for it (docs/security.md).
# The compiler is needed only for that: removed in the same layer.
RUN python -m plancord.sandbox \
    && apt-get purge -y --auto-remove gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*

RUN mkdir -p /etc/plancord /data \
    && printf 'data_dir: /data\n' > /etc/plancord/config.yaml \
    && chown plancord:plancord /data \
    && chmod 700 /data

VOLUME ["/data"]
WORKDIR /etc/plancord
USER plancord

HEALTHCHECK --interval=1m --timeout=10s --start-period=30s --retries=3 \
    CMD ["plancord", "doctor", "--config", "/etc/plancord/config.yaml"]

CMD ["plancord", "run", "--config", "/etc/plancord/config.yaml"]

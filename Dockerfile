# The volcano-py image, one for the three processes (scheduler, controllers, webhooks) and the
# webhooks' certificate Job. Build: `make image` (volcano-py:<version>, the name deploy/ and
# the Helm chart use). Run as Volcano's scheduler would:
#   volcano-py scheduler --scheduler-conf=/volcano.scheduler/volcano-scheduler.conf
# Two stages: the first builds the wheel and installs it with its dependencies into a virtual
# environment; the second is the slim Python base with that environment only (no pip cache,
# no build tools, no sources).
FROM python:3.11-slim AS build
WORKDIR /src
RUN python -m venv /opt/volcano-py
COPY pyproject.toml README.md ./
COPY volcano_py ./volcano_py
RUN /opt/volcano-py/bin/pip install --no-cache-dir . \
    && /opt/volcano-py/bin/pip uninstall -y pip

FROM python:3.11-slim
COPY --from=build /opt/volcano-py /opt/volcano-py
# Run as an unprivileged user and group, 65532:65532 (deploy/base's runAsUser/runAsGroup;
# tests/operator/test_pod_security.py keeps them equal). The processes write nothing but /tmp
# (the scheduler's --cache-dump-dir default, the kubernetes client's temporary CA files from
# a kubeconfig with inline data), which deploy/base mounts as an emptyDir under a read-only
# root filesystem; no bytecode caches are written at run time (pip compiled them at install).
RUN groupadd --gid 65532 volcano \
    && useradd --uid 65532 --gid 65532 --no-create-home --shell /usr/sbin/nologin volcano
ENV PATH=/opt/volcano-py/bin:$PATH PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
USER 65532:65532
ENTRYPOINT ["volcano-py"]
CMD ["scheduler", "--scheduler-conf=/volcano.scheduler/volcano-scheduler.conf"]

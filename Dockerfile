# volcano-py scheduler image. Build: docker build -t volcano-py:dev .
# Run as Volcano's scheduler would: volcano-py scheduler --scheduler-conf=/volcano.scheduler/volcano-scheduler.conf
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY volcano_py ./volcano_py
RUN pip install --no-cache-dir --prefix=/install .

FROM python:3.11-slim
COPY --from=build /install /usr/local
# Run as an unprivileged user and group, 65532:65532 (deploy/base's runAsUser/runAsGroup;
# tests/operator/test_pod_security.py keeps them equal). The processes write nothing but /tmp
# (the scheduler's --cache-dump-dir default, the kubernetes client's temporary CA files from
# a kubeconfig with inline data), which deploy/base mounts as an emptyDir under a read-only
# root filesystem; no bytecode caches are written at run time (pip compiled them at install).
RUN groupadd --gid 65532 volcano \
    && useradd --uid 65532 --gid 65532 --no-create-home --shell /usr/sbin/nologin volcano
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
USER 65532:65532
ENTRYPOINT ["volcano-py"]
CMD ["scheduler", "--scheduler-conf=/volcano.scheduler/volcano-scheduler.conf"]

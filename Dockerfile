# volcano-py scheduler image. Build: docker build -t volcano-py:dev .
# Run as Volcano's scheduler would: volcano-py scheduler --scheduler-conf=/volcano.scheduler/volcano-scheduler.conf
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY volcano_py ./volcano_py
RUN pip install --no-cache-dir --prefix=/install .

FROM python:3.11-slim
COPY --from=build /install /usr/local
# Run as an unprivileged user; the scheduler needs no filesystem writes.
RUN useradd --uid 65532 --no-create-home --shell /usr/sbin/nologin volcano
USER 65532
ENTRYPOINT ["volcano-py"]
CMD ["scheduler", "--scheduler-conf=/volcano.scheduler/volcano-scheduler.conf"]

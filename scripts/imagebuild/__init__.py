"""The daemonless, registry-free build of the volcano-py image (`make image`,
scripts/build_image.py): a Debian root filesystem assembled from .deb packages, the project's
wheel and its dependencies installed on top, written as an archive `docker load` and
`kind load image-archive` accept. Nothing here needs a container engine or root."""

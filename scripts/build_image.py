"""`make image`: the volcano-py image as an archive for `docker load` and
`kind load image-archive`, built without a container engine, a registry or root
(scripts/imagebuild). Usage: python scripts/build_image.py [--tag NAME:TAG] [--output PATH]
[--cache-dir DIR] [--refresh]"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

try:
    from imagebuild.build import main
except ImportError as error:  # installer, a dev dependency: make setup installs it
    sys.exit(f"build-image: {error}; run it with the project's virtualenv (make image)")

if __name__ == "__main__":
    sys.exit(main())

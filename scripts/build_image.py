"""`make image`: the volcano-py image as an archive for `docker load` and
`kind load image-archive`, built without a container engine, a registry or root
(scripts/imagebuild). Usage: python scripts/build_image.py [--tag NAME:TAG] [--output PATH]
[--cache-dir DIR] [--refresh]"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from imagebuild.build import main

if __name__ == "__main__":
    sys.exit(main())

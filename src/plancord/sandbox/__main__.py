"""``python -m plancord.sandbox``: build the native helpers beside the package (the image's
install step). A module of its own so that running it does not import ``wall_helper``
twice (``python -m plancord.sandbox.wall_helper`` warned so, the package imports it)."""

from __future__ import annotations

import sys

from plancord.sandbox.wall_helper import main

sys.exit(main())

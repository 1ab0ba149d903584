"""The shared science's names a config reads, in a module without analysis
(pandas): which init scales count as small and which as large, for C3 (E2) and C7 (E5) alike.

E2's and E5's configs take their ``verdict`` bounds' defaults from here (the contrast itself is
:mod:`.implicit_bias`), so an init scale cannot count as large in one claim and be dropped in the
other.
"""

from __future__ import annotations

#: Init scales up to this bound are small: the student starts far below the teacher's norm.
SMALL_INIT_MAX = 1e-2
#: Init scales from this bound are large: the init's own part is no longer negligible.
LARGE_INIT_MIN = 0.1

"""When a head's attention counts as content routing (C13), in a module without the mixer scores
(and their imports): E7's config reads the threshold as a default."""

from __future__ import annotations

#: Content must move at least this share of the attention mass (content TV) for a head to be
#: ``content`` — a quarter, half of what a 2-way router moves when content makes every choice. A
#: concentrated head has a tiny ceiling, and a small movement over it is a large share: trained
#: lag-copy heads move 4–28 % of their mass with content that nothing uses (content share 0.53–0.78).
#: Validated on fresh control models (bench/lm_controls/RESULTS.md): under 0.05, 5 of 6 fresh lag-8
#: models showed no positional head; under 0.25 all 12 fresh lag-copy models and the fresh recall
#: models agree. C13's robustness grid also decides at 0.05.
MIN_MOVED = 0.25

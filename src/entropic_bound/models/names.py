"""The models package's names a config reads, in a module without torch: the softmax temperatures a
student is built with (E3's config offers them as choices before any student is imported)."""

from __future__ import annotations

#: ``sqrt_d``: ``τ = √d`` (the softmax teacher's); ``sqrt_r``: ``τ_m = √r_m`` per member.
TEMPERATURES = ("sqrt_d", "sqrt_r")

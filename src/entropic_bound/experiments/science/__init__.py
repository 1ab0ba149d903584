"""Science shared by several experiments: attention teachers and their data (E4, E5), the init groups
and implicit-bias comparison (C3, C7).

What a config reads (the init groups) lives in :mod:`.names`, which imports no analysis (pandas).
"""

"""The model-zoo page: released models measured by ``inspect`` and the published figures they are compared with."""

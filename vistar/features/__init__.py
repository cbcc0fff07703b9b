"""Batched feature stages: each runs once per image and is shared by every metric that declares it."""

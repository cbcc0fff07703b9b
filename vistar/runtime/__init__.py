"""Where and how the computation runs (device choice, deterministic torch, precision, moving pixels to a device).

Below both `features` and `engine`: stages and the runner share these helpers without features importing the
engine. It imports only the contracts package (`vistar.api`).
"""

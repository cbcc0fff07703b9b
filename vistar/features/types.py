"""Feature value types now live in the contracts package; kept here so existing imports keep working."""
from ..api.values import Instances, mask_box

__all__ = ["Instances", "mask_box"]

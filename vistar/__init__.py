"""vistar: deterministic computer-vision metric engine for text-to-image evaluation."""
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("vistar")
except PackageNotFoundError:  # running from a source tree without install
    __version__ = "0.0.0+src"

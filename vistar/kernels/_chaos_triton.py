"""The Triton kernels behind `chaos.pair_stats_triton` (kept apart so importing `chaos` never needs triton).

Three passes per (pair, pixel block), each O(band_px) per pixel rather than O(band_px²):
contact map (A ∧ dilated B, or B ∧ dilated A) → row-wise max over ±band_px → column-wise max over ±band_px
(= Chebyshev band) fused with the accumulation of the four depth sums and counts into per-block partials.
Offsets are int64 (pair, mask index and program id widened before multiplying by H·W): in int32,
pair·H·W wraps past 2³¹ (2048 pairs of 1024²). Sums are float64, as in the reference, and each region picks
its depth with `where` so a non-finite depth outside it never reaches the sum (0·inf is NaN).
"""
import triton
import triton.language as tl


@triton.jit
def contact_kernel(mask_ptr, dil_ptr, pair_ptr, contact_ptr, HW, BLOCK: tl.constexpr):
    p = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    live = offs < HW
    i = tl.load(pair_ptr + 2 * p).to(tl.int64)
    j = tl.load(pair_ptr + 2 * p + 1).to(tl.int64)
    a = tl.load(mask_ptr + i * HW + offs, mask=live, other=0).to(tl.int32)
    b = tl.load(mask_ptr + j * HW + offs, mask=live, other=0).to(tl.int32)
    da = tl.load(dil_ptr + i * HW + offs, mask=live, other=0).to(tl.int32)
    db = tl.load(dil_ptr + j * HW + offs, mask=live, other=0).to(tl.int32)
    tl.store(contact_ptr + p * HW + offs, ((a & db) | (b & da)).to(tl.int8), mask=live)


@triton.jit
def row_max_kernel(src_ptr, dst_ptr, H, W, band_px, BLOCK: tl.constexpr):
    p = tl.program_id(0).to(tl.int64)
    hw = H * W
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    live = offs < hw
    x = offs % W
    acc = tl.zeros((BLOCK,), tl.int32)
    for dx in range(-band_px, band_px + 1):
        ok = live & (x + dx >= 0) & (x + dx < W)
        acc = acc | tl.load(src_ptr + p * hw + offs + dx, mask=ok, other=0).to(tl.int32)
    tl.store(dst_ptr + p * hw + offs, acc.to(tl.int8), mask=live)


@triton.jit
def band_stats_kernel(mask_ptr, rows_ptr, contact_ptr, depth_ptr, pair_ptr, partial_ptr, H, W, n_blocks, band_px,
                      BLOCK: tl.constexpr):
    p = tl.program_id(0).to(tl.int64)
    blk = tl.program_id(1)
    hw = H * W
    offs = blk * BLOCK + tl.arange(0, BLOCK)
    live = offs < hw
    y = offs // W
    in_band = tl.zeros((BLOCK,), tl.int32)
    for dy in range(-band_px, band_px + 1):
        ok = live & (y + dy >= 0) & (y + dy < H)
        in_band = in_band | tl.load(rows_ptr + p * hw + offs + dy * W, mask=ok, other=0).to(tl.int32)
    i = tl.load(pair_ptr + 2 * p).to(tl.int64)
    j = tl.load(pair_ptr + 2 * p + 1).to(tl.int64)
    a = tl.load(mask_ptr + i * hw + offs, mask=live, other=0).to(tl.int32)
    b = tl.load(mask_ptr + j * hw + offs, mask=live, other=0).to(tl.int32)
    d = tl.load(depth_ptr + offs, mask=live, other=0.0).to(tl.float64)
    near = in_band != 0
    a_only = (a != 0) & (b == 0)
    b_only = (b != 0) & (a == 0)
    contact = tl.load(contact_ptr + p * hw + offs, mask=live, other=0).to(tl.float64)
    base = partial_ptr + (p * n_blocks + blk) * 9
    far = in_band == 0
    a_near, b_near, a_far, b_far = a_only & near, b_only & near, a_only & far, b_only & far
    tl.store(base + 0, tl.sum(tl.where(a_near, d, 0.0), axis=0))
    tl.store(base + 1, tl.sum(a_near.to(tl.float64), axis=0))
    tl.store(base + 2, tl.sum(tl.where(b_near, d, 0.0), axis=0))
    tl.store(base + 3, tl.sum(b_near.to(tl.float64), axis=0))
    tl.store(base + 4, tl.sum(tl.where(a_far, d, 0.0), axis=0))
    tl.store(base + 5, tl.sum(a_far.to(tl.float64), axis=0))
    tl.store(base + 6, tl.sum(tl.where(b_far, d, 0.0), axis=0))
    tl.store(base + 7, tl.sum(b_far.to(tl.float64), axis=0))
    tl.store(base + 8, tl.sum(contact, axis=0))

"""The Triton kernel behind `chaos.pair_stats_triton` (kept apart so importing `chaos` never needs triton).

Program (p, blk) owns BLOCK pixels of pair p. A pixel is in the band when any pixel within band_px is a
contact pixel (A ∧ dilated B, or B ∧ dilated A), found by walking the (2·band_px+1)² window; it then adds its
depth and a count to one of four sets and writes the block's partial sums (and contact count) to `partial`.
"""
import triton
import triton.language as tl


@triton.jit
def chaos_pair_kernel(mask_ptr, dil_ptr, depth_ptr, pair_ptr, partial_ptr, H, W, n_blocks, band_px,
                      BLOCK: tl.constexpr):
    p = tl.program_id(0)
    blk = tl.program_id(1)
    i = tl.load(pair_ptr + 2 * p)
    j = tl.load(pair_ptr + 2 * p + 1)
    hw = H * W
    offs = blk * BLOCK + tl.arange(0, BLOCK)
    live = offs < hw
    y = offs // W
    x = offs % W
    in_band = tl.zeros((BLOCK,), tl.int32)
    for dy in range(-band_px, band_px + 1):
        for dx in range(-band_px, band_px + 1):
            qy = y + dy
            qx = x + dx
            ok = live & (qy >= 0) & (qy < H) & (qx >= 0) & (qx < W)
            q = qy * W + qx
            a_q = tl.load(mask_ptr + i * hw + q, mask=ok, other=0).to(tl.int32)
            b_q = tl.load(mask_ptr + j * hw + q, mask=ok, other=0).to(tl.int32)
            da_q = tl.load(dil_ptr + i * hw + q, mask=ok, other=0).to(tl.int32)
            db_q = tl.load(dil_ptr + j * hw + q, mask=ok, other=0).to(tl.int32)
            in_band = in_band | (a_q & db_q) | (b_q & da_q)
    a = tl.load(mask_ptr + i * hw + offs, mask=live, other=0).to(tl.int32)
    b = tl.load(mask_ptr + j * hw + offs, mask=live, other=0).to(tl.int32)
    da = tl.load(dil_ptr + i * hw + offs, mask=live, other=0).to(tl.int32)
    db = tl.load(dil_ptr + j * hw + offs, mask=live, other=0).to(tl.int32)
    d = tl.load(depth_ptr + offs, mask=live, other=0.0)
    a_only = (a & (1 - b)).to(tl.float32)
    b_only = (b & (1 - a)).to(tl.float32)
    band = in_band.to(tl.float32)
    base = partial_ptr + (p * n_blocks + blk) * 9
    tl.store(base + 0, tl.sum(d * a_only * band, axis=0))
    tl.store(base + 1, tl.sum(a_only * band, axis=0))
    tl.store(base + 2, tl.sum(d * b_only * band, axis=0))
    tl.store(base + 3, tl.sum(b_only * band, axis=0))
    tl.store(base + 4, tl.sum(d * a_only * (1.0 - band), axis=0))
    tl.store(base + 5, tl.sum(a_only * (1.0 - band), axis=0))
    tl.store(base + 6, tl.sum(d * b_only * (1.0 - band), axis=0))
    tl.store(base + 7, tl.sum(b_only * (1.0 - band), axis=0))
    tl.store(base + 8, tl.sum(((a & db) | (b & da)).to(tl.float32), axis=0))

"""The Triton kernel behind `lbp.lbp_triton` (apart so importing the module never needs triton).

Grid (B, pixel blocks). Each lane samples its 8 neighbours exactly as the reference does (float64,
bilinear, zeros outside), forms the code, stores it, and adds one to its tile's histogram bin when the
pixel lies inside the border. A pixel at inner row yc is in tile ((yc + 1)·T − 1) // h: the inverse of
the tile edges ⌊t·h / T⌋.
"""
import triton
import triton.language as tl


@triton.jit
def _sample(base, r, c, H, W, ok):
    inside = ok & (r >= 0) & (r < H) & (c >= 0) & (c < W)
    return tl.load(base + r * W + c, mask=inside, other=0.0)


@triton.jit
def lbp_kernel(img_ptr, table_ptr, codes_ptr, hist_ptr, H, W, border, h, w, T, BINS,
               UNIFORM: tl.constexpr, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < H * W
    y, x = offs // W, offs % W
    base = img_ptr + b * H * W
    centre = tl.load(base + offs, mask=ok, other=0.0)
    code = tl.zeros((BLOCK,), tl.int32)
    ones = tl.zeros((BLOCK,), tl.int32)
    changes = tl.zeros((BLOCK,), tl.int32)
    prev = tl.zeros((BLOCK,), tl.int32)
    for i in tl.static_range(8):
        r = y.to(tl.float64) + tl.load(table_ptr + i)
        c = x.to(tl.float64) + tl.load(table_ptr + 8 + i)
        r0f, c0f = tl.floor(r), tl.floor(c)
        r0, c0 = r0f.to(tl.int32), c0f.to(tl.int32)
        r1, c1 = tl.ceil(r).to(tl.int32), tl.ceil(c).to(tl.int32)
        dr, dc = r - r0f, c - c0f
        top = (1 - dc) * _sample(base, r0, c0, H, W, ok) + dc * _sample(base, r0, c1, H, W, ok)
        bottom = (1 - dc) * _sample(base, r1, c0, H, W, ok) + dc * _sample(base, r1, c1, H, W, ok)
        bit = (((1 - dr) * top + dr * bottom) - centre >= 0).to(tl.int32)
        code += bit << i
        ones += bit
        if i > 0:
            changes += tl.abs(bit - prev)
        prev = bit
    if UNIFORM:
        code = tl.where(changes <= 2, ones, 9)
    tl.store(codes_ptr + b * H * W + offs, code, mask=ok)
    yc, xc = y - border, x - border
    counted = ok & (yc >= 0) & (yc < h) & (xc >= 0) & (xc < w)
    tile = (((yc + 1) * T - 1) // h) * T + ((xc + 1) * T - 1) // w
    tl.atomic_add(hist_ptr + (b * T * T + tile) * BINS + code, 1, mask=counted)

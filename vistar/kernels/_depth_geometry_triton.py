"""Triton kernels behind `depth_geometry.depth_cues_triton` (apart so importing the module never needs triton).

Grid (B, pixel blocks). Coordinates follow `np.gradient`: the neighbours of x are clamp(x ± 1) and the
difference is divided by their distance (2 inside, 1 at a border). The window sum mirrors indices with the
edge pixel repeated (−1 → 0, W → W − 1), as `scipy.ndimage`'s "reflect" mode does.
"""
import triton
import triton.language as tl


@triton.jit
def normals_kernel(depth_ptr, normals_ptr, lap_ptr, H, W, side, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < H * W
    pix = tl.minimum(offs, H * W - 1)  # masked lanes read a real pixel, so no 0/0 below
    y, x = pix // W, pix % W
    base = depth_ptr + b * H * W
    xl, xr = tl.maximum(x - 1, 0), tl.minimum(x + 1, W - 1)
    yu, yd = tl.maximum(y - 1, 0), tl.minimum(y + 1, H - 1)
    d = tl.load(base + offs, mask=ok, other=0.0)
    d_l = tl.load(base + y * W + xl, mask=ok, other=0.0)
    d_r = tl.load(base + y * W + xr, mask=ok, other=0.0)
    d_u = tl.load(base + yu * W + x, mask=ok, other=0.0)
    d_d = tl.load(base + yd * W + x, mask=ok, other=0.0)
    gx = (d_r - d_l) * side / (xr - xl).to(tl.float32)
    gy = (d_d - d_u) * side / (yd - yu).to(tl.float32)
    inv = 1.0 / tl.sqrt(gx * gx + gy * gy + 1.0)
    out = normals_ptr + b * 3 * H * W + offs
    tl.store(out, -gx * inv, mask=ok)
    tl.store(out + H * W, -gy * inv, mask=ok)
    tl.store(out + 2 * H * W, inv, mask=ok)
    inside = (x > 0) & (x < W - 1) & (y > 0) & (y < H - 1)
    lap = tl.abs(d_l + d_r + d_u + d_d - 4.0 * d)
    tl.store(lap_ptr + b * H * W + offs, tl.where(inside, lap, 0.0), mask=ok)


@triton.jit
def dispersion_kernel(normals_ptr, cos_sin_ptr, H, W, WINDOW: tl.constexpr, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < H * W
    y, x = offs // W, offs % W
    base = normals_ptr + b * 3 * H * W
    mx = tl.zeros((BLOCK,), tl.float32)
    my = tl.zeros((BLOCK,), tl.float32)
    mz = tl.zeros((BLOCK,), tl.float32)
    for dy in tl.static_range(WINDOW):
        yy = y + dy - WINDOW // 2
        yy = tl.where(yy < 0, -yy - 1, yy)
        yy = tl.where(yy >= H, 2 * H - yy - 1, yy)
        for dx in tl.static_range(WINDOW):
            xx = x + dx - WINDOW // 2
            xx = tl.where(xx < 0, -xx - 1, xx)
            xx = tl.where(xx >= W, 2 * W - xx - 1, xx)
            p = base + yy * W + xx
            mx += tl.load(p, mask=ok, other=0.0)
            my += tl.load(p + H * W, mask=ok, other=0.0)
            mz += tl.load(p + 2 * H * W, mask=ok, other=1.0)
    inv = 1.0 / tl.maximum(tl.sqrt(mx * mx + my * my + mz * mz), 1e-12)
    mx, my, mz = mx * inv, my * inv, mz * inv
    nx = tl.load(base + offs, mask=ok, other=0.0)
    ny = tl.load(base + H * W + offs, mask=ok, other=0.0)
    nz = tl.load(base + 2 * H * W + offs, mask=ok, other=1.0)
    cx, cy, cz = ny * mz - nz * my, nz * mx - nx * mz, nx * my - ny * mx
    out = cos_sin_ptr + b * 2 * H * W + offs
    tl.store(out, nx * mx + ny * my + nz * mz, mask=ok)
    tl.store(out + H * W, tl.sqrt(cx * cx + cy * cy + cz * cz), mask=ok)

"""The Triton kernel behind `cosine.cosine_max_triton` (kept apart so importing `cosine` never needs triton).

One program owns BLOCK_M columns (rows of B); it walks A in BLOCK_N tiles and D in BLOCK_D chunks,
accumulating dot products and both squared norms in float32, writes the cosine tile, and keeps a
running column max. A later tile replaces the max only when strictly larger, so ties go to the first row.
"""
import triton
import triton.language as tl


@triton.jit
def cosine_max_kernel(a_ptr, b_ptr, sim_ptr, max_ptr, arg_ptr, N, M, D, eps,
                      BLOCK_N: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_D: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    col_ok = cols < M
    best = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    best_row = tl.zeros((BLOCK_M,), tl.int32)
    for n0 in range(0, N, BLOCK_N):
        rows = n0 + tl.arange(0, BLOCK_N)
        row_ok = rows < N
        dot = tl.zeros((BLOCK_N, BLOCK_M), tl.float32)
        sq_a = tl.zeros((BLOCK_N,), tl.float32)
        sq_b = tl.zeros((BLOCK_M,), tl.float32)
        for d0 in range(0, D, BLOCK_D):
            ks = d0 + tl.arange(0, BLOCK_D)
            k_ok = ks < D
            a = tl.load(a_ptr + rows[:, None] * D + ks[None, :], mask=row_ok[:, None] & k_ok[None, :], other=0.0)
            b = tl.load(b_ptr + cols[:, None] * D + ks[None, :], mask=col_ok[:, None] & k_ok[None, :], other=0.0)
            dot += tl.sum(a[:, None, :] * b[None, :, :], axis=2)
            sq_a += tl.sum(a * a, axis=1)
            sq_b += tl.sum(b * b, axis=1)
        norm_a = tl.maximum(tl.sqrt(sq_a), eps)
        norm_b = tl.maximum(tl.sqrt(sq_b), eps)
        sim = dot / (norm_a[:, None] * norm_b[None, :])
        tl.store(sim_ptr + rows[:, None] * M + cols[None, :], sim, mask=row_ok[:, None] & col_ok[None, :])
        masked = tl.where(row_ok[:, None], sim, float("-inf"))
        tile_max = tl.max(masked, axis=0)
        tile_arg = tl.argmax(masked, axis=0).to(tl.int32) + n0
        better = tile_max > best
        best = tl.where(better, tile_max, best)
        best_row = tl.where(better, tile_arg, best_row)
    tl.store(max_ptr + cols, best, mask=col_ok)
    tl.store(arg_ptr + cols, best_row, mask=col_ok)

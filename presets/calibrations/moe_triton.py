"""A sorted-token MoE grouped GEMM in Triton, the scheme of the serving stacks' Triton MoE kernels
(vLLM's and SGLang's fused_moe on Hopper), written here from that scheme for moe_bench.py.

The (token, expert) rows are sorted by expert and each expert's rows padded to BLOCK_M with a
sentinel; every program computes one BLOCK_M x BLOCK_N tile of one expert's output, reading its
rows through the sorted ids (a gather) and the expert's weight tile. bf16, or FP8 e4m3 with
DeepSeek-V3's block scales (weights per 128 x 128 block, activations per token and 128 columns),
each K step scaled on the CUDA cores before it joins the fp32 sum.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _moe_gemm(a_ptr, b_ptr, c_ptr, a_scale_ptr, b_scale_ptr, sorted_ids_ptr, block_expert_ptr, rows, N, K,
              stride_be, stride_bn, stride_asm, stride_bse, stride_bsn,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, FP8: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    expert = tl.load(block_expert_ptr + pid_m)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    row = tl.load(sorted_ids_ptr + offs_m)
    row_ok = row < rows
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    n_ok = offs_n < N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + row[:, None].to(tl.int64) * K + offs_k[None, :]
    b_ptrs = b_ptr + expert.to(tl.int64) * stride_be + offs_n[None, :].to(tl.int64) * stride_bn + offs_k[:, None]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kb in range(0, tl.cdiv(K, BLOCK_K)):
        k_ok = offs_k < K - kb * BLOCK_K
        a = tl.load(a_ptrs, mask=row_ok[:, None] & k_ok[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_ok[:, None] & n_ok[None, :], other=0.0)
        if FP8:
            a_s = tl.load(a_scale_ptr + row * stride_asm + kb, mask=row_ok, other=0.0)
            b_s = tl.load(b_scale_ptr + expert * stride_bse + (offs_n // 128) * stride_bsn + kb, mask=n_ok, other=0.0)
            acc += tl.dot(a, b) * a_s[:, None] * b_s[None, :]
        else:
            acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    c_ptrs = c_ptr + row[:, None].to(tl.int64) * N + offs_n[None, :]
    tl.store(c_ptrs, acc.to(tl.bfloat16), mask=row_ok[:, None] & n_ok[None, :])


def align_rows(counts, block_m, device, seed=2026):
    """Row ids sorted by expert, each expert's padded to block_m with the sentinel `rows`, and each
    block's expert. The rows an expert gets are scattered over the batch (a seeded permutation), as
    a batch's tokens route: the kernel gathers them."""
    rows = sum(counts)
    perm = torch.randperm(rows, generator=torch.Generator().manual_seed(seed)).tolist()
    ids, experts, at = [], [], 0
    for e, c in enumerate(counts):
        blocks = -(-c // block_m)
        ids += perm[at:at + c] + [rows] * (blocks * block_m - c)
        experts += [e] * blocks
        at += c
    return (torch.tensor(ids, device=device, dtype=torch.int32), torch.tensor(experts, device=device, dtype=torch.int32))


class MoeGemm:
    """One expert projection: w [E, N, K] (bf16, or e4m3 with block scales [E, N/128, K/128])."""

    def __init__(self, w, w_scale=None):
        self.w, self.w_scale, self.fp8 = w, w_scale, w_scale is not None

    def prepare(self, a, counts, block_m, a_scale=None):
        sorted_ids, block_expert = align_rows(counts, block_m, a.device)
        out = torch.empty(a.shape[0], self.w.shape[1], device=a.device, dtype=torch.bfloat16)
        return (a, a_scale, sorted_ids, block_expert, out)

    def run(self, prepared, block_m, block_n, block_k, warps, stages):
        a, a_scale, sorted_ids, block_expert, out = prepared
        E, N, K = self.w.shape
        grid = (block_expert.numel(), triton.cdiv(N, block_n))
        dummy = out
        _moe_gemm[grid](a, self.w, out, a_scale if self.fp8 else dummy, self.w_scale if self.fp8 else dummy,
                        sorted_ids, block_expert, a.shape[0], N, K,
                        self.w.stride(0), self.w.stride(1),
                        a_scale.stride(0) if self.fp8 else 0,
                        self.w_scale.stride(0) if self.fp8 else 0, self.w_scale.stride(1) if self.fp8 else 0,
                        BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, FP8=self.fp8,
                        num_warps=warps, num_stages=stages)
        return out


def block_quantize(w):
    """e4m3 weights with one fp32 scale per 128 x 128 block of [E, N, K] (N, K multiples of 128 assumed
    padded up where not)."""
    E, N, K = w.shape
    nb, kb = -(-N // 128), -(-K // 128)
    wp = torch.zeros(E, nb * 128, kb * 128, device=w.device, dtype=torch.float32)
    wp[:, :N, :K] = w.float()
    blocks = wp.view(E, nb, 128, kb, 128)
    scale = blocks.abs().amax(dim=(2, 4)).clamp(min=1e-6) / 448.0
    q = (blocks / scale[:, :, None, :, None]).view(E, nb * 128, kb * 128)[:, :N, :K]
    return q.contiguous().to(torch.float8_e4m3fn), scale.contiguous()


def token_quantize(a):
    """e4m3 activations with one fp32 scale per token and 128 columns."""
    T, K = a.shape
    kb = -(-K // 128)
    ap = torch.zeros(T, kb * 128, device=a.device, dtype=torch.float32)
    ap[:, :K] = a.float()
    groups = ap.view(T, kb, 128)
    scale = groups.abs().amax(dim=2).clamp(min=1e-6) / 448.0
    q = (groups / scale[:, :, None]).view(T, kb * 128)[:, :K]
    return q.contiguous().to(torch.float8_e4m3fn), scale.contiguous()

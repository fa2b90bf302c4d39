#!/usr/bin/env python3
"""float32 against bfloat16 products at the shipped training step's shapes, through PyTorch's
torch.matmul (oneDNN), on THREADS threads (default 1): GFLOP/s, best of 7, for each shape. A
measurement of what bf16 operands would give on this CPU (docs/benchmarks.md, the Zen 4
section's levers), not a path drummer takes. Needs torch (CPU wheel).

    python3 Scripts/bench_bf16_products.py [THREADS]
"""
import sys
import time

import torch

threads = int(sys.argv[1]) if len(sys.argv) > 1 else 1
torch.set_num_threads(threads)
# (M, N, K): the step's large products over a block of 64 steps × 32 streams, and one step's
# recurrent product at B = 32 (two layers of 256, 1,024 gates, a head of 710 outputs).
shapes = [(2048, 1024, 256, "layer 2 input, forward"), (2048, 710, 256, "head, forward"),
          (2048, 256, 1024, "gates to inputs, backward"), (256, 1024, 2048, "weight gradient"),
          (32, 1024, 256, "recurrent step, B = 32")]
for M, N, K, what in shapes:
    rates = []
    for dtype in (torch.float32, torch.bfloat16):
        a, b = torch.randn(M, K).to(dtype), torch.randn(K, N).to(dtype)
        flop = 2 * M * N * K
        reps = int(4e9 / flop) + 1
        best = float("inf")
        for _ in range(7):
            t = time.perf_counter()
            for _ in range(reps):
                a @ b
            best = min(best, (time.perf_counter() - t) / reps)
        rates.append(flop / best / 1e9)
    print(f"{threads} thread(s)  {M}x{K} . {K}x{N} ({what}): float32 {rates[0]:.0f} GFLOP/s, "
          f"bfloat16 {rates[1]:.0f} GFLOP/s, {rates[1] / rates[0]:.2f}x")

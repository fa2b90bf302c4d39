#!/usr/bin/env python3
"""PyTorch comparison for Scripts/bench-train: the same model and schedule as
`drummer bench train` (nn.LSTM with one-hot note|tick input, Linear output, note CE
+ tick CE averaged over the chunk, TBPTT chunks of U with the state carried,
elementwise clipping to ±5, SGD), on a synthetic sequence; prints timesteps/s
(median of several runs) per batch size. Needs torch (CPU wheel); optional.

Usage: bench_train_torch.py [--batch 1 32] [--runs 5] [--seconds 1]
"""
import argparse
import statistics
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 32])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--unroll", type=int, default=200)
    ap.add_argument("--hidden", type=int, default=200)
    ap.add_argument("--notes", type=int, default=17)
    ap.add_argument("--ticks", type=int, default=209)
    ap.add_argument("--events", type=int, default=52_260)
    ap.add_argument("--threads", type=int, nargs="+", default=None,
                    help="torch thread counts to measure (default: 1 and torch's default)")
    a = ap.parse_args()
    default_threads = torch.get_num_threads()
    thread_counts = a.threads or sorted({1, default_threads})
    torch.manual_seed(1)
    N, K, H, U = a.notes, a.ticks, a.hidden, a.unroll
    V = N + K
    notes = torch.randint(0, N, (a.events,))
    ticks = torch.randint(0, K, (a.events,))
    print(f"PyTorch {torch.__version__} (default {default_threads} threads); "
          f"U={U} H={H} V={V}, {a.events} synthetic events, SGD, {a.runs} runs of >= {a.seconds} s, median")
    for B, threads in [(B, t) for B in a.batch for t in thread_counts]:
        torch.set_num_threads(threads)
        L = a.events // B
        lstm = torch.nn.LSTM(V, H, batch_first=True)
        out = torch.nn.Linear(H, V)
        params = list(lstm.parameters()) + list(out.parameters())
        opt = torch.optim.SGD(params, lr=0.1)
        seg_n = notes[: B * L].view(B, L)
        seg_t = ticks[: B * L].view(B, L)
        state = {"p": 0, "hc": None}

        def step():
            p = state["p"]
            if p + U + 1 >= L:
                p = 0
                state["hc"] = None
            x = torch.zeros(B, U, V)
            x.scatter_(2, seg_n[:, p:p + U].unsqueeze(2), 1.0)
            x.scatter_(2, (N + seg_t[:, p:p + U]).unsqueeze(2), 1.0)
            y, (h, c) = lstm(x, state["hc"])
            logits = out(y)
            loss = (torch.nn.functional.cross_entropy(logits[..., :N].reshape(-1, N), seg_n[:, p + 1:p + U + 1].reshape(-1))
                    + torch.nn.functional.cross_entropy(logits[..., N:].reshape(-1, K), seg_t[:, p + 1:p + U + 1].reshape(-1)))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_value_(params, 5.0)
            opt.step()
            state["hc"] = (h.detach(), c.detach())
            state["p"] = p + U

        for _ in range(2):
            step()
        rates = []
        for _ in range(a.runs):
            chunks, t0 = 0, time.perf_counter()
            while True:
                step()
                chunks += 1
                dt = time.perf_counter() - t0
                if dt >= a.seconds:
                    break
            rates.append(chunks * U * B / dt)
        print(f"batch {B:3d}  pytorch threads {threads}  median {statistics.median(rates):9.0f} timesteps/s  "
              f"(min {min(rates):.0f}, max {max(rates):.0f})")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""PyTorch comparison for Scripts/bench-train: the models and schedule of
`drummer bench train`, on synthetic sequences; prints timesteps/s (median of several runs)
per batch size and thread count. Needs torch (CPU wheel); optional.

--layout original: nn.LSTM with one-hot note|tick input, Linear output, note CE + tick CE
averaged over the chunk, TBPTT chunks of U with the state carried, elementwise clipping to
±5, SGD.

--layout grid: the shipped model's shape (51 one-hot input groups, 1,218 rows; 19 output
groups, 710 columns; 2 layers of 256, dropout 0.3 between them; Adam lr 0.002; clip ±5; the
19 cross-entropies summed, a target equal to its group's size not predicted), in the two forms
a PyTorch user would write: "dense" (the one-hot input, 1,218 wide, into nn.LSTM) and
"embeddingbag" (the input groups summed by nn.EmbeddingBag, width 256, then nn.LSTM: not quite
the same model, its layer-0 input weights the product of a 1,218 × 256 table and a 256 × 1,024
matrix, of rank at most 256, and its timestep 7.38 MFLOP against the drummer's 5.81). Unless
told, batch 32 and unroll 64 (the recipe's). --grid-rows FILE: the rows of a corpus as `drummer
encode models/groove --data DATA -o FILE` writes them (drummer bench train's --grid-rows),
instead of uniform classes.

Usage: bench_train_torch.py [--layout original|grid] [--grid-rows FILE] [--batch 1 32] [--runs 5] [--seconds 1]
"""
import argparse
import statistics
import time

import torch


def timed(step, timesteps, a):
    """Timesteps/s of `step` (one chunk of `timesteps`): 2 warm-up chunks, then a.runs runs of
    at least a.seconds each."""
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
        rates.append(chunks * timesteps / dt)
    return rates


def main():
    ap = argparse.ArgumentParser()
    # Unset: each layout's own (the 2017 layout's 1 and 32, U = H = 200; the grid's 32, U = 64, H = 256).
    ap.add_argument("--batch", type=int, nargs="+", default=None)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--unroll", type=int, default=None)
    ap.add_argument("--hidden", type=int, default=None)
    ap.add_argument("--notes", type=int, default=17)
    ap.add_argument("--ticks", type=int, default=209)
    ap.add_argument("--events", type=int, default=52_260)
    ap.add_argument("--threads", type=int, nargs="+", default=None,
                    help="torch thread counts to measure (default: 1 and torch's default)")
    ap.add_argument("--layout", choices=["original", "grid"], default="original")
    ap.add_argument("--grid-rows", help="the grid layout's rows (int32 .npy, rows x 51 groups, as `drummer encode` writes)")
    a = ap.parse_args()
    if a.layout == "grid":
        return grid(a)
    a.batch, a.unroll, a.hidden = a.batch or [1, 32], a.unroll or 200, a.hidden or 200
    default_threads = torch.get_num_threads()
    thread_counts = a.threads or sorted({1, default_threads})
    torch.manual_seed(1)
    N, K, H, U = a.notes, a.ticks, a.hidden, a.unroll
    V = N + K
    notes = torch.randint(0, N, (a.events,))
    ticks = torch.randint(0, K, (a.events,))
    print(f"PyTorch {torch.__version__} (default {default_threads} threads, CPU capability {torch.backends.cpu.get_cpu_capability()}); "
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

        rates = timed(step, U * B, a)
        print(f"batch {B:3d}  pytorch threads {threads}  median {statistics.median(rates):9.0f} timesteps/s  "
              f"(min {min(rates):.0f}, max {max(rates):.0f})")


# The shipped grid model's groups (GridGroup with 14 velocity bins, 4 offset bins, the velocity
# lookback one, two and four bars back and 29 styles): input and output group sizes, and the
# input group holding each output group's target.
GRID_INPUTS = [513] + [15] * 9 + [9] * 9 + [16, 8] + [16] * 27 + [2, 2, 29]
GRID_OUTPUTS = [512] + [14] * 9 + [8] * 9
GRID_TARGETS = [0] + [1 + c for c in range(9)] + [10 + c for c in range(9)]


def grid(a):
    B, U, H = a.batch or [32], a.unroll or 64, a.hidden or 256
    default_threads = torch.get_num_threads()
    thread_counts = a.threads or [default_threads]
    torch.manual_seed(1)
    I, O, k = sum(GRID_INPUTS), sum(GRID_OUTPUTS), len(GRID_INPUTS)
    offsets = torch.tensor([sum(GRID_INPUTS[:g]) for g in range(k)])
    if a.grid_rows:
        import numpy as np
        classes = torch.from_numpy(np.load(a.grid_rows).astype(np.int64))
        if classes.ndim != 2 or classes.shape[1] != k or bool(((classes < 0) | (classes >= torch.tensor(GRID_INPUTS))).any()):
            raise SystemExit(f"bench_train_torch: {a.grid_rows} does not hold rows of the shipped grid model's {k} input groups")
        n, source = classes.shape[0], f"{classes.shape[0]} rows of {a.grid_rows}"
    else:
        n = a.events
        classes = torch.stack([torch.randint(0, size, (n,)) for size in GRID_INPUTS], dim=1)  # n × k
        source = f"{n} synthetic steps"
    rows = classes + offsets  # one-hot row of each group
    print(f"PyTorch {torch.__version__} (default {default_threads} threads, CPU capability {torch.backends.cpu.get_cpu_capability()}); grid layout: {k} input groups ({I} rows), "
          f"{len(GRID_OUTPUTS)} output groups ({O} columns), 2 layers of H={H}, dropout 0.3, U={U}, Adam, "
          f"{source}, {a.runs} runs of >= {a.seconds} s, median")
    starts = [sum(GRID_OUTPUTS[:g]) for g in range(len(GRID_OUTPUTS))]
    for form in ["dense", "embeddingbag"]:
        for b, threads in [(b, t) for b in B for t in thread_counts]:
            torch.set_num_threads(threads)
            L = n // b
            seg = rows[: b * L].view(b, L, k)
            cls = classes[: b * L].view(b, L, k)
            if form == "dense":
                embed = None
                lstm = torch.nn.LSTM(I, H, num_layers=2, dropout=0.3, batch_first=True)
            else:
                embed = torch.nn.EmbeddingBag(I, H, mode="sum")
                lstm = torch.nn.LSTM(H, H, num_layers=2, dropout=0.3, batch_first=True)
            out = torch.nn.Linear(H, O)
            params = list(lstm.parameters()) + list(out.parameters()) + (list(embed.parameters()) if embed else [])
            opt = torch.optim.Adam(params, lr=0.002)
            state = {"p": 0, "hc": None}

            def step():
                p = state["p"]
                if p + U + 1 >= L:
                    p = 0
                    state["hc"] = None
                r = seg[:, p:p + U]  # b × U × k
                if embed is None:
                    x = torch.zeros(b, U, I)
                    x.scatter_(2, r, 1.0)
                else:
                    x = embed(r.reshape(-1, k)).view(b, U, H)
                y, (h, c) = lstm(x, state["hc"])
                logits = out(y).reshape(-1, O)
                targets = cls[:, p + 1:p + U + 1].reshape(-1, k)
                loss = 0
                for g, size in enumerate(GRID_OUTPUTS):
                    loss = loss + torch.nn.functional.cross_entropy(
                        logits[:, starts[g]:starts[g] + size], targets[:, GRID_TARGETS[g]], ignore_index=size,
                        reduction="sum")
                loss = loss / (b * U)
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_value_(params, 5.0)
                opt.step()
                state["hc"] = (h.detach(), c.detach())
                state["p"] = p + U

            rates = timed(step, U * b, a)
            print(f"grid {form:12s}  batch {b:3d}  pytorch threads {threads}  median {statistics.median(rates):9.0f} timesteps/s  "
                  f"(min {min(rates):.0f}, max {max(rates):.0f})")


if __name__ == "__main__":
    main()

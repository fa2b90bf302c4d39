#!/usr/bin/env python3
"""Independent float64 numpy reference of drummer's trainer; writes the JSON
fixtures in Tests/TrainTests/Fixtures/ that the Swift tests compare against.

Written the plain way on purpose (full one-hot inputs, z = [x, h, 1] @ Wx,
dense matrices), so it shares no shortcut with the Swift implementation.

Model (N notes, K ticks, H hidden, G = 4H; gate blocks f, i, o, g):
    x_t = [one-hot note (N) | one-hot tick (K) | position | one-hot velocity bin (Q)]   (V rows)
        position (optional): one-hot slot (S), or "binary": for each bit b of the slot
        number, lowest first, a 2-vector [bit clear, bit set]
    z_t = [x_t (V), h_{t-1} (H), 1];  a = z_t @ Wx   Wx: (V+H+1, 4H)
    c_t = s(f) c_{t-1} + s(i) tanh(g);  h_t = s(o) tanh(c_t)
    y_t = [h_t, 1] @ Wy   Wy: (H+1, Y), Y = N + K (+ Q with velocity)
    loss = mean over the chunk's U*B predictions of CE(note) + CE(tick) (+ CE(velocity bin))
Each event is a row of features: note, tick, then the slot and the velocity bin when the
model has them; the targets of step t are event t+1's note, tick and velocity bin.
Schedule: B streams over contiguous segments of L = N_events // B; shared pointer p;
    inputs p..p+U-1, targets p+1..p+U; after the update p += U and, if p+U+1 >= L,
    p = 0, h = c = 0, epoch += 1.
Update: g = clip(grad, -clip, clip), then
    sgd:      w -= lr g
    momentum: v = m v + g; w -= lr v
    rmsprop:  ms = decay ms + (1 - decay) g^2; w -= lr g / sqrt(ms + eps)   (ms starts at 1)

Usage: Scripts/reference_lstm.py [OUTPUT_DIR]   (default Tests/TrainTests/Fixtures)
"""
import json
import os
import sys

import numpy as np


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def log_softmax(y):
    m = y.max(axis=-1, keepdims=True)
    return y - m - np.log(np.exp(y - m).sum(axis=-1, keepdims=True))


def bits_of(slots):
    """Bits of a slot number 0..slots-1 (at least one)."""
    return max(1, int(slots - 1).bit_length())


def input_vector(features, spec):
    """x_t of one event (see the module docstring)."""
    parts = [np.eye(spec["notes"])[features[0]], np.eye(spec["ticks"])[features[1]]]
    k = 2
    pos = spec.get("position")
    if pos:
        slot = features[k]
        k += 1
        if pos["encoding"] == "onehot":
            parts.append(np.eye(pos["slots"])[slot])
        else:
            for b in range(bits_of(pos["slots"])):
                parts.append(np.eye(2)[(slot >> b) & 1])
    if spec.get("velocityBins"):
        parts.append(np.eye(spec["velocityBins"])[features[k]])
    return np.concatenate(parts)


def output_groups(spec):
    """(size, feature index of the target) of each softmax group, in Wy column order."""
    groups = [(spec["notes"], 0), (spec["ticks"], 1)]
    if spec.get("velocityBins"):
        groups.append((spec["velocityBins"], 2 + (1 if spec.get("position") else 0)))
    return groups


def chunk_loss_and_grad(Wx, Wy, events, spec, H, U, B, L, p, h0, c0):
    """Loss and gradients of one chunk; events: (n, features); h0, c0: (B, H).
    Returns loss, dWx, dWy, hU, cU."""
    V = Wx.shape[0] - H - 1
    nin = V + H + 1
    outs = output_groups(spec)
    dWx = np.zeros_like(Wx)
    dWy = np.zeros_like(Wy)
    total = 0.0
    hU = np.zeros((B, H))
    cU = np.zeros((B, H))
    # Each stream's forward and backward on its own; the gradient sums over streams.
    for b in range(B):
        base = b * L + p
        zs, fs, is_, os_, gs, cs, hs, dys = [], [], [], [], [], [], [], []
        h = h0[b].copy()
        c = c0[b].copy()
        cs.append(c)
        hs.append(h)
        for t in range(U):
            x = input_vector(events[base + t], spec)
            assert x.shape == (V,)
            z = np.concatenate([x, h, [1.0]])
            a = z @ Wx
            f = sigmoid(a[0:H]); i = sigmoid(a[H:2 * H]); o = sigmoid(a[2 * H:3 * H]); g = np.tanh(a[3 * H:])
            c = f * c + i * g
            h = o * np.tanh(c)
            y = np.concatenate([h, [1.0]]) @ Wy
            nxt = events[base + t + 1]
            # dL/dy of each softmax group: p - onehot(target).
            dy, first = [], 0
            for size, col in outs:
                lp = log_softmax(y[first:first + size])
                total += -lp[nxt[col]]
                d = np.exp(lp)
                d[nxt[col]] -= 1.0
                dy.append(d)
                first += size
            assert first == Wy.shape[1]
            zs.append(z); fs.append(f); is_.append(i); os_.append(o); gs.append(g)
            cs.append(c); hs.append(h)
            dys.append(np.concatenate(dy))
        hU[b] = h
        cU[b] = c
        scale = 1.0 / (U * B)
        dh_next = np.zeros(H)
        dc_next = np.zeros(H)
        for t in reversed(range(U)):
            dy = dys[t] * scale
            hcat = np.concatenate([hs[t + 1], [1.0]])
            dWy += np.outer(hcat, dy)
            dh = Wy[:H] @ dy + dh_next
            c, cprev = cs[t + 1], cs[t]
            f, i, o, g = fs[t], is_[t], os_[t], gs[t]
            tc = np.tanh(c)
            do = dh * tc
            dc = dc_next + dh * o * (1 - tc ** 2)
            df = dc * cprev
            di = dc * g
            dg = dc * i
            da = np.concatenate([df * f * (1 - f), di * i * (1 - i), do * o * (1 - o), dg * (1 - g ** 2)])
            dWx += np.outer(zs[t], da)
            dz = Wx @ da
            dh_next = dz[V:V + H]
            dc_next = dc * f
        assert dWx.shape == (nin, 4 * H)
    return total / (U * B), dWx, dWy, hU, cU


def apply_update(opt, w, g, slot):
    g = np.clip(g, -opt["clip"], opt["clip"])
    if opt["kind"] == "sgd":
        return w - opt["learningRate"] * g, slot
    if opt["kind"] == "momentum":
        slot = opt["momentum"] * slot + g
        return w - opt["learningRate"] * slot, slot
    if opt["kind"] == "rmsprop":
        slot = opt["decay"] * slot + (1 - opt["decay"]) * g * g
        return w - opt["learningRate"] * g / np.sqrt(slot + opt["epsilon"]), slot
    raise ValueError(opt["kind"])


def f32(a):
    """Round to float32 values (what Swift starts from), keep float64 for the math."""
    return np.asarray(a, dtype=np.float32).astype(np.float64)


def make_case(name, seed, n_notes, n_ticks, H, U, B, n_events, steps, opt, weight_std, position=None,
              velocity_bins=None):
    rng = np.random.RandomState(seed)
    spec = {"notes": n_notes, "ticks": n_ticks, "position": position, "velocityBins": velocity_bins}
    V = len(input_vector([0] * 4, spec))
    Y = sum(size for size, _ in output_groups(spec))
    Wx = f32(rng.normal(0, weight_std, (V + H + 1, 4 * H)))
    Wy = f32(rng.normal(0, weight_std, (H + 1, Y)))
    columns = [rng.randint(0, n_notes, n_events), rng.randint(0, n_ticks, n_events)]
    if position:
        columns.append(rng.randint(0, position["slots"], n_events))
    if velocity_bins:
        columns.append(rng.randint(0, velocity_bins, n_events))
    events = np.stack(columns, axis=1)
    h = f32(rng.uniform(-0.5, 0.5, (B, H)))
    c = f32(rng.uniform(-1.0, 1.0, (B, H)))
    L = n_events // B
    init = {"Wx": Wx.ravel().tolist(), "Wy": Wy.ravel().tolist(),
            "h": h.ravel().tolist(), "c": c.ravel().tolist(), "pointer": 0}
    params = np.concatenate([Wx.ravel(), Wy.ravel()])
    nx = Wx.size
    slot = np.ones_like(params) if opt["kind"] == "rmsprop" else np.zeros_like(params)
    p, epoch = 0, 0
    losses, pointers, epochs, clipped = [], [], [], []
    first_grad = None
    for _ in range(steps):
        Wx_ = params[:nx].reshape(V + H + 1, 4 * H)
        Wy_ = params[nx:].reshape(H + 1, Y)
        loss, dWx, dWy, h, c = chunk_loss_and_grad(Wx_, Wy_, events, spec, H, U, B, L, p, h, c)
        grad = np.concatenate([dWx.ravel(), dWy.ravel()])
        if first_grad is None:
            first_grad = grad
        clipped.append(int((np.abs(grad) > opt["clip"]).sum()))
        params, slot = apply_update(opt, params, grad, slot)
        losses.append(loss)
        p += U
        if p + U + 1 >= L:
            p = 0
            h = np.zeros((B, H))
            c = np.zeros((B, H))
            epoch += 1
        pointers.append(p)
        epochs.append(epoch)
    case = {
        "name": name,
        "generator": "Scripts/reference_lstm.py (numpy float64)",
        "notes": n_notes, "ticks": n_ticks, "hidden": H, "unroll": U, "batch": B,
        "optimizer": opt,
        "events": events.ravel().tolist(),
        "initial": init,
        "firstGradient": first_grad.tolist(),
        "steps": steps,
        "losses": losses,
        "pointers": pointers,
        "epochs": epochs,
        "clippedEntries": clipped,
        "final": {"parameters": params.tolist(), "h": h.ravel().tolist(), "c": c.ravel().tolist(),
                  "pointer": p, "epoch": epoch, "step": steps,
                  "slot": slot.tolist() if opt["kind"] != "sgd" else []},
    }
    if position:
        case["position"] = position
        case["inputRows"] = V
    if velocity_bins:
        case["velocityBins"] = velocity_bins
        case["inputRows"] = V
    return case


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "Tests", "TrainTests", "Fixtures")
    os.makedirs(out, exist_ok=True)

    def opt(kind, lr, clip=5.0, momentum=0.9, decay=0.9, epsilon=1e-10):
        return {"kind": kind, "learningRate": lr, "momentum": momentum, "decay": decay, "epsilon": epsilon, "clip": clip}

    # N=3 notes, K=4 ticks, H=5, U=6. B=1: 20 events, chunks at p = 0, 6, 12, then the
    # wrap (18+7 >= 20). B=2: 31 events, L = 15 (event 30 unused), chunks at 0, 6, wrap.
    cases = [
        make_case("sgd_b1", 1, 3, 4, 5, 6, 1, 20, 7, opt("sgd", 0.5), 0.5),
        make_case("rmsprop_b1", 2, 3, 4, 5, 6, 1, 20, 7, opt("rmsprop", 0.02), 0.5),
        make_case("sgd_b2_clipped", 3, 3, 4, 5, 6, 2, 31, 5, opt("sgd", 0.5, clip=0.02), 0.5),
        make_case("rmsprop_b2", 4, 3, 4, 5, 6, 2, 31, 5, opt("rmsprop", 0.02), 0.5),
        make_case("momentum_b2_clipped", 5, 3, 4, 5, 6, 2, 31, 5, opt("momentum", 0.2, clip=0.03), 0.5),
        # Groove layouts: a one-hot position of 6 slots and 3 velocity bins; a binary position
        # of 5 slots (3 bits) with 4 velocity bins; a binary position alone.
        make_case("groups_onehot_sgd_b2", 6, 3, 4, 5, 6, 2, 31, 5, opt("sgd", 0.5),
                  0.5, position={"encoding": "onehot", "slots": 6}, velocity_bins=3),
        make_case("groups_binary_rmsprop_b1", 7, 3, 4, 5, 6, 1, 20, 7, opt("rmsprop", 0.02),
                  0.5, position={"encoding": "binary", "slots": 5}, velocity_bins=4),
        make_case("groups_binary_momentum_b2", 8, 3, 4, 5, 6, 2, 31, 5, opt("momentum", 0.2, clip=0.03),
                  0.5, position={"encoding": "binary", "slots": 5}),
        # Every optimizer setting where it matters: RMSProp with a large epsilon (0.3, beside
        # mean squares that start at 1 and decay towards the gradients' squares) and a decay of
        # 0.6; momentum 0.5; both with clipping that clips some entries but not all.
        make_case("rmsprop_eps_decay_b2", 9, 3, 4, 5, 6, 2, 31, 5,
                  opt("rmsprop", 0.05, clip=0.05, decay=0.6, epsilon=0.3), 0.5),
        make_case("momentum_m05_b1", 10, 3, 4, 5, 6, 1, 20, 7, opt("momentum", 0.3, clip=0.08, momentum=0.5), 0.5),
    ]
    for case in cases:
        path = os.path.join(out, case["name"] + ".json")
        with open(path, "w") as fh:
            json.dump(case, fh, indent=1)
            fh.write("\n")
        print(f"{path}: losses {[round(float(l), 6) for l in case['losses']]}, epochs {case['epochs']}, "
              f"clipped entries per step {case['clippedEntries']}")


if __name__ == "__main__":
    main()

"""Train a drummer model with PyTorch, on any number of processes (DistributedDataParallel: gloo on
CPUs, NCCL on GPUs), for `drummer import` to read.

    torchrun --nproc_per_node 4 python/train_torch.py --data data --hidden 512 --layers 2 \\
        --steps 20000 -o model.safetensors
    drummer import model.safetensors -o model && drummer sample model -o out.mid

It trains the model `drummer train --recipe original` trains: the same groups (the 2017 layout's
note and tick), the same inputs (`drummer encode` writes them), the same output groups and loss
(the sum of each output group's cross-entropy on the next hit), truncated BPTT over --unroll
steps on --batch-size contiguous streams per process, each gradient entry clipped to +-5. Rank 0
first asks drummer (on the PATH, or --drummer) for a step-0 checkpoint of the model
(`drummer train --recipe original --steps 0`: the groups and the initial weights),
its safetensors and the encoded training and validation sequences; then every rank trains its
share of the streams. Plain `python3 python/train_torch.py ...` trains in one process.

Requirements: python/requirements.txt (torch, safetensors, numpy)."""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from drummer_torch import input_sizes, load, one_hot, output_sizes, save  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--data", required=True, help="convert-midi output directory (with validation/ for a validation loss)")
ap.add_argument("-o", "--output", default="model.safetensors")
ap.add_argument("--hidden", type=int, default=200)
ap.add_argument("--layers", type=int, default=1)
ap.add_argument("--dropout", type=float, default=0.0, help="between stacked layers")
ap.add_argument("--output-dropout", type=float, default=0.0, help="of the top layer's h, before the output layer")
ap.add_argument("--weight-decay", type=float, default=0.0,
                help="decoupled: every parameter times 1 - lr*weight_decay before each update (Adam: AdamW)")
ap.add_argument("--steps", type=int, default=6000)
ap.add_argument("--batch-size", type=int, default=16, help="streams per process")
ap.add_argument("--unroll", type=int, default=100)
ap.add_argument("--lr", type=float, default=0.002)
ap.add_argument("--optimizer", choices=["adam", "rmsprop"], default="adam")
ap.add_argument("--eval-every", type=int, default=500)
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--work", default=None, help="where the step-0 checkpoint and the encoded data go (default: OUTPUT.work)")
ap.add_argument("--drummer", default="drummer", help="the drummer binary")
a = ap.parse_args()

distributed = "WORLD_SIZE" in os.environ
if distributed:
    dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
rank = dist.get_rank() if distributed else 0
world = dist.get_world_size() if distributed else 1
device = torch.device(f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}" if torch.cuda.is_available() else "cpu")
torch.manual_seed(a.seed)
work = a.work or a.output + ".work"


def say(*text):
    if rank == 0:
        print(*text, flush=True)


# Rank 0 prepares the model's groups, initial weights and encoded sequences with drummer.
if rank == 0:
    os.makedirs(work, exist_ok=True)
    ckpt = os.path.join(work, "init", "ckpt-0.h5")
    run = lambda *args: subprocess.run([a.drummer, *args], check=True, stdout=subprocess.DEVNULL)
    if not os.path.exists(ckpt):
        run("train", "--recipe", "original", "--data", a.data, "--steps", "0", "--hidden", str(a.hidden), "--layers", str(a.layers),
            "--seed", str(a.seed), "--checkpoint-dir", os.path.join(work, "init"))
    run("export", ckpt, "--format", "safetensors", "-o", os.path.join(work, "init.safetensors"))
    run("encode", ckpt, "--data", a.data, "-o", os.path.join(work, "train.npy"))
    if os.path.isdir(os.path.join(a.data, "validation")):
        run("encode", ckpt, "--data", os.path.join(a.data, "validation"), "-o", os.path.join(work, "validation.npy"))
if distributed:
    dist.barrier()

model, manifest = load(os.path.join(work, "init.safetensors"))
if a.dropout and a.layers > 1:
    model.lstm.dropout = a.dropout
model.output_dropout.p = a.output_dropout
model.to(device)
inputs, outputs = input_sizes(manifest), output_sizes(manifest)
names_in = [g["name"] for g in manifest["groups"]["inputs"]] if manifest.get("groups") else ["note", "tick"]
names_out = [g["name"] for g in manifest["groups"]["outputs"]] if manifest.get("groups") else ["note", "tick"]
# Each output group predicts the next hit's class in the input group of the same name.
target_columns = [names_in.index(n) for n in names_out]
bounds = np.cumsum([0] + outputs)

train = torch.from_numpy(np.load(os.path.join(work, "train.npy")).astype(np.int64))
val_path = os.path.join(work, "validation.npy")
validation = torch.from_numpy(np.load(val_path).astype(np.int64)) if os.path.exists(val_path) else None

B, U = a.batch_size, a.unroll
streams = B * world
segment = len(train) // streams
if segment < U + 2:
    sys.exit(f"train_torch: {len(train)} hits make {streams} streams of {segment} hits, fewer than --unroll {U} + 2")
# This process's streams: [rank*B, (rank+1)*B), each `segment` consecutive hits.
mine = train[rank * B * segment:(rank + 1) * B * segment].view(B, segment, -1)
x_all = torch.stack([one_hot(s, inputs) for s in mine]).to(device)          # (B, segment, inputs)
y_all = mine[:, :, target_columns].to(device)                                # (B, segment, outputs groups)

net = nn.parallel.DistributedDataParallel(model) if distributed else model
opt = (torch.optim.Adam if a.optimizer == "adam" else torch.optim.RMSprop)(net.parameters(), lr=a.lr)


def loss_of(logits, targets):
    """The sum over output groups of the cross-entropy, over all rows (drummer's training loss). A
    target equal to its group's size (the grid layout's "not hit") is not predicted: no term."""
    total = 0
    for g in range(len(outputs)):
        t = targets[..., g].reshape(-1)
        t = torch.where(t >= outputs[g], torch.full_like(t, -100), t)
        total = total + nn.functional.cross_entropy(logits[..., bounds[g]:bounds[g + 1]].reshape(-1, outputs[g]), t,
                                                    ignore_index=-100, reduction="sum") / t.numel()
    return total


def validate():
    """Mean loss over the validation sequence from zero state, in nats (drummer's loss_all)."""
    if validation is None:
        return None
    model.eval()
    with torch.no_grad():
        logits, _ = model(one_hot(validation[:-1], inputs)[None].to(device))
        loss = loss_of(logits[0], validation[1:, target_columns].to(device)).item()
    model.train()
    return loss


p, state, t0 = 0, None, time.time()
for step in range(1, a.steps + 1):
    if p + U + 1 > segment:
        p, state = 0, None
    logits, state = net(x_all[:, p:p + U], state)
    state = tuple(s.detach() for s in state)
    loss = loss_of(logits, y_all[:, p + 1:p + U + 1])
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_value_(net.parameters(), 5)
    if a.weight_decay:
        # drummer's decoupled weight decay (with Adam, what torch.optim.AdamW does before its step).
        with torch.no_grad():
            for q in net.parameters():
                q.mul_(1 - a.lr * a.weight_decay)
    opt.step()
    p += U
    if step % a.eval_every == 0 or step == a.steps:
        v = validate() if rank == 0 else None
        say(json.dumps({"step": step, "loss": round(loss.item(), 4), "validation_loss": v and round(v, 4),
                        "processes": world, "seconds": round(time.time() - t0, 1)}))

if rank == 0:
    save(model, manifest, a.output, metadata={"trained_by": "python/train_torch.py", "steps": str(a.steps),
                                              "processes": str(world), "batch_size_per_process": str(B),
                                              "unroll": str(U), "optimizer": a.optimizer, "learning_rate": str(a.lr),
                                              **{k: str(v) for k, v in [("dropout", a.dropout), ("output_dropout", a.output_dropout),
                                                                        ("weight_decay", a.weight_decay)] if v}})
    say(f"wrote {a.output}: drummer import {a.output} -o model")
if distributed:
    # Every process waits for rank 0's file, then all leave the group together (a process that
    # tears gloo down while its peer still writes can abort at exit).
    dist.barrier()
    dist.destroy_process_group()
    # Even so, gloo's threads can abort the interpreter's own teardown ("terminate called without
    # an active exception", SIGABRT: torchrun then fails the run) after the work is done. Every
    # file is written and closed by now: leave without that teardown.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)

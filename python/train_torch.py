"""Train a drummer model with PyTorch, on any number of processes (DistributedDataParallel: gloo on
CPUs, NCCL on GPUs), for `drummer import` to read.

    torchrun --nproc_per_node 4 python/train_torch.py --data data -o model.safetensors
    drummer import model.safetensors -o model && drummer sample model -o out.mid
    drummer eval model --data data/validation

By default it trains the model `drummer train --data DATA` trains, the shipped model's recipe:
the 16th-note grid layout (its input groups: the step's hit set, each class's velocity and
offset, position, phrase, lookback, repeat flags, style; its output groups: the next step's hit
set and each class's velocity and offset, a class not hit predicting nothing), 2 layers of 256,
dropout 0.3 between them, Adam at lr 0.002 halved every 1,500 steps, each gradient entry
clipped to +-5, 32 streams of 64 steps per process, 10,000 steps. --recipe original trains the
2017 layout (note and tick in and out) at the script's own defaults instead. The loss is
drummer's: each output group's cross-entropy on the next row summed, a target equal to its
group's size (not hit, a file's start) left out, over the chunk's rows. Every process trains
its --batch-size contiguous streams of the training rows (truncated BPTT over --unroll steps,
streams laid out as `drummer train --batch-size` processes*batch lays them out).

Rank 0 first asks drummer (on the PATH, or --drummer) for a step-0 checkpoint of the model
(`drummer train --data DATA --steps 0 ...`: the groups and the initial weights), its
safetensors and the encoded training and validation rows (`drummer encode`), in the work folder
(--work: new, empty, or marked by an earlier run; one holding other files is refused); then every rank
trains its share of the streams, on drummer's network (drummer_torch.Drummer: the nn.LSTM
`lstm` and nn.Linear `head` that `drummer import` reads, one bias per layer as drummer's Wx has:
bias_hh stays zero). Its validation loss is `drummer eval`'s loss_all: a grid model's over each validation file from a zero state, per
16th step (a 2017-layout model's over the validation sequence from a zero state, per hit).
Plain `python3 python/train_torch.py ...` trains in one process.

Requirements: python/requirements.txt (torch, safetensors, numpy)."""
import argparse
import atexit
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from drummer_torch import input_sizes, load, one_hot, output_sizes, save  # noqa: E402

# The recipes' values: `grid` is drummer's default recipe (Sources/Train/Settings.swift, Recipe.grid);
# `original` keeps this script's earlier defaults for the 2017 layout.
RECIPES = {
    "grid": dict(hidden=256, layers=2, dropout=0.3, steps=10_000, batch_size=32, unroll=64, lr=0.002,
                 lr_decay=0.5, lr_decay_every=1500, clip=5.0, seed=3, optimizer="adam", eval_every=500),
    "original": dict(hidden=200, layers=1, dropout=0.0, steps=6000, batch_size=16, unroll=100, lr=0.002,
                     lr_decay=1.0, lr_decay_every=0, clip=5.0, seed=1, optimizer="adam", eval_every=500),
}

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--data", required=True, help="convert-midi output directory (with validation/ for a validation loss)")
ap.add_argument("-o", "--output", default="model.safetensors")
ap.add_argument("--recipe", choices=sorted(RECIPES), default="grid",
                help="grid: drummer's default recipe, the 16th-note grid layout; original: the 2017 layout (default grid)")
ap.add_argument("--hidden", type=int, help="hidden size of every layer (grid 256, original 200)")
ap.add_argument("--layers", type=int, help="stacked LSTM layers (grid 2, original 1)")
ap.add_argument("--dropout", type=float, help="between stacked layers (grid 0.3, original 0); with one layer, 0 (drummer refuses any other)")
ap.add_argument("--weight-decay", type=float, default=0.0,
                help="decoupled: every parameter times 1 - lr*weight_decay before each update (Adam: AdamW)")
ap.add_argument("--steps", type=int, help="updates, 1 or more (grid 10000, original 6000)")
ap.add_argument("--batch-size", type=int, help="streams per process (grid 32, original 16)")
ap.add_argument("--unroll", type=int, help="truncated-BPTT chunk length (grid 64, original 100)")
ap.add_argument("--lr", type=float, help="learning rate (0.002)")
ap.add_argument("--lr-decay", type=float, help="multiply the rate by this every --lr-decay-every steps (grid 0.5)")
ap.add_argument("--lr-decay-every", type=int, help="0 = off (grid 1500, original 0)")
ap.add_argument("--clip", type=float, help="clip each gradient entry to +-this (5)")
ap.add_argument("--optimizer", choices=["adam", "rmsprop"])
ap.add_argument("--eval-every", type=int)
ap.add_argument("--seed", type=int, help="drummer's initial weights (grid 3, original 1); the dropout masks")
ap.add_argument("--work", default=None,
                help="where the step-0 checkpoint and the encoded data go (default: OUTPUT.work): a new or empty folder, "
                     "or one an earlier run made (marked by its file .train_torch-work); anything else in it is refused, not "
                     "replaced; a failed run removes what it wrote there")
ap.add_argument("--drummer", default="drummer", help="the drummer binary")
a = ap.parse_args()
# The settings given, which the step-0 run hands to drummer to check as `drummer train` checks them.
given = [k for k in RECIPES[a.recipe] if getattr(a, k) is not None]
for k, v in RECIPES[a.recipe].items():
    if getattr(a, k) is None:
        setattr(a, k, v)
if a.steps < 1:
    ap.error(f"--steps must be 1 or more, got {a.steps}")
# The file is written after training: a path it cannot be written to is refused before.
if os.path.isdir(a.output):
    ap.error(f"-o {a.output} is a directory: name the .safetensors file to write")
if not os.access(os.path.dirname(os.path.abspath(a.output)), os.W_OK):
    ap.error(f"-o {a.output}: its folder {os.path.dirname(os.path.abspath(a.output))} does not exist or cannot be written to")
# As `drummer train`: one layer given no --dropout has none; a --dropout given with one layer goes to
# drummer as given, which refuses it (there is no layer above to drop units on the way to).
if a.layers < 2 and "dropout" not in given:
    a.dropout = 0.0
grid_recipe = a.recipe == "grid"

distributed = "WORLD_SIZE" in os.environ
if distributed:
    dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
rank = dist.get_rank() if distributed else 0
world = dist.get_world_size() if distributed else 1
device = torch.device(f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}" if torch.cuda.is_available() else "cpu")
if device.type == "cuda":
    torch.cuda.set_device(device)
# The initial weights are drummer's (--seed); the seed here draws the dropout masks, apart per rank.
torch.manual_seed(a.seed * 1000 + rank)
work = a.work or a.output + ".work"
B, U = a.batch_size, a.unroll


def say(*text):
    if rank == 0:
        print(*text, flush=True)


def drummer(*args, note=""):
    try:
        r = subprocess.run([a.drummer, *args], stdout=subprocess.DEVNULL)
    except OSError as e:
        sys.exit(f"train_torch: cannot run {a.drummer} ({e.strerror}): put drummer on the PATH or give --drummer PATH")
    if r.returncode != 0:
        sys.exit(f"train_torch: `{a.drummer} {' '.join(args)}` failed (exit {r.returncode}; its error is above){note}")


# drummer's RMSProp (TF1's, no momentum): ms starts at 1, ms = decay·ms + (1 − decay)·g²,
# p −= lr·g / sqrt(ms + epsilon), decay 0.9 and epsilon 1e-10 (Sources/Train/Optimizer.swift);
# torch.optim.RMSprop starts at 0 and adds epsilon outside the root.
class DrummerRMSProp(torch.optim.Optimizer):
    def __init__(self, params, lr, decay=0.9, epsilon=1e-10):
        super().__init__(params, dict(lr=lr, decay=decay, epsilon=epsilon))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for q in group["params"]:
                if q.grad is None:
                    continue
                ms = self.state[q].setdefault("ms", torch.ones_like(q))
                ms.mul_(group["decay"]).addcmul_(q.grad, q.grad, value=1 - group["decay"])
                q.addcdiv_(q.grad, (ms + group["epsilon"]).sqrt(), value=-group["lr"])


# The work folder is the script's own: new, empty, or marked by an earlier run (WORK_MARKER). It
# holds only what the script writes there (WORK_FILES, and the -o file when it is given there);
# anything else is refused, never removed or replaced, as drummer refuses an output directory
# holding what it does not write. The step-0 checkpoint folder init/ holds drummer's files alone.
WORK_MARKER = ".train_torch-work"
WORK_FILES = ["init", "init.safetensors", "train.npy", "validation.npy"]


def is_drummer_temporary(name):
    """A temporary file drummer writes beside its outputs (Sources/FileOutput/TemporaryFiles.swift)."""
    return ".drummer-tmp-" in name or ".drummer-old-" in name


def claim_work(work):
    """Makes `work` this run's; returns (the folders this run created, outermost first; whether this
    run wrote the marker). Exits naming the folder when it is not the script's."""
    refuse = f"give a new or empty folder as --work, or remove {work} if an earlier train_torch run left it"
    if os.path.lexists(work) and not os.path.isdir(work):
        sys.exit(f"train_torch: --work {work} exists and is not a folder: {refuse}")
    if os.path.isdir(work):
        entries = sorted(os.listdir(work))
        if entries and WORK_MARKER not in entries:
            sys.exit(f"train_torch: --work {work} is not empty and was not made by train_torch (it has no {WORK_MARKER} "
                     f"marker): not removing or replacing its files; {refuse}")
        mine = set(WORK_FILES + [WORK_MARKER])
        if os.path.dirname(os.path.abspath(a.output)) == os.path.abspath(work):
            mine.add(os.path.basename(a.output))
        foreign = [e for e in entries if e not in mine and not is_drummer_temporary(e)]
        init = os.path.join(work, "init")
        if os.path.isdir(init) and not os.path.islink(init):
            foreign += [os.path.join("init", e) for e in sorted(os.listdir(init))
                        if not (e in ("run.json", "train_log.csv", ".drummer-train.lock") or is_drummer_temporary(e)
                                or (e.startswith("ckpt-") and e.endswith(".h5")))]
        elif os.path.lexists(init):
            foreign.append("init")
        if foreign:
            shown = ", ".join(foreign[:5]) + (f", ... ({len(foreign)} in all)" if len(foreign) > 5 else "")
            sys.exit(f"train_torch: --work {work} also holds {shown}, which train_torch does not write there: not removing "
                     f"or replacing {'it' if len(foreign) == 1 else 'them'}; move {'it' if len(foreign) == 1 else 'them'} "
                     f"out or give another --work")
        created = []
    else:
        created, parent = [], os.path.abspath(work)
        while not os.path.lexists(parent):
            created.insert(0, parent)
            parent = os.path.dirname(parent)
        os.makedirs(work)
    wrote_marker = not os.path.exists(os.path.join(work, WORK_MARKER))
    if wrote_marker:
        try:
            with open(os.path.join(work, WORK_MARKER), "w") as f:
                f.write("made by python/train_torch.py: its step-0 checkpoint (init/), init.safetensors, train.npy and "
                        "validation.npy, which each run replaces\n")
        except OSError:
            forget_work(work, created, wrote_marker)
            raise
    return created, wrote_marker


def remove_own(work, names):
    """Removes the script's own files and folders `names` in `work` (those present)."""
    for name in names:
        path = os.path.join(work, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.remove(path)


def forget_work(work, created, wrote_marker):
    """After a failed run: removes what this run wrote in `work` (the folders it created, or in a
    folder it found, its files and the marker it wrote there) and nothing else."""
    if created:
        shutil.rmtree(created[0], ignore_errors=True)
    else:
        try:
            remove_own(work, WORK_FILES + ([WORK_MARKER] if wrote_marker else []))
        except OSError as e:
            print(f"train_torch: could not remove this run's files in {work}: {e}", file=sys.stderr, flush=True)


# Rank 0 prepares the model's groups, initial weights and encoded rows with drummer. The step-0
# run is given the global batch (every process's streams) and the unroll, so that drummer refuses
# data too short for them as `drummer train` would.
failed = torch.zeros(1, device=device)
finished = False
if rank == 0:
    try:
        claimed = claim_work(work)

        def forget_unfinished():
            if not finished:
                forget_work(work, *claimed)

        atexit.register(forget_unfinished)
        # torchrun stops the other processes with SIGTERM when one fails: leave through atexit,
        # with 128 + the signal (not as a failure of drummer's, below).
        stopped_by = []

        def stop(number, frame):
            stopped_by.append(number)
            sys.exit(128 + number)

        signal.signal(signal.SIGTERM, stop)
        init = os.path.join(work, "init")
        ckpt = os.path.join(init, "ckpt-0.h5")
        command = ["train", "--data", a.data, "--steps", "0", "--hidden", str(a.hidden), "--layers", str(a.layers),
                   "--seed", str(a.seed), "--batch-size", str(B * world), "--unroll", str(U), "--dropout", str(a.dropout),
                   "--checkpoint-dir", init] + ([] if grid_recipe else ["--recipe", "original"])
        # The training settings given, checked by drummer as it checks its own (its error names the option).
        for k in ["lr", "lr_decay", "lr_decay_every", "clip", "optimizer", "eval_every"]:
            if k in given:
                command += ["--" + k.replace("_", "-"), str(getattr(a, k))]
        if a.weight_decay:
            command += ["--weight-decay", str(a.weight_decay)]
        # An earlier run's (other data, other settings): the script's own files, checked by claim_work.
        remove_own(work, WORK_FILES)
        drummer(*command, note="" if world == 1 else
                f"; its --batch-size is the global batch, {world} processes x this script's --batch-size: divide what it suggests by {world}")
        drummer("export", ckpt, "--format", "safetensors", "-o", os.path.join(work, "init.safetensors"))
        drummer("encode", ckpt, "--data", a.data, "-o", os.path.join(work, "train.npy"))
        val_out = os.path.join(work, "validation.npy")
        if os.path.isdir(os.path.join(a.data, "validation")):
            drummer("encode", ckpt, "--data", os.path.join(a.data, "validation"), "-o", val_out)
    except (SystemExit, OSError) as e:  # drummer failed, or is not there, or the work folder cannot be made
        if stopped_by:
            raise
        print(e, file=sys.stderr, flush=True)
        failed += 1
if distributed:
    dist.all_reduce(failed)  # also the barrier: every rank waits for rank 0's files
if failed.item():
    if distributed:
        dist.destroy_process_group()
    sys.exit(1)

model, manifest = load(os.path.join(work, "init.safetensors"))
groups = manifest.get("groups") or {}
is_grid = bool(groups.get("grid"))
inputs, outputs = input_sizes(manifest), output_sizes(manifest)
if a.dropout and a.layers > 1:
    model.lstm.dropout = a.dropout
# drummer's layers have one bias each (Wx's bias row): bias_ih trains, bias_hh stays zero (as
# `drummer export` writes it), so that Adam and the clip see drummer's parameters.
for name, q in model.lstm.named_parameters():
    if name.startswith("bias_hh"):
        with torch.no_grad():
            q.zero_()
        q.requires_grad_(False)
model.to(device)
names_in = [g["name"] for g in groups["inputs"]] if groups else ["note", "tick"]
names_out = [g["name"] for g in groups["outputs"]] if groups else ["note", "tick"]
# Each output group predicts the next row's class in the input group of the same name (the
# grid's GridGroup.targetInputs: the hits, velocity_<class> and offset_<class> inputs).
target_columns = [names_in.index(n) for n in names_out]
bounds = np.cumsum([0] + outputs)


def load_rows(path):
    rows = torch.from_numpy(np.load(path).astype(np.int64))
    if rows.ndim != 2 or rows.shape[1] != len(inputs) or bool(((rows < 0) | (rows >= torch.tensor(inputs))).any()):
        sys.exit(f"train_torch: {path} does not hold rows of the model's {len(inputs)} input groups")
    return rows


train = load_rows(os.path.join(work, "train.npy"))
val_path = os.path.join(work, "validation.npy")
validation = load_rows(val_path) if os.path.exists(val_path) else None
if validation is not None and is_grid:
    # A grid split's rows are its files one after another, each from its start row (hits = 512,
    # the start of a file: GridGroup.startOfFile, the hits group's last class).
    starts = torch.nonzero(validation[:, 0] == inputs[0] - 1).flatten().tolist()
    if not starts or starts[0] != 0:
        sys.exit(f"train_torch: {val_path} does not begin with a file's start row")
    val_files = list(zip(starts, starts[1:] + [len(validation)]))
elif validation is not None:
    val_files = [(0, len(validation))]  # the 2017 layout: the whole sequence from a zero state

streams = B * world
segment = len(train) // streams
# Each stream needs a chunk of U inputs and U targets: U + 1 rows (drummer's refusal too).
if segment < U + 1:
    sys.exit(f"train_torch: {len(train)} rows make {streams} streams of {segment} rows, fewer than --unroll {U} + 1")
# This process's streams: [rank*B, (rank+1)*B), each `segment` consecutive rows (stream b of
# the global batch covers rows [b*segment, (b+1)*segment), as in drummer's Trainer).
mine = train[rank * B * segment:(rank + 1) * B * segment].view(B, segment, -1).to(device)

net = nn.parallel.DistributedDataParallel(model) if distributed else model
trained = [q for q in model.parameters() if q.requires_grad]
opt = torch.optim.Adam(trained, lr=a.lr) if a.optimizer == "adam" else DrummerRMSProp(trained, lr=a.lr)


def nll_sum(logits, targets):
    """The sum over rows and output groups of the cross-entropy of the target class. A target
    equal to its group's size (the grid's "not hit", a file's start) is not predicted: no term."""
    total = 0
    for g in range(len(outputs)):
        t = targets[..., g].reshape(-1)
        t = torch.where(t >= outputs[g], torch.full_like(t, -100), t)
        total = total + nn.functional.cross_entropy(logits[..., bounds[g]:bounds[g + 1]].reshape(-1, outputs[g]).float(), t,
                                                    ignore_index=-100, reduction="sum")
    return total


def validate(files_per_batch=32, block=512):
    """drummer eval's loss_all: Σ over the validation files, each run from a zero state, of every
    output group's NLL of each next row, per prediction (a file of n rows makes n - 1)."""
    if validation is None:
        return None
    model.eval()
    total, predictions = 0.0, 0
    order = sorted(val_files, key=lambda f: f[1] - f[0], reverse=True)
    with torch.no_grad():
        for i in range(0, len(order), files_per_batch):
            batch = [f for f in order[i:i + files_per_batch] if f[1] - f[0] >= 2]
            if not batch:
                continue
            n = max(e - s for s, e in batch) - 1  # predictions of the longest file
            # Inputs: rows s..e-2 of each file; targets: rows s+1..e-1, padded with each group's
            # size (no term) past a file's end.
            x = torch.zeros(len(batch), n, len(inputs), dtype=torch.int64)
            y = torch.tensor(outputs, dtype=torch.int64).repeat(len(batch), n, 1)
            for j, (s, e) in enumerate(batch):
                x[j, :e - s - 1] = validation[s:e - 1]
                y[j, :e - s - 1] = validation[s + 1:e][:, target_columns]
                predictions += e - s - 1
            state = None
            for t in range(0, n, block):
                logits, state = model(one_hot(x[:, t:t + block].to(device), inputs), state)
                total += nll_sum(logits, y[:, t:t + block].to(device)).double().item()
    model.train()
    return total / predictions if predictions else None


def rate(step):
    """The rate of update `step` (1-based): lr times lr_decay per lr_decay_every updates done."""
    return a.lr * (a.lr_decay ** ((step - 1) // a.lr_decay_every) if a.lr_decay_every else 1.0)


say(f"train_torch: {'grid' if is_grid else '2017'} layout, {len(inputs)} input groups ({sum(inputs)} one-hot rows), "
    f"{len(outputs)} output groups; {a.layers} layer{'s' if a.layers > 1 else ''} of {a.hidden}, dropout {a.dropout}; "
    f"{world} process{'es' if world > 1 else ''} x {B} streams of {segment} rows, unroll {U}; {a.optimizer} lr {a.lr}"
    + (f" x {a.lr_decay} every {a.lr_decay_every} steps" if a.lr_decay_every else "") + f", clip {a.clip}, {a.steps} steps"
    + (f"; validation: {len(val_files)} file{'s' if len(val_files) != 1 else ''}" if validation is not None else ""))

p, state, t0, eval_seconds = 0, None, time.time(), 0.0
for step in range(1, a.steps + 1):
    for group in opt.param_groups:
        group["lr"] = rate(step)
    # Each row's input: its groups' one-hot blocks side by side (1,218 columns for
    # models/groove's groups), built per chunk.
    logits, state = net(one_hot(mine[:, p:p + U], inputs), state)
    state = tuple(s.detach() for s in state)
    loss = nll_sum(logits, mine[:, p + 1:p + U + 1, target_columns]) / (B * U)
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_value_(trained, a.clip)
    if a.weight_decay:
        # drummer's decoupled weight decay (with Adam, what torch.optim.AdamW does before its step).
        with torch.no_grad():
            for q in trained:
                q.mul_(1 - rate(step) * a.weight_decay)
    opt.step()
    # drummer's schedule: after the update p += U; when p + U + 1 >= segment, p = 0 and a zero state.
    p += U
    if p + U + 1 >= segment:
        p, state = 0, None
    if step % a.eval_every == 0 or step == a.steps:
        e0 = time.time()
        v = validate() if rank == 0 else None
        eval_seconds += time.time() - e0
        busy = time.time() - t0 - eval_seconds  # training alone, rank 0's clock
        say(json.dumps({"step": step, "loss": round(loss.item(), 6), "validation_loss": v and round(v, 6),
                        "processes": world, "lr": rate(step), "seconds": round(time.time() - t0, 1),
                        "timesteps_per_second": round(step * U * streams / max(busy, 1e-9))}))

if rank == 0:
    stale = {"best_validation_loss", "smoothed_loss", "checkpoint", "learning_rate_current", "run_id", "epoch", "step",
             "lr_decay", "lr_decay_every"}
    manifest["metadata"] = {k: v for k, v in (manifest.get("metadata") or {}).items() if k not in stale}
    settings = {"trained_by": "python/train_torch.py", "recipe": a.recipe, "steps": str(a.steps), "processes": str(world),
                "batch_size": str(streams), "batch_size_per_process": str(B), "unroll": str(U), "optimizer": a.optimizer,
                "learning_rate": str(a.lr), "clip": str(a.clip), "hidden": str(a.hidden), "layers": str(a.layers),
                "seed": str(a.seed)}
    if a.lr_decay_every:
        settings.update(lr_decay=str(a.lr_decay), lr_decay_every=str(a.lr_decay_every))
    settings.update({k: str(v) for k, v in [("dropout", a.dropout), ("weight_decay", a.weight_decay)] if v})
    if not a.dropout:
        manifest["metadata"].pop("dropout", None)
    save(model, manifest, a.output, metadata=settings)
    finished = True
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

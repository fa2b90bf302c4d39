"""Parity check: the per-step logits of a drummer model in PyTorch against drummer's own.

usage: parity.py MODEL.safetensors CLASSES.npy LOGITS.npy [--tolerance 1e-4]
CLASSES.npy: int32 (steps, input groups), the classes drummer fed; LOGITS.npy: float32
(steps, outputs), the logits drummer computed after each step from zero state. Prints the
largest relative difference and exits 1 when it exceeds the tolerance (relative to the
largest logit magnitude of the step, at least 1)."""
import argparse
import sys

import numpy as np
import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from drummer_torch import load, one_hot, input_sizes  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("model")
ap.add_argument("classes")
ap.add_argument("logits")
ap.add_argument("--tolerance", type=float, default=1e-4)
a = ap.parse_args()
model, manifest = load(a.model)
classes = torch.from_numpy(np.load(a.classes).astype(np.int64))
want = np.load(a.logits).astype(np.float64)
with torch.no_grad():
    got, _ = model(one_hot(classes, input_sizes(manifest))[None])
got = got[0].double().numpy()
scale = np.maximum(1.0, np.abs(want).max(axis=1, keepdims=True))
err = float((np.abs(got - want) / scale).max())
print(f"parity: {want.shape[0]} steps, {want.shape[1]} logits, largest relative difference {err:.3g} "
      f"(tolerance {a.tolerance:g})")
sys.exit(0 if err <= a.tolerance else 1)

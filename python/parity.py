"""Parity check: the per-step logits of a drummer model in PyTorch (a .safetensors file) or in
ONNX Runtime (a .onnx file, stepped one hit at a time) against drummer's own.

usage: parity.py MODEL.safetensors|MODEL.onnx CLASSES.npy LOGITS.npy [--tolerance 1e-4]
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
want = np.load(a.logits).astype(np.float64)
if a.model.endswith(".onnx"):
    import onnxruntime as ort
    session = ort.InferenceSession(a.model, providers=["CPUExecutionProvider"])
    meta = session.get_modelmeta().custom_metadata_map
    layers, hidden = int(meta["layers"]), int(meta["hidden_size"])
    outputs = ["logits_" + g for g in meta["output_groups"].split(",")]
    state = {f"{s}{l}": np.zeros((1, hidden), np.float32) for l in range(layers) for s in "hc"}
    rows = []
    for x in np.load(a.classes).astype(np.int64):
        result = session.run(outputs + [f"{s}{l}_next" for l in range(layers) for s in "hc"], {"classes": x[None], **state})
        rows.append(np.concatenate(result[:len(outputs)], axis=1)[0])
        state = {f"{s}{l}": r for (l, s), r in zip([(l, s) for l in range(layers) for s in "hc"], result[len(outputs):])}
    got = np.array(rows, np.float64)
else:
    model, manifest = load(a.model)
    classes = torch.from_numpy(np.load(a.classes).astype(np.int64))
    with torch.no_grad():
        got, _ = model(one_hot(classes, input_sizes(manifest))[None])
    got = got[0].double().numpy()
scale = np.maximum(1.0, np.abs(want).max(axis=1, keepdims=True))
err = float((np.abs(got - want) / scale).max())
print(f"parity ({'ONNX Runtime' if a.model.endswith('.onnx') else 'PyTorch'}): {want.shape[0]} steps, {want.shape[1]} logits, largest relative difference {err:.3g} "
      f"(tolerance {a.tolerance:g})")
sys.exit(0 if err <= a.tolerance else 1)

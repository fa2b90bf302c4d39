"""A drummer model in PyTorch: the same network `drummer` trains and samples, as an nn.LSTM
(named `lstm`) and an nn.Linear head (named `head`), loaded from and saved to the safetensors
files `drummer export --format safetensors` writes and `drummer import` reads.

The input at each step is the one-hot concatenation of the model's input groups (the groups in
model.json, in order: a grid model's hits, velocity_<class>, offset_<class>, position, phrase,
lookback, repeat and style groups; the 2017 layout's note and tick); the output is the
concatenation of the output groups' logits (a grid model's hits, velocity_<class> and
offset_<class>; note and tick). The safetensors metadata
holds the model's model.json as "model_json".

    from drummer_torch import load, one_hot
    model, manifest = load("model.safetensors")
    logits, state = model(one_hot(classes, input_sizes(manifest))[None])
"""
import json

import torch
from torch import nn
from safetensors.torch import load_file, save_file
from safetensors import safe_open


class Drummer(nn.Module):
    def __init__(self, inputs, hidden, layers, outputs, dropout=0.0):
        super().__init__()
        self.lstm = nn.LSTM(inputs, hidden, layers, batch_first=True, dropout=dropout if layers > 1 else 0.0)
        self.head = nn.Linear(hidden, outputs)

    def forward(self, x, state=None):
        """x: (batch, steps, inputs) one-hot rows; returns logits (batch, steps, outputs) and (h, c)."""
        h, state = self.lstm(x, state)
        return self.head(h), state


def input_sizes(manifest):
    """The input group sizes, in Wx row order."""
    groups = manifest.get("groups")
    if groups:
        return [g["size"] for g in groups["inputs"]]
    return [len(manifest["ix_to_note"]), len(manifest["ix_to_tick"])]


def output_sizes(manifest):
    """The output group sizes, in Wy column order."""
    groups = manifest.get("groups")
    if groups:
        return [g["size"] for g in groups["outputs"]]
    return [len(manifest["ix_to_note"]), len(manifest["ix_to_tick"])]


def layers(manifest):
    return len(manifest.get("layers") or [None])


def one_hot(classes, sizes):
    """classes: (..., groups) int tensor, one class per input group → (..., sum(sizes)) float: each
    group's one-hot block, in order (row offset_g + class of the input, drummer's Wx row)."""
    classes = classes.long()
    sizes_t = torch.tensor(sizes, device=classes.device)
    if classes.shape[-1] != len(sizes) or bool(((classes < 0) | (classes >= sizes_t)).any()):
        raise ValueError(f"one_hot: classes outside the input groups' sizes {sizes}")
    offsets = torch.cumsum(sizes_t, 0) - sizes_t
    out = torch.zeros(*classes.shape[:-1], sum(sizes), device=classes.device)
    return out.scatter_(-1, classes + offsets, 1.0)


def manifest_of(path):
    with safe_open(path, framework="pt") as f:
        meta = f.metadata() or {}
    if "model_json" not in meta:
        raise ValueError(f"{path}: no model_json in the safetensors metadata (not a drummer model)")
    return json.loads(meta["model_json"])


def load(path):
    """The model of a drummer safetensors file and its model.json (a dict)."""
    manifest = manifest_of(path)
    model = Drummer(sum(input_sizes(manifest)), manifest["hidden_size"], layers(manifest), sum(output_sizes(manifest)))
    model.load_state_dict(load_file(path))
    return model, manifest


def save(model, manifest, path, metadata=None):
    """Writes `model` with `manifest` (a model.json dict: vocabulary, groups, sizes). The manifest's
    checksums are dropped (they belong to other weights); `metadata` is added to its "metadata"."""
    m = dict(manifest)
    m.pop("sha256", None)
    m["metadata"] = {**(m.get("metadata") or {}), **(metadata or {})}
    tensors = {k: v.detach().float().contiguous() for k, v in model.state_dict().items()}
    save_file(tensors, path, metadata={"format": "drummer-model", "model_json": json.dumps(m)})

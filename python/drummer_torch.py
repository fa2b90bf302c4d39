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
        # train_torch.py --output-dropout: the top layer's h on its way to the head (no weights;
        # p = 0, and eval mode, pass h through).
        self.output_dropout = nn.Dropout(0.0)

    def forward(self, x, state=None):
        """x: (batch, steps, inputs) one-hot rows; returns logits (batch, steps, outputs) and (h, c)."""
        h, state = self.lstm(x, state)
        return self.head(self.output_dropout(h)), state


class SummedInputs(nn.Module):
    """The same network as `Drummer`, for training: layer 0's input product is the sum of the
    W_ih columns of each row's classes (an nn.EmbeddingBag over the global one-hot rows, whose
    weight is W_ih_l0 transposed), not a product with a one-hot matrix as wide as every input
    group together; layer 0's recurrence is stepped here, the layers above are an nn.LSTM. Each
    layer has one bias, as drummer's Wx has (bias_ih + bias_hh, written back as bias_ih with
    bias_hh zero, as `drummer export` writes it). `dropout` drops layer k's h on its way to layer
    k + 1 (as nn.LSTM's dropout); `output_dropout` the top layer's h on its way to the head."""

    def __init__(self, sizes, hidden, layers, outputs, dropout=0.0, output_dropout=0.0):
        super().__init__()
        self.sizes, self.hidden, self.layers = list(sizes), hidden, layers
        self.register_buffer("offsets", torch.tensor([sum(sizes[:g]) for g in range(len(sizes))]), persistent=False)
        self.embed = nn.EmbeddingBag(sum(sizes), 4 * hidden, mode="sum")
        self.weight_hh = nn.Parameter(torch.zeros(4 * hidden, hidden))
        self.bias = nn.Parameter(torch.zeros(4 * hidden))
        self.between = nn.Dropout(dropout if layers > 1 else 0.0)
        self.upper = nn.LSTM(hidden, hidden, layers - 1, batch_first=True, dropout=dropout if layers > 2 else 0.0) if layers > 1 else None
        if self.upper is not None:
            for name, q in self.upper.named_parameters():
                if name.startswith("bias_hh"):
                    q.requires_grad_(False)  # zero: the layer's one bias is bias_ih
        self.head = nn.Linear(hidden, outputs)
        self.output_dropout = nn.Dropout(output_dropout)

    @classmethod
    def of(cls, model, sizes, dropout=0.0, output_dropout=0.0):
        """The network of `model` (a Drummer), its weights copied."""
        lstm = model.lstm
        m = cls(sizes, lstm.hidden_size, lstm.num_layers, model.head.out_features, dropout, output_dropout)
        with torch.no_grad():
            m.embed.weight.copy_(lstm.weight_ih_l0.t())
            m.weight_hh.copy_(lstm.weight_hh_l0)
            m.bias.copy_(lstm.bias_ih_l0 + lstm.bias_hh_l0)
            for k in range(1, lstm.num_layers):
                getattr(m.upper, f"weight_ih_l{k - 1}").copy_(getattr(lstm, f"weight_ih_l{k}"))
                getattr(m.upper, f"weight_hh_l{k - 1}").copy_(getattr(lstm, f"weight_hh_l{k}"))
                getattr(m.upper, f"bias_ih_l{k - 1}").copy_(getattr(lstm, f"bias_ih_l{k}") + getattr(lstm, f"bias_hh_l{k}"))
                getattr(m.upper, f"bias_hh_l{k - 1}").zero_()
            m.head.load_state_dict(model.head.state_dict())
        return m

    def drummer(self):
        """The weights as a Drummer (on the CPU), for `save` and evaluation."""
        d = Drummer(sum(self.sizes), self.hidden, self.layers, self.head.out_features)
        lstm = d.lstm
        with torch.no_grad():
            lstm.weight_ih_l0.copy_(self.embed.weight.t())
            lstm.weight_hh_l0.copy_(self.weight_hh)
            lstm.bias_ih_l0.copy_(self.bias)
            lstm.bias_hh_l0.zero_()
            for k in range(1, self.layers):
                for w in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                    getattr(lstm, f"{w}_l{k}").copy_(getattr(self.upper, f"{w}_l{k - 1}"))
            d.head.load_state_dict(self.head.state_dict())
        return d

    def forward(self, classes, state=None):
        """classes: (batch, steps, input groups) ints; state: (h, c), each (layers, batch, H), or
        None (zeros). Returns logits (batch, steps, outputs) and the state after the last step."""
        Bn, T, k = classes.shape
        H = self.hidden
        x = self.embed((classes + self.offsets).reshape(Bn * T, k)).view(Bn, T, 4 * H) + self.bias
        if state is None:
            z = x.new_zeros(self.layers, Bn, H)
            state = (z, z)
        h, c = state[0][0], state[1][0]
        w = self.weight_hh.t()
        out = []
        for t in range(T):
            i, f, g, o = torch.addmm(x[:, t], h, w).chunk(4, 1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            out.append(h)
        y = torch.stack(out, 1)
        hs, cs = [h[None]], [c[None]]
        if self.upper is not None:
            y, (hu, cu) = self.upper(self.between(y), (state[0][1:].contiguous(), state[1][1:].contiguous()))
            hs.append(hu)
            cs.append(cu)
        return self.head(self.output_dropout(y)), (torch.cat(hs), torch.cat(cs))


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

"""Writes the frozen PyTorch fixtures the Swift tests read without PyTorch (run once; the
files are committed): Tests/Fixtures/torch/tiny.safetensors, a 2-layer nn.LSTM drummer
(3 notes, 4 ticks, hidden 5, PyTorch's own random init: both bias vectors non-zero), and
tiny-classes.npy / tiny-logits.npy, a 40-step input sequence and the logits PyTorch computes
for it from zero state.

usage: python3 python/make_fixtures.py [OUT_DIR]"""
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from drummer_torch import Drummer, one_hot, save  # noqa: E402

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "Tests", "Fixtures", "torch")
os.makedirs(out, exist_ok=True)
torch.manual_seed(20261125)
N, K, H, L = 3, 4, 5, 2
model = Drummer(N + K, H, L, N + K)
manifest = {
    "format": "drummer-model", "format_version": 3, "ix_to_note": [36, 38, 42], "ix_to_tick": [0, 60, 120, 240],
    "hidden_size": H,
    "groups": {"inputs": [{"name": "note", "size": N}, {"name": "tick", "size": K}],
               "outputs": [{"name": "note", "size": N}, {"name": "tick", "size": K}]},
    "layers": [{"file": "Wx.bin", "shape": [N + K + H + 1, 4 * H], "input": "note, tick"},
               {"file": "Wx1.bin", "shape": [2 * H + 1, 4 * H], "input": "h of layer 0"}],
}
save(model, manifest, os.path.join(out, "tiny.safetensors"), metadata={"trained_by": "python/make_fixtures.py"})
g = torch.Generator().manual_seed(7)
classes = torch.stack([torch.randint(0, N, (40,), generator=g), torch.randint(0, K, (40,), generator=g)], dim=1)
with torch.no_grad():
    logits, _ = model(one_hot(classes, [N, K])[None])
np.save(os.path.join(out, "tiny-classes.npy"), classes.numpy().astype(np.int32))
np.save(os.path.join(out, "tiny-logits.npy"), logits[0].numpy().astype(np.float32))
print(json.dumps({"wrote": sorted(os.listdir(out))}))

"""Step 2: parameters/buffers of the converted model, backward pass, fwd+bwd time for 16 chunks at 1 thread."""
import warnings, time; warnings.filterwarnings("ignore")
import numpy as np, torch
from common import *
torch.set_num_threads(1)
model = load_torch_model()
P = list(model.named_parameters()); B = list(model.named_buffers())
print("parameters:", len(P), sum(p.numel() for _, p in P), "requires_grad:", sum(p.numel() for _, p in P if p.requires_grad))
print("float buffers:", [(n, tuple(b.shape)) for n, b in B if b.is_floating_point() and b.numel() > 1][:60])
names = make_trainable(model)
P = [p for p in model.parameters() if p.requires_grad]
print("trainable tensors:", len(names), "params:", sum(p.numel() for p in P), [tuple(p.shape) for p in P])
cp = eval_texts(n=16); x = torch.from_numpy(binarize(cp))
model.train()
for i in range(3):
    t = time.time()
    e = model(x); loss = (e @ e.T).sum(); loss.backward()
    print(f"fwd+bwd 16 chunks: {time.time()-t:.2f}s  grad norms min/max {min(p.grad.norm().item() for p in P):.2e}/{max(p.grad.norm().item() for p in P):.2e}")
    model.zero_grad()
with torch.no_grad():
    t = time.time(); model(x); print(f"fwd only 16 chunks (no_grad): {time.time()-t:.2f}s")

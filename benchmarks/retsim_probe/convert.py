"""Step 1: onnx2torch conversion of RETSim v1 + parity vs onnxruntime on 200 chunks."""
import time, numpy as np, torch
from common import *
torch.set_num_threads(1)
t = time.time(); model = load_torch_model().eval(); print(f"converted in {time.time()-t:.1f}s")
cp = eval_texts(n=200)
print("chunks", cp.shape)
enc = RETSimEncoder(num_threads=1, dedup=False)
t = time.time(); e_onnx = enc.embed_codepoints(cp); t_onnx = time.time() - t
t = time.time(); e_torch = torch_embed(model, cp); t_torch = time.time() - t
cos = (e_onnx * e_torch).sum(1)
print(f"parity cosine: min {cos.min():.7f} mean {cos.mean():.7f}  max|diff| {np.abs(e_onnx-e_torch).max():.2e}")
print(f"time 200 chunks: onnx {t_onnx:.1f}s torch {t_torch:.1f}s (1 thread)")
torch.save(model, "retsim_torch.pt")

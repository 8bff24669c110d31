"""Locate where onnx2torch output diverges from onnxruntime: truncate the graph at intermediate tensors."""
import warnings; warnings.filterwarnings("ignore")
import onnx, onnx.utils, numpy as np, torch, onnxruntime as ort
from onnx2torch import convert
from common import *
torch.set_num_threads(1)
m = onnx.load(ONNX)
cp = eval_texts(n=8); x = binarize(cp)
names = [o for n in m.graph.node for o in n.output if n.op_type not in ("Shape", "Cast", "Gather", "Concat", "Max") or o == "embedding_model"]
import sys
picks = [t for t in names if any(k in t for k in sys.argv[1:])] if len(sys.argv) > 1 else names
for t in picks:
    onnx.utils.extract_model(ONNX, "sub.onnx", ["input_1"], [t], check_model=False)
    sub = onnx.load("sub.onnx")
    a = ort.InferenceSession("sub.onnx", providers=["CPUExecutionProvider"]).run(None, {"input_1": x})[0]
    try:
        b = convert(sub).eval()(torch.from_numpy(x)).detach().numpy()
    except Exception as e:
        print("FAIL", t[-60:], type(e).__name__, str(e)[:100]); continue
    if a.shape != b.shape:
        print("SHAPE", t[-60:], a.shape, b.shape); continue
    d = np.abs(a.astype(np.float64) - b).max() / (np.abs(a).max() + 1e-12)
    print(f"{d:.2e}", a.shape, t[-70:])

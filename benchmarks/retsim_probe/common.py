"""Shared helpers for the RETSim fine-tuning probe (run with PYTHONPATH=pylib:stub)."""
import os
import json, random, sys
import numpy as np
import torch
from neardup.represent.retsim import RETSimEncoder, chunk_codepoints, binarize, default_model_path
from neardup.eval.evaluate import load_labelled

TE = os.environ.get("NEARDUP_TRAIN_WORK", "/tmp/neardup-bench/train")  # bench_train.py --work: its data files
ONNX = str(default_model_path())


def fixed_onnx(path=ONNX):
    """v1.onnx with its two GlobalAveragePool nodes (TF mean over the last axis of a (B,512,256)
    tensor) rewritten as ReduceMean(axes=[-1], keepdims=1): onnx2torch 1.5.15 reads the input's
    value_info shape as rank<3 and averages over *all* axes -> (1,1,1), breaking parity."""
    import onnx
    m = onnx.load(path)
    for n in m.graph.node:
        if n.op_type == "GlobalAveragePool":
            n.op_type = "ReduceMean"
            n.attribute.extend([onnx.helper.make_attribute("axes", [-1]), onnx.helper.make_attribute("keepdims", 1)])
    return m


def load_torch_model(path=ONNX):
    from onnx2torch import convert
    return convert(fixed_onnx(path))


def chunks_of(texts, max_per_doc=None):
    cp, off = chunk_codepoints(texts, pad_chunks=False)
    if max_per_doc:
        keep = np.concatenate([np.arange(off[i], min(off[i + 1], off[i] + max_per_doc)) for i in range(len(texts))])
        cp = cp[keep]
    return cp


def torch_embed(model, cp, bs=16):
    out = []
    with torch.no_grad():
        for i in range(0, len(cp), bs):
            out.append(model(torch.from_numpy(binarize(cp[i:i + bs]))).numpy())
    e = np.concatenate(out)
    return e / np.linalg.norm(e, axis=1, keepdims=True)


def eval_texts(seed=0, n=200):
    """~n chunks from the BBC val/test and Reuters day texts (first 2 chunks per doc)."""
    texts = []
    for f in ("bbc_val", "bbc_test", "reuters_day_a", "reuters_day_b"):
        texts += list(load_labelled(f"{TE}/{f}.jsonl").corpus.texts)
    rng = random.Random(seed)
    rng.shuffle(texts)
    cp = chunks_of(texts[: n], max_per_doc=2)
    return cp[:n]


def make_trainable(model, train_pos=False):
    """onnx2torch stores every initializer as a buffer; turn the weight tensors into Parameters.
    Trained: all float initializers with >1 element except the (512,24) scaled sinusoidal position
    table and the (512,512) const-folded relative-position matrices (unless train_pos)."""
    init = model.initializers
    names = []
    for n, b in list(init._buffers.items()):
        if b is None or not b.is_floating_point() or b.numel() <= 1:
            continue
        if not train_pos and tuple(b.shape) in ((512, 24), (512, 512)):
            continue
        del init._buffers[n]
        init.register_parameter(n, torch.nn.Parameter(b.clone()))
        names.append(n)
    return names


def write_back_onnx(model, names, out_path, src=ONNX):
    """Copy trained tensors into the *original* v1.onnx graph (same ops/names as shipped), matching
    each trained tensor to the initializer with identical original values (asserted unique)."""
    import onnx
    from onnx import numpy_helper
    m = onnx.load(src)
    orig = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    ref = load_torch_model(src)
    by_pos = {}
    for n in names:
        o = getattr(ref.initializers, n).numpy()
        hits = [k for k, v in orig.items() if v.shape == o.shape and v.dtype == o.dtype and np.array_equal(v, o)]
        assert len(hits) == 1, (n, hits)
        by_pos[hits[0]] = getattr(model.initializers, n).detach().numpy().astype(np.float32)
    for i in m.graph.initializer:
        if i.name in by_pos:
            i.CopyFrom(numpy_helper.from_array(by_pos[i.name], i.name))
    onnx.save(m, out_path)
    return len(by_pos)

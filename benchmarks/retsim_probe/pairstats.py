"""Finer than ARI: pair-level separation on each eval set from saved embeddings (emb_<tag>.npz).
Usage: python pairstats.py shipped ftA ftB ..."""
import os
import sys, numpy as np
from neardup.eval.evaluate import load_labelled
from sklearn.metrics import average_precision_score
TE = os.environ.get("NEARDUP_TRAIN_WORK", "/tmp/neardup-bench/train")  # bench_train.py --work: its data files
for f in ("bbc_val", "bbc_test", "reuters_day_a", "reuters_day_b"):
    d = load_labelled(f"{TE}/{f}.jsonl")
    import json
    cl = [json.loads(l)["cluster"] for l in open(f"{TE}/{f}.jsonl")]
    cl = np.array([hash(c) if c is not None else -1 - i for i, c in enumerate(cl)]); iu = np.triu_indices(len(cl), 1)  # None = singleton; iu = np.triu_indices(len(cl), 1)
    y = (cl[:, None] == cl[None, :])[iu]
    for tag in sys.argv[1:]:
        e = np.load(f"emb_{tag}.npz")[f]; s = (e @ e.T)[iu]
        sp, sn = s[y], s[~y]
        print(f"{f:14s} {tag:8s} pos pairs {y.sum():4d} pos cos min {sp.min():.3f} p10 {np.percentile(sp,10):.3f} | neg max {sn.max():.3f} #neg>0.9 {int((sn>0.9).sum()):3d} #neg>0.95 {int((sn>0.95).sum()):3d} | pair AP {average_precision_score(y, s):.4f}")

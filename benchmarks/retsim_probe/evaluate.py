"""Step 4: score an ONNX RETSim model (default: shipped v1.onnx) with neardup's RETSimEncoder.
Usage: python evaluate.py [model.onnx] [tag]   -> results_<tag>.json, emb_<tag>.npz"""
import os
import sys, json, time, numpy as np
from neardup.represent.retsim import RETSimEncoder
from neardup.eval.evaluate import load_labelled
from neardup.train.evaluate import tune_biencoder
TE = os.environ.get("NEARDUP_TRAIN_WORK", "/tmp/neardup-bench/train")  # bench_train.py --work: its data files
path = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] != "shipped" else None
tag = sys.argv[2] if len(sys.argv) > 2 else "shipped"
enc = RETSimEncoder(model_path=path, num_threads=1)
sets = {f: load_labelled(f"{TE}/{f}.jsonl") for f in ("bbc_val", "bbc_test", "reuters_day_a", "reuters_day_b")}
t = time.time()
emb = {f: enc.encode(list(d.corpus.texts)).astype(np.float32) for f, d in sets.items()}
print(f"{tag}: encoded in {time.time()-t:.0f}s")
np.savez(f"emb_{tag}.npz", **emb)
out = {}
for name, (v, te) in {"bbc val->test": ("bbc_val", "bbc_test"), "reuters A->B": ("reuters_day_a", "reuters_day_b"),
                      "reuters B->A": ("reuters_day_b", "reuters_day_a")}.items():
    r = tune_biencoder(sets[v], emb[v], sets[te], emb[te])
    o = tune_biencoder(sets[te], emb[te])
    out[name] = dict(val_ari=r["validation"]["ari"], threshold=r["threshold"], test_ari=r["test"]["ari"],
                     oracle_ari=o["validation"]["ari"], oracle_threshold=o["threshold"])
    print(f"{tag:12s} {name:14s} val {out[name]['val_ari']:.4f} thr {r['threshold']:.3f} test {out[name]['test_ari']:.4f} oracle {out[name]['oracle_ari']:.4f} (thr {o['threshold']:.3f})")
json.dump(out, open(f"results_{tag}.json", "w"), indent=1)

"""Step 3: fine-tune RETSim (onnx2torch) with multi-similarity loss on neardup noise augmentations.
Usage: PYTHONPATH=pylib:stub python train.py [--lr 2e-5] [--minutes 13] [--k 12] [--views 4] [--tag ft]
Writes <tag>.onnx (trained weights copied into the original v1.onnx graph) + <tag>_mid.onnx, train_<tag>.log."""
import warnings; warnings.filterwarnings("ignore")
import argparse, json, random, time
import numpy as np, torch
from common import *
from neardup.synth import apply_noise, make_hard_negative
HARD_KINDS = ("update", "same_event_rewrite", "template_sibling", "entity_swap")
from neardup.train.synthetic import TRAIN_PRESET_MIX

ap = argparse.ArgumentParser()
ap.add_argument("--lr", type=float, default=2e-5); ap.add_argument("--minutes", type=float, default=13)
ap.add_argument("--max-steps", type=int, default=400); ap.add_argument("--k", type=int, default=12)
ap.add_argument("--views", type=int, default=4); ap.add_argument("--sources", type=int, default=600)
ap.add_argument("--alpha", type=float, default=2.0); ap.add_argument("--beta", type=float, default=40.0)
ap.add_argument("--lmda", type=float, default=0.5); ap.add_argument("--eps", type=float, default=0.1)
ap.add_argument("--hard", type=int, default=0, help="hard-negative classes per batch (make_hard_negative + 1 noisy copy)")
ap.add_argument("--tag", default="ft"); ap.add_argument("--seed", type=int, default=0)
a = ap.parse_args()
torch.set_num_threads(1); torch.manual_seed(a.seed)
log = open(f"train_{a.tag}.log", "w")
def say(*x):
    s = " ".join(map(str, x)); print(s, flush=True); log.write(s + "\n"); log.flush()
say(json.dumps(vars(a)))

rows = [json.loads(l) for l in open(f"{TE}/reuters_train_texts.jsonl")]
rows = [r["text"] for r in rows if 200 <= len(r["text"]) <= 20000]
rng = random.Random(a.seed); rng.shuffle(rows)
train_src, held_src = rows[: a.sources], rows[a.sources : a.sources + 16]
presets, weights = zip(*TRAIN_PRESET_MIX)


def first_chunk(text):
    cp, _ = chunk_codepoints([text], pad_chunks=False)
    return cp[0]


def batch(srcs, seed):
    r = random.Random(seed); cps, labels = [], []
    for lab, (sid, text) in enumerate(srcs):
        cps.append(first_chunk(text)); labels.append(lab)
        for v in range(a.views - 1):
            p = r.choices(presets, weights)[0]
            cps.append(first_chunk(apply_noise(text, p, r.randrange(1 << 30), doc_id=str(sid)).text)); labels.append(lab)
    lab = len(srcs); tries = 0
    while lab < len(srcs) + a.hard and tries < 4 * a.hard:  # hard negatives of the first sources: own class
        sid, text = srcs[tries % len(srcs)]; tries += 1
        h = make_hard_negative(text, r.choice(HARD_KINDS), r.randrange(1 << 30), pool=train_src[:200], doc_id=str(sid)).text
        hc = first_chunk(h)
        if np.array_equal(hc, first_chunk(text)):
            continue  # change not in the first chunk: would be a contradictory label
        cps.append(hc); labels.append(lab)
        cps.append(first_chunk(apply_noise(h, r.choices(presets, weights)[0], r.randrange(1 << 30), doc_id="h" + str(sid)).text)); labels.append(lab)
        lab += 1
    return torch.from_numpy(binarize(np.stack(cps))), torch.tensor(labels)


def ms_loss(e, y):
    """Multi-similarity loss (Wang et al. 2019) with its pair mining; cosine similarity of unit vectors."""
    S = e @ e.T
    same = y[:, None] == y[None, :]
    eye = torch.eye(len(y), dtype=torch.bool)
    pos, neg = same & ~eye, ~same
    losses = []
    for i in range(len(y)):
        sp, sn = S[i][pos[i]], S[i][neg[i]]
        if len(sp) == 0 or len(sn) == 0:
            continue
        sn_m = sn[sn + a.eps > sp.min()]           # hard negatives
        sp_m = sp[sp - a.eps < sn.max()]           # hard positives
        lp = torch.log1p(torch.exp(-a.alpha * (sp_m - a.lmda)).sum()) / a.alpha if len(sp_m) else S[i, i] * 0
        ln = torch.log1p(torch.exp(a.beta * (sn_m - a.lmda)).sum()) / a.beta if len(sn_m) else S[i, i] * 0
        losses.append(lp + ln)
    return torch.stack(losses).mean() if losses else S.sum() * 0


def held_stats(model, hb):
    with torch.no_grad():
        e = model(hb[0]); S = e @ e.T; y = hb[1]
        same = y[:, None] == y[None, :]; eye = torch.eye(len(y), dtype=torch.bool)
        sp, sn = S[same & ~eye], S[~same]
        # margin: per anchor, min positive minus max negative
        marg = torch.stack([S[i][(same & ~eye)[i]].min() - S[i][~same[i]].max() for i in range(len(y))])
        return dict(pos=sp.mean().item(), pos_min=sp.min().item(), neg=sn.mean().item(), neg_max=sn.max().item(),
                    margin_min=marg.min().item(), frac_sep=(marg > 0).float().mean().item(), loss=ms_loss(e, y).item())


model = load_torch_model(); names = make_trainable(model)
params = [p for p in model.parameters() if p.requires_grad]
say("trainable params", sum(p.numel() for p in params))
opt = torch.optim.AdamW(params, lr=a.lr, weight_decay=0.0)
hb = batch(list(enumerate(held_src)), 12345)  # held-out: 16 unseen sources (+ hard negatives if --hard)
say("held-out before", json.dumps({k: round(v, 4) for k, v in held_stats(model, hb).items()}))

order = list(range(len(train_src))); step = 0; t0 = time.time(); mid_saved = False; run = []
while step < a.max_steps and time.time() - t0 < a.minutes * 60:
    if step * a.k % len(order) == 0:
        rng.shuffle(order)
    idx = [order[(step * a.k + j) % len(order)] for j in range(a.k)]
    x, y = batch([(i, train_src[i]) for i in idx], step)
    loss = ms_loss(model(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
    run.append(loss.item()); step += 1
    if step % 20 == 0:
        say(f"step {step} loss(avg20) {np.mean(run[-20:]):.4f} elapsed {time.time()-t0:.0f}s")
    if not mid_saved and time.time() - t0 > a.minutes * 30:
        write_back_onnx(model, names, f"{a.tag}_mid.onnx"); mid_saved = True
        say(f"mid checkpoint at step {step}", json.dumps({k: round(v, 4) for k, v in held_stats(model, hb).items()}))
train_s = time.time() - t0
say(f"trained {step} steps in {train_s:.0f}s ({train_s/step:.2f}s/step, {a.k*a.views} chunks/step)")
say("held-out after", json.dumps({k: round(v, 4) for k, v in held_stats(model, hb).items()}))
n = write_back_onnx(model, names, f"{a.tag}.onnx"); say("wrote", n, "tensors into", f"{a.tag}.onnx")
# check: exported ONNX (via neardup's RETSimEncoder) reproduces the torch model; drift vs shipped
cp = eval_texts(n=200)
e_t = torch_embed(model, cp)
e_ft = RETSimEncoder(model_path=f"{a.tag}.onnx", num_threads=1, dedup=False).embed_codepoints(cp)
e_0 = RETSimEncoder(num_threads=1, dedup=False).embed_codepoints(cp)
c1 = (e_t * e_ft).sum(1); c2 = (e_0 * e_ft).sum(1)
say(f"exported-ONNX vs torch cosine: min {c1.min():.7f}")
say(f"drift fine-tuned vs shipped chunk cosine (200 eval chunks): min {c2.min():.4f} mean {c2.mean():.4f} median {np.median(c2):.4f}")

"""The training loop every trainer shares: AdamW with linear warm-up and decay, a tqdm bar showing the
loss, atomic checkpoints, resume, and a wall-clock budget.

Owns optimisation steps, checkpoints and stopping; must not know what the model or the loss is.

Checkpoints: ``<out>/checkpoints/step-NNNNNNN/state.pt`` holds the model's ``state_dict``, the
optimizer and scheduler states, the step, the loss history, the torch RNG state and a fingerprint of
the data and settings. Each is written into a temporary folder that is renamed into place when
complete (a crash never leaves a half checkpoint that ``--resume`` would pick up); the newest
``keep`` are kept. A checkpoint is written every ``checkpoint_every`` steps, when the budget or an
interruption (Ctrl-C, SIGTERM) stops training, and at the end. Resuming loads the newest checkpoint,
refuses one made for other data or settings, and continues with the next batch of the same plan (the
batch plan is a pure function of the data and seed, so it is rebuilt identically).
"""

from __future__ import annotations

import math
import os
import shutil
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHECKPOINT_DIR = "checkpoints"


class TrainError(ValueError):
    """Training cannot start or resume as asked; the message says why."""


@dataclass
class LoopConfig:
    """Optimisation and bookkeeping settings of :func:`run_loop`."""

    out: Path
    lr: float = 2e-5
    weight_decay: float = 0.01
    warmup: float = 0.1
    grad_clip: float | None = 1.0
    head_lr: float | None = None  # a separate learning rate for parameters whose name contains head_match
    head_match: str = "classifier"
    checkpoint_every: int = 50
    keep: int = 2
    resume: bool = False
    deadline: float | None = None  # time.time() after which no new step starts
    stop_at_step: int | None = None  # stop early as if interrupted (tests, --max-steps)
    progress: bool = True
    desc: str = "training"


@dataclass
class LoopResult:
    """What the loop did: steps done (in total, across resumes), planned steps, losses, why it stopped."""

    step: int
    total_steps: int
    losses: list[float]
    stopped: str  # "finished" | "budget" | "interrupted" | "stop_at_step"
    resumed_from: int | None
    seconds: float
    checkpoints: list[str] = field(default_factory=list)


def checkpoint_dirs(out: Path) -> list[Path]:
    """Complete checkpoints under ``out``, oldest first."""
    root = Path(out) / CHECKPOINT_DIR
    if not root.is_dir():
        return []
    found = [p for p in root.iterdir() if p.is_dir() and p.name.startswith("step-") and (p / "state.pt").exists()]
    return sorted(found, key=lambda p: int(p.name.split("-", 1)[1]))


def latest_checkpoint(out: Path) -> Path | None:
    """The newest complete checkpoint under ``out``, if any."""
    found = checkpoint_dirs(out)
    return found[-1] if found else None


def linear_schedule(total: int, warmup: float) -> Callable[[int], float]:
    """LR multiplier: linear warm-up over ``warmup`` of the steps, then linear decay to 0.

    >>> f = linear_schedule(10, 0.2); [round(f(s), 2) for s in (0, 1, 2, 6, 10)]
    [0.5, 1.0, 1.0, 0.5, 0.0]
    """
    n_warm = max(1, int(math.ceil(warmup * total))) if warmup > 0 else 0

    def f(step: int) -> float:
        if n_warm and step < n_warm:
            return (step + 1) / n_warm
        return max(0.0, (total - step) / max(1, total - n_warm))

    return f


def _save_checkpoint(out: Path, step: int, state: dict[str, Any], keep: int) -> Path:
    import torch

    root = Path(out) / CHECKPOINT_DIR
    root.mkdir(parents=True, exist_ok=True)
    final = root / f"step-{step:07d}"
    tmp = root / f".tmp-step-{step:07d}-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    torch.save(state, tmp / "state.pt")
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)
    for old in checkpoint_dirs(out)[:-keep] if keep > 0 else []:
        shutil.rmtree(old, ignore_errors=True)
    return final


def run_loop(module: Any, batches: Sequence[Any], loss_fn: Callable[[Any], Any], cfg: LoopConfig,
             fingerprint: str, extra_state: dict[str, Any] | None = None) -> LoopResult:
    """Train ``module`` (a ``torch.nn.Module``) on ``batches`` in order; ``loss_fn(batch)`` returns a scalar loss.

    One step per batch; ``len(batches)`` is the planned total (the LR schedule spans it). Returns after
    the last batch, when the deadline would be passed, at ``stop_at_step``, or on Ctrl-C/SIGTERM (a
    checkpoint is written in every case).
    """
    import torch

    from neardup.progress import progress_bar

    total = len(batches)
    if total == 0:
        raise TrainError("no training batches: the training split is empty or has no pairs")
    named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
    params = [p for _, p in named]
    is_head = (lambda n: cfg.head_match in n) if cfg.head_lr and cfg.head_match else (lambda n: False)
    groups = [{"params": [p for n, p in named if p.ndim > 1 and not is_head(n)], "weight_decay": cfg.weight_decay},
              {"params": [p for n, p in named if p.ndim <= 1 and not is_head(n)], "weight_decay": 0.0},
              {"params": [p for n, p in named if is_head(n)], "weight_decay": 0.0, "lr": cfg.head_lr or cfg.lr}]
    optimizer = torch.optim.AdamW([g for g in groups if g["params"]], lr=cfg.lr)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, linear_schedule(total, cfg.warmup))
    step = 0
    losses: list[float] = []
    resumed_from: int | None = None
    if cfg.resume:
        ckpt = latest_checkpoint(cfg.out)
        if ckpt is None:
            raise TrainError(f"--resume: no checkpoint in {Path(cfg.out) / CHECKPOINT_DIR}")
        state = torch.load(ckpt / "state.pt", map_location="cpu", weights_only=False)
        if state.get("fingerprint") != fingerprint:
            raise TrainError(f"--resume: {ckpt} was made for other data or settings; use the same options "
                             f"or a new --out")
        module.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        step = int(state["step"])
        losses = list(state.get("losses", []))
        if "torch_rng" in state:
            torch.set_rng_state(state["torch_rng"])
        resumed_from = step

    def make_state() -> dict[str, Any]:
        return {"model": module.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "step": step, "total_steps": total, "losses": losses,
                "torch_rng": torch.get_rng_state(), "fingerprint": fingerprint, **(extra_state or {})}

    saved: list[str] = []
    stopped = "finished"
    interrupted = {"flag": False}

    def on_term(signum: int, frame: Any) -> None:  # noqa: ARG001
        interrupted["flag"] = True

    old_term = None
    try:
        old_term = signal.signal(signal.SIGTERM, on_term)
    except ValueError:  # not the main thread
        old_term = None
    t0 = time.time()
    step_times: list[float] = []
    bar = progress_bar(cfg.progress, total=total, initial=step, desc=cfg.desc, unit="step", leave=True)
    module.train()
    try:
        while step < total:
            if cfg.stop_at_step is not None and step >= cfg.stop_at_step:
                stopped = "stop_at_step"
                break
            if cfg.deadline is not None:
                expect = (sorted(step_times)[len(step_times) // 2] if step_times else 0.0)
                if time.time() + expect > cfg.deadline:
                    stopped = "budget"
                    break
            if interrupted["flag"]:
                stopped = "interrupted"
                break
            ts = time.time()
            loss = loss_fn(batches[step])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if cfg.grad_clip:
                torch.nn.utils.clip_grad_norm_(params, cfg.grad_clip)
            optimizer.step()
            scheduler.step()
            step += 1
            value = float(loss.detach())
            losses.append(value)
            step_times.append(time.time() - ts)
            recent = losses[-20:]
            bar.set_postfix(loss=f"{value:.4f}", avg=f"{sum(recent) / len(recent):.4f}",
                            lr=f"{scheduler.get_last_lr()[0]:.2e}")
            bar.update(1)
            if cfg.checkpoint_every and step % cfg.checkpoint_every == 0 and step < total:
                saved.append(str(_save_checkpoint(cfg.out, step, make_state(), cfg.keep)))
    except KeyboardInterrupt:
        stopped = "interrupted"
    finally:
        bar.close()
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)
    if not saved or not saved[-1].endswith(f"step-{step:07d}"):
        saved.append(str(_save_checkpoint(cfg.out, step, make_state(), cfg.keep)))
    module.eval()
    return LoopResult(step=step, total_steps=total, losses=losses, stopped=stopped, resumed_from=resumed_from,
                      seconds=time.time() - t0, checkpoints=saved)


__all__ = ["CHECKPOINT_DIR", "LoopConfig", "LoopResult", "TrainError", "checkpoint_dirs", "latest_checkpoint",
           "linear_schedule", "run_loop"]

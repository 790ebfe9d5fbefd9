#!/usr/bin/env python3
"""Trains Kiln's bundled demo model: a small Gemma 3 (transformers' Gemma3ForCausalLM) on the KJV.

Reads DATA/{train,valid,heldout}.txt (from prepare_data.py) and the SentencePiece tokenizer made by
spm_train, trains with a fixed seed, keeps the checkpoint with the best validation loss, and writes
  OUT/model/{config.json, model.safetensors (bf16), tokenizer.model}
  OUT/demo-reference.json   ground truth computed by transformers on the saved model (float32, eager):
                            held-out token ids and windowed perplexity, logits of a few held-out
                            sequences, and a greedy continuation of "Once upon a time"
  OUT/train-log.json        the validation curve and timings
See README.md beside this file for the exact commands.
"""
import argparse
import json
import math
import shutil
import time
from pathlib import Path

import sentencepiece as spm
import torch
import torch.nn.functional as F
import transformers
from transformers import Gemma3ForCausalLM, Gemma3TextConfig

BOS, EOS, END_OF_TURN = 2, 1, 5


def model_config_dict(vocab_size, smoke):
    """The demo model's config.json: the flat gemma3_text form of the released gemma-3-1b."""
    # 12 layers: 5 local, 1 global, 5 local, 1 global, as in the real models. GQA 4:2, head_dim 64,
    # q dimension (4*64=256) wider than hidden (192) as in gemma-3-1b (4*256 > 1152).
    layers = 6 if smoke else 12
    return {
        "model_type": "gemma3_text",
        "architectures": ["Gemma3ForCausalLM"],
        "vocab_size": vocab_size,
        "hidden_size": 64 if smoke else 192,
        "intermediate_size": 128 if smoke else 640,
        "num_hidden_layers": layers,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16 if smoke else 64,
        "sliding_window": 128,
        "sliding_window_pattern": 6,
        "layer_types": ["full_attention" if (i + 1) % 6 == 0 else "sliding_attention" for i in range(layers)],
        "query_pre_attn_scalar": 16 if smoke else 64,
        "rope_theta": 1000000.0,
        "rope_local_base_freq": 10000.0,
        "rope_scaling": None,
        "rms_norm_eps": 1e-06,
        "hidden_activation": "gelu_pytorch_tanh",
        "attn_logit_softcapping": None,
        "final_logit_softcapping": None,
        "max_position_embeddings": 2048,
        "bos_token_id": BOS,
        "eos_token_id": [EOS, END_OF_TURN],
        "pad_token_id": 0,
        "tie_word_embeddings": True,
        "torch_dtype": "bfloat16",
    }


def add_residual_dropout(model, p):
    """Dropout on each attention and MLP output while training only (the data is small, so the
    model sees it many times). Inference is the unchanged Gemma 3 forward pass."""
    def hook(module, _inputs, output):
        return F.dropout(output, p, module.training)
    for layer in model.model.layers:
        layer.self_attn.o_proj.register_forward_hook(hook)
        layer.mlp.down_proj.register_forward_hook(hook)


def lr_at(step, total, peak, warmup):
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def batch_windows(stream, offsets, seq):
    """[BOS] + seq-1 tokens from each offset: the same shape of input the perplexity windows use."""
    rows = [torch.cat([torch.tensor([BOS]), stream[o:o + seq - 1]]) for o in offsets.tolist()]
    return torch.stack(rows)


@torch.no_grad()
def validation_loss(model, stream, seq, device):
    """Mean loss over non-overlapping [BOS]+chunk windows of the validation text (all positions)."""
    model.eval()
    total, count = 0.0, 0
    for start in range(0, len(stream) - 1, seq - 1):
        window = torch.cat([torch.tensor([BOS]), stream[start:start + seq - 1]]).unsqueeze(0).to(device)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
            logits = model(input_ids=window).logits.float()
        loss = F.cross_entropy(logits[0, :-1], window[0, 1:], reduction="sum")
        total += loss.item()
        count += window.shape[1] - 1
    model.train()
    return total / count


@torch.no_grad()
def windowed_perplexity(model, ids, ctx, device):
    """Kiln's `perplexity` definition: windows of ctx tokens ([BOS] + ctx-1 text tokens) advancing by
    ctx/2; only targets in a window's second half (window index >= ctx/2) are scored, so every scored
    token has at least ctx/2-1 tokens of context and each text token from ctx/2-1 on is scored once."""
    half = ctx // 2
    nll_sum, scored, start = 0.0, 0, 0
    while start + half - 1 < len(ids):
        chunk = ids[start:start + ctx - 1]
        window = torch.tensor([[BOS] + chunk], device=device)
        logp = torch.log_softmax(model(input_ids=window).logits[0].double(), dim=-1)
        targets = window[0, half:]  # row j-1 predicts window token j
        nll_sum -= logp[half - 1:window.shape[1] - 1].gather(1, targets.unsqueeze(1)).sum().item()
        scored += targets.numel()
        start += half
    return {"ctx": ctx, "stride": half, "scored_tokens": scored, "nll_sum": nll_sum,
            "perplexity": math.exp(nll_sum / scored)}


@torch.no_grad()
def greedy(model, prompt_ids, new_tokens, device):
    ids = list(prompt_ids)
    margins = []
    for _ in range(new_tokens):
        logits = model(input_ids=torch.tensor([ids], device=device)).logits[0, -1].double()
        top2 = torch.topk(logits, 2)
        margins.append(round((top2.values[0] - top2.values[1]).item(), 5))
        ids.append(int(top2.indices[0]))
    return ids[len(prompt_ids):], margins


def write_reference(model_dir, sp, heldout_text, device, smoke):
    """Ground truth from transformers on the saved files (bf16 weights, float32 compute, eager)."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    ref = Gemma3ForCausalLM.from_pretrained(model_dir, dtype=torch.float32, attn_implementation="eager")
    ref.to(device).eval()
    print("reloaded config: layer_types", ref.config.layer_types, "sliding_window", ref.config.sliding_window,
          "query_pre_attn_scalar", ref.config.query_pre_attn_scalar,
          "rope", getattr(ref.config, "rope_parameters", None), flush=True)
    heldout_ids = sp.encode(heldout_text)
    contexts = [64, 128] if smoke else [128, 512, 2048]
    perplexities = [windowed_perplexity(ref, heldout_ids, c, device) for c in contexts]
    for p in perplexities:
        print(f"held-out perplexity ctx {p['ctx']}: {p['perplexity']:.4f} over {p['scored_tokens']} tokens",
              flush=True)
    cases = []
    for offset, length in [(0, 16), (1000, 200), (5000, 600)]:
        input_ids = [BOS] + heldout_ids[offset:offset + length - 1]
        positions = sorted({0, 1, length // 2, length - 2, length - 1})
        logits = ref(input_ids=torch.tensor([input_ids], device=device)).logits[0]
        rows = [[round(v, 5) for v in logits[p].tolist()] for p in positions]
        cases.append({"input_ids": input_ids, "positions": positions, "logits": rows})
    prompt = "Once upon a time"
    prompt_ids = [BOS] + sp.encode(prompt)
    new_ids, margins = greedy(ref, prompt_ids, 40, device)
    print("greedy:", repr(prompt + sp.decode(new_ids)), flush=True)
    return {
        "generator": f"transformers {transformers.__version__}, torch {torch.__version__}, "
                     "Gemma3ForCausalLM, float32 compute on the bf16 weights, eager attention",
        "parameter_count": sum(p.numel() for p in ref.parameters()),
        "heldout": {"file": "demo-heldout.txt", "token_ids": heldout_ids, "perplexity": perplexities},
        "cases": cases,
        "greedy": {"prompt": prompt, "prompt_ids": prompt_ids, "new_tokens": new_ids,
                   "top2_margins": margins, "text": sp.decode(new_ids)},
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="folder with train.txt, valid.txt, heldout.txt")
    parser.add_argument("--tokenizer", required=True, help="tokenizer.model made by spm_train")
    parser.add_argument("--out", required=True)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seq", type=int, default=1024)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--eval-every", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1611)
    parser.add_argument("--smoke", action="store_true", help="tiny model, for a check on the CPU")
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(args.seed)
    out = Path(args.out)
    model_dir = out / "model"
    model_dir.mkdir(parents=True, exist_ok=True)
    sp = spm.SentencePieceProcessor(model_file=args.tokenizer)
    data = Path(args.data)
    t0 = time.time()
    train_stream = torch.tensor(sp.encode(data.joinpath("train.txt").read_text(encoding="utf-8")))
    valid_stream = torch.tensor(sp.encode(data.joinpath("valid.txt").read_text(encoding="utf-8")))
    print(f"tokens: train {len(train_stream)}, valid {len(valid_stream)} ({time.time() - t0:.1f} s)", flush=True)

    config_dict = model_config_dict(sp.get_piece_size(), args.smoke)
    config = Gemma3TextConfig(**{k: v for k, v in config_dict.items() if k not in ("model_type", "architectures", "torch_dtype")})
    model = Gemma3ForCausalLM._from_config(config, attn_implementation="sdpa").to(device)
    print("config: layer_types", config.layer_types, "rope", getattr(config, "rope_parameters", None), flush=True)
    params = sum(p.numel() for p in model.parameters())
    print(f"parameters: {params}", flush=True)
    add_residual_dropout(model, args.dropout)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=args.lr, betas=(0.9, 0.95), eps=1e-8, fused=device.type == "cuda")
    sampler = torch.Generator().manual_seed(args.seed)
    max_offset = len(train_stream) - args.seq
    log = {"args": vars(args), "parameters": params, "curve": []}
    best = (float("inf"), -1, None)
    model.train()
    start = time.time()
    for step in range(args.steps):
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step, args.steps, args.lr, warmup=min(200, args.steps // 10 + 1))
        offsets = torch.randint(0, max_offset, (args.batch,), generator=sampler)
        batch = batch_windows(train_stream, offsets, args.seq).to(device, non_blocking=True)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
            logits = model(input_ids=batch).logits
        loss = F.cross_entropy(logits[:, :-1].float().reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if (step + 1) % args.eval_every == 0 or step + 1 == args.steps:
            val = validation_loss(model, valid_stream, args.seq, device)
            elapsed = time.time() - start
            epochs = (step + 1) * args.batch * args.seq / len(train_stream)
            log["curve"].append({"step": step + 1, "epochs": round(epochs, 2), "train_loss": round(loss.item(), 4),
                                 "valid_loss": round(val, 4), "seconds": round(elapsed, 1)})
            print(f"step {step + 1} epoch {epochs:.1f} train {loss.item():.4f} valid {val:.4f} "
                  f"ppl {math.exp(val):.2f} {elapsed:.0f} s", flush=True)
            if val < best[0]:
                best = (val, step + 1, {k: v.detach().clone() for k, v in model.state_dict().items()})
    log["train_seconds"] = round(time.time() - start, 1)
    log["best_step"], log["best_valid_loss"] = best[1], round(best[0], 4)
    print(f"best valid loss {best[0]:.4f} at step {best[1]}", flush=True)

    model.load_state_dict(best[2])
    model.to(torch.bfloat16).save_pretrained(model_dir, safe_serialization=True)
    # save_pretrained writes this library version's config layout; Kiln ships the released models' form.
    model_dir.joinpath("config.json").write_text(json.dumps(config_dict, indent=2) + "\n")
    shutil.copyfile(args.tokenizer, model_dir / "tokenizer.model")
    reference = write_reference(model_dir, sp, data.joinpath("heldout.txt").read_text(encoding="utf-8"), device,
                                args.smoke)
    out.joinpath("demo-reference.json").write_text(json.dumps(reference, separators=(",", ":")) + "\n")
    log["heldout_perplexity"] = reference["heldout"]["perplexity"]
    log["total_seconds"] = round(time.time() - t0, 1)
    out.joinpath("train-log.json").write_text(json.dumps(log, indent=1) + "\n")


if __name__ == "__main__":
    main()

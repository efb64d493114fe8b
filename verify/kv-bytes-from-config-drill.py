# %% [markdown]
# # KV bytes of a sequence, from a model's config: one function for GQA, explicit head_dim, MLA, hybrids,
# # sliding windows and tensor parallelism
# Every case is a real config (values from verify/_lib/facts.yaml with their sources), and each expected value is
# derived independently: the facts file's own per-token figures where it has one, a hand formula otherwise.
# Rules the function must follow (and the bug each one guards against):
# - head_dim from the config when given (Qwen3: 64 heads x 128 != hidden 4096), else hidden / heads;
# - MLA caches one latent (kv_lora_rank) + one RoPE key (qk_rope_head_dim) per layer, not K and V per head, and the
#   latent has no head axis to split, so every TP rank holds all of it;
# - only attention layers cache (Jamba, Nemotron-H: the Mamba layers keep a fixed state instead);
# - a sliding-window layer holds at most `window` tokens;
# - under TP a rank holds max(1, kv_heads / tp) heads: past tp = kv_heads the heads are replicated.

# %%

from qbank.verify import check, claim, fact, given


def kv_bytes(cfg: dict, context: int, tp: int = 1, dtype_bytes: int = 2) -> int:
    """KV bytes one TP rank holds for a sequence of `context` tokens."""
    total = 0
    for kind in cfg["layers"]:  # one entry per layer: "full", "sliding", or "none" (no KV: Mamba, ...)
        if kind == "none":
            continue
        tokens = min(context, cfg["window"]) if kind == "sliding" else context
        if "kv_lora_rank" in cfg:  # MLA: latent + rope key, shared by all heads, replicated over TP
            per_token = cfg["kv_lora_rank"] + cfg["qk_rope_head_dim"]
        else:
            head_dim = cfg.get("head_dim") or cfg["hidden"] // cfg["heads"]
            per_token = 2 * max(1, cfg["kv_heads"] // tp) * head_dim
        total += tokens * per_token * dtype_bytes
    return total


def kv_bytes_naive(cfg: dict, context: int, tp: int = 1, dtype_bytes: int = 2) -> int:
    """The whiteboard formula 2 * layers * kv_heads * (hidden / heads) * bytes * context, for every config."""
    kvh = cfg.get("kv_heads", cfg.get("heads"))
    return 2 * len(cfg["layers"]) * kvh * (cfg["hidden"] // cfg["heads"]) * dtype_bytes * context


# %% [markdown]
# ## The configs (facts) and the expected values

# %%
L8 = {"layers": ["full"] * int(fact("llama3_1_8b.num_hidden_layers", "l8_layers")),
      "hidden": fact("llama3_1_8b.hidden_size", "l8_hidden"), "heads": fact("llama3_1_8b.num_attention_heads",
      "l8_heads"), "kv_heads": fact("llama3_1_8b.num_key_value_heads", "l8_kv_heads")}
L70 = {"layers": ["full"] * int(fact("llama3_1_70b.num_hidden_layers", "l70_layers")),
       "hidden": fact("llama3_1_70b.hidden_size", "l70_hidden"), "heads": fact("llama3_1_70b.num_attention_heads",
       "l70_heads"), "kv_heads": fact("llama3_1_70b.num_key_value_heads", "l70_kv_heads")}
QW = {"layers": ["full"] * int(fact("qwen3_235b_a22b.num_hidden_layers", "qw_layers")),
      "hidden": fact("qwen3_235b_a22b.hidden_size", "qw_hidden"),
      "heads": fact("qwen3_235b_a22b.num_attention_heads", "qw_heads"),
      "kv_heads": fact("qwen3_235b_a22b.num_key_value_heads", "qw_kv_heads"),
      "head_dim": given("qw_head_dim", 128, unit="dims", source="Qwen3-235B-A22B config head_dim 128 (facts: "
                        "qwen3_235b_a22b.num_key_value_heads note: explicit in config, 64*128 != 4096)")}
DS = {"layers": ["full"] * int(fact("deepseek_v3.num_hidden_layers", "ds_layers")),
      "hidden": fact("deepseek_v3.hidden_size", "ds_hidden"), "heads": fact("deepseek_v3.num_attention_heads",
      "ds_heads"), "kv_lora_rank": fact("deepseek_v3.kv_lora_rank", "ds_kv_lora_rank"),
      "qk_rope_head_dim": fact("deepseek_v3.qk_rope_head_dim", "ds_rope_dim")}
jamba_layers = int(fact("jamba_v0_1.num_hidden_layers", "jamba_layers"))
j_off = int(given("jamba_attn_offset", 4, unit="layers", source="Jamba v0.1 config attn_layer_offset 4 (facts: "
                  "jamba_v0_1.attention_layers)"))
j_per = int(given("jamba_attn_period", 8, unit="layers", source="Jamba v0.1 config attn_layer_period 8 (same)"))
jamba_attn = set(range(j_off, jamba_layers, j_per))
check(len(jamba_attn) == fact("jamba_v0_1.attention_layers", "jamba_attention_layers"), "4 attention layers")
JB = {"layers": ["full" if i in jamba_attn else "none" for i in range(jamba_layers)],
      "hidden": fact("jamba_v0_1.hidden_size", "jamba_hidden"),
      "heads": given("jamba_heads", 32, unit="heads", source="Jamba v0.1 config: 32 Q heads (facts note)"),
      "kv_heads": given("jamba_kv_heads", 8, unit="heads", source="Jamba v0.1 config: 8 KV heads (facts note)")}
GSRC = "Gemma 2 report arXiv:2408.00118 §2.1 and google/gemma-2-9b config (facts gemma_sliding_window notes)"
g_layers = int(given("g2_layers", 42, unit="layers", source=GSRC + ": 42 layers"))
G2 = {"layers": ["sliding" if i % 2 == 0 else "full" for i in range(g_layers)],  # alternating, local first
      "hidden": given("g2_hidden", 3584, unit="dims", source=GSRC + ": hidden 3584"),
      "heads": given("g2_heads", 16, unit="heads", source=GSRC + ": 16 Q heads"),
      "kv_heads": given("g2_kv_heads", 8, unit="heads", source=GSRC + ": 8 KV heads"),
      "head_dim": given("g2_head_dim", 256, unit="dims", source=GSRC + ": head_dim 256"),
      "window": fact("gemma_sliding_window.gemma2_sliding_window", "g2_window")}
ctx = int(given("context", 32768, unit="tokens", source="the question's hypothetical request length"))

cases = {  # name: (config, tp, expected bytes per rank for `ctx` tokens)
    "llama8b": (L8, 1, fact("derived.kv_bytes_per_token_llama31_8b_bf16", "exp_l8") * ctx),
    "qwen3": (QW, 1, fact("derived.kv_bytes_per_token_qwen3_235b_bf16", "exp_qw") * ctx),
    "deepseek": (DS, 1, fact("derived.kv_bytes_per_token_deepseek_v3_mla_bf16", "exp_ds") * ctx),
    "jamba": (JB, 1, fact("derived.kv_bytes_per_token_jamba_bf16", "exp_jb") * ctx),
    "gemma2": (G2, 1, (g_layers // 2) * (ctx + min(ctx, G2["window"])) * 2 * G2["kv_heads"] * G2["head_dim"] * 2),
    "llama70b_tp16": (L70, int(given("tp_wide", 16, unit="GPUs", source="example: TP16 over two 8-GPU nodes")),
                      2 * len(L70["layers"]) * 1 * (L70["hidden"] // L70["heads"]) * 2 * ctx),
}

# %% [markdown]
# ## The checks, and which case catches each whiteboard shortcut

# %%
per_seq = {}
for name, (cfg, tp, expected) in cases.items():
    got = kv_bytes(cfg, ctx, tp)
    check(got == expected, f"{name}: {got} == {expected}")
    per_seq[name] = claim(f"seq_bytes_{name}", got, unit="B")
wrong = {name: kv_bytes_naive(cfg, ctx, tp) / kv_bytes(cfg, ctx, tp) for name, (cfg, tp, _) in cases.items()}
check(wrong["llama8b"] == 1, "the naive formula is right for plain GQA")
for name in ("qwen3", "deepseek", "jamba", "gemma2", "llama70b_tp16"):
    check(wrong[name] != 1, f"the naive formula is wrong for {name}")
    claim(f"naive_over_true_{name}", wrong[name], unit="x")
tp_mla = int(given("tp_mla", 8, unit="GPUs", source="example: DeepSeek-V3 at TP8 on one node"))
claim("ds_naive_head_dim", DS["hidden"] // DS["heads"], unit="dims")
claim("ds_latent_values", DS["kv_lora_rank"] + DS["qk_rope_head_dim"])
claim("qw_naive_head_dim", QW["hidden"] // QW["heads"], unit="dims")
claim("g2_naive_head_dim", G2["hidden"] // G2["heads"], unit="dims")
tp16 = cases["llama70b_tp16"][1]
claim("tp16_replication", tp16 / L70["kv_heads"], unit="GPUs")
claim("l70_rank_per_token", kv_bytes(L70, 1, tp16), unit="B")
claim("l70_per_token", kv_bytes(L70, 1), unit="B")
mla_tp8 = claim("ds_rank_bytes_tp8", kv_bytes(DS, ctx, tp=tp_mla), unit="B")
check(mla_tp8 == per_seq["deepseek"], "MLA's latent is not split by TP")
g2_short = int(given("short_context", 4096, unit="tokens", source="a context at the Gemma 2 window"))
g2_full = 2 * len(G2["layers"]) * G2["kv_heads"] * G2["head_dim"] * 2
g2_ratio = claim("gemma2_saving_32k", 1 - kv_bytes(G2, ctx) / (g2_full * ctx),
                 unit="fraction")
check(kv_bytes(G2, g2_short) == g2_full * g2_short, "at or below the window nothing is saved")
print({k: f"{v / 2**30:.3f} GiB" for k, v in per_seq.items()}, {k: f"{v:.3f}" for k, v in wrong.items()})

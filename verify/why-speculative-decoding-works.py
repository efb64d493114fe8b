# %% [markdown]
# # Why a big model can check several tokens for the price of one
# Llama-3.1-70B (Meta sku_list.py via facts.yaml), bf16, tensor-parallel on 4 H100 SXM (datasheet numbers
# via facts.yaml). Roofline: a decode pass reads all weights once; FLOP = 2 per parameter per token.

# %%
from qbank.verify import check, claim, fact, given

L = fact("llama3_1_70b.num_hidden_layers", "layers")
d = fact("llama3_1_70b.hidden_size", "hidden")
kvh = fact("llama3_1_70b.num_key_value_heads", "kv_heads")
hd = fact("llama3_1_70b.head_dim", "head_dim")
ffn = fact("llama3_1_70b.intermediate_size", "ffn")
v = fact("llama3_1_70b.vocab_size", "vocab")
gpus = given("tp_gpus", 4, unit="GPUs", source="assumed TP=4 (141 GB of weights exceed one 80 GB H100)")
bw = fact("h100_sxm.hbm_bandwidth", "hbm_bw")
fl = fact("h100_sxm.bf16_dense", "bf16_flops")

batch = given("batch", 1, unit="requests", source="a single stream")
flop_per_param = given("flop_per_param_token", 2, unit="FLOP", source="one multiply-add per weight per token")
params = claim("params", L * (d * (2 * d + 2 * kvh * hd) + 3 * d * ffn) + 2 * v * d, unit="params")
weight_bytes = claim("weight_bytes", 2 * params, unit="B")
t_mem = claim("step_time_memory", weight_bytes / (gpus * bw * 1e12), unit="s")
t_flop_1 = claim("step_time_compute_1tok", flop_per_param * batch * params / (gpus * fl * 1e12), unit="s")
tps = claim("max_tokens_per_s_stream", 1 / t_mem, unit="tokens/s")
util = claim("flop_utilization_1tok", t_flop_1 / t_mem, unit="fraction")
ridge = claim("tokens_free_per_pass", t_mem / t_flop_1, unit="tokens")
gamma = given("gamma", 4, unit="tokens", source="example draft length")
scored = claim("scored_tokens", gamma + 1, unit="tokens")
t_flop_5 = claim("step_time_compute_5tok", scored * t_flop_1, unit="s")
check(t_flop_5 < t_mem, "scoring 5 tokens still costs no more than reading the weights once")
print(params, t_mem, t_flop_1, tps, util, ridge)


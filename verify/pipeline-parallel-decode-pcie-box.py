# %% [markdown]
# # PP4 against TP4 for Llama-3.1-70B on four PCIe H100s
# The question's host: four H100 PCIe cards with no NVLink bridge. vLLM's custom all-reduce is off there
# (vllm/distributed/device_communicators/custom_all_reduce.py @00d618aa: "not supported on more than two PCIe-only
# GPUs"), so TP4 all-reduces go through NCCL over PCIe, priced with NCCL v2.30.7-1's tuning model
# (src/graph/tuning.cc). PP4 splits the 80 layers 20/20/20/20 (vllm/distributed/utils.py get_pp_indices: an even
# split, any remainder kept off the last stage) and keeps pipeline_parallel_size batches in flight
# (vllm/config/vllm.py VllmConfig.max_concurrent_batches: "PP requires PP-size concurrent batches to fill the
# pipeline"). Each hand-off carries hidden_states and residual (vllm/model_executor/models/llama.py @e06c9ba2).

# %%
from qbank.verify import check, claim, fact, given

layers = fact("llama3_1_70b.num_hidden_layers", "layers")
hidden = fact("llama3_1_70b.hidden_size", "hidden")
q_heads = fact("llama3_1_70b.num_attention_heads", "q_heads")
kv_heads = fact("llama3_1_70b.num_key_value_heads", "kv_heads")
head_dim = fact("llama3_1_70b.head_dim", "head_dim")
inter = fact("llama3_1_70b.intermediate_size", "inter")
vocab = fact("llama3_1_70b.vocab_size", "vocab")
pcie = fact("networking.pcie_gen5_x16", "pcie_gbs")
util = fact("vllm.gpu_memory_utilization_default", "util")
cuda_total_sxm = fact("h100_sxm.cuda_total_memory", "cuda_total_sxm")
bf16 = given("bf16_bytes", 2, unit="B", source="bf16 is 2 bytes")
hbm_bw = given("h100_pcie_hbm_bw", 2.0, unit="TB/s", source="NVIDIA H100 PCIe: GPU memory bandwidth 2,000 GB/s "
               "(NVIDIA H100 datasheet table, read via the archive-lib.hpctech.co.jp reproduction; H100 PCIe product "
               "brief PB-11133-001_v02: 'greater than 2,000 gigabytes per second')")
hbm_cap = given("h100_pcie_hbm", 80e9, unit="B", source="NVIDIA H100 PCIe: 80 GB HBM2e (same table). Used as a "
                "floor for what cudaMemGetInfo reports: the SXM part with the same label reports 85.0 GB")
bf16_flops = given("h100_pcie_bf16_dense", 756.5, unit="TFLOP/s", source="NVIDIA H100 PCIe BF16 Tensor Core 1,513 "
                   "TFLOPS with sparsity (same table), halved for dense")
gpus = given("gpus", 4, unit="GPUs", source="the question's host: four H100 PCIe cards")
batch = given("batch", 64, unit="sequences", source="the question's hypothetical decode batch")
context = given("context", 4096, unit="tokens", source="the question's hypothetical mean context")
overheads = given("runtime_overheads", 4.0e9, unit="B", source="example per-GPU activation peak + non-torch + CUDA "
                  "graphs, as in the max-concurrent-requests-memory-budget answer (2.5 + 1.0 + 0.5 GB)")
ar_per_layer = given("allreduces_per_layer", 2, source="Megatron-LM tensor parallelism (arXiv:1909.08053 §3)")
pp_tensors = given("pp_tensors", 2, source="vllm/model_executor/models/llama.py @e06c9ba2: IntermediateTensors "
                   "carries hidden_states and residual")

# %% [markdown]
# ## Weights per GPU and the batch that fits

# %%
per_layer = (hidden * q_heads * head_dim * 2 + 2 * hidden * kv_heads * head_dim + 3 * hidden * inter + 2 * hidden) * bf16
table = vocab * hidden * bf16  # the embedding, and separately the LM head (untied in Llama 3.1)
weights = claim("weights", layers * per_layer + 2 * table + hidden * bf16, unit="B")
w_tp = claim("weights_per_gpu_tp4", weights / gpus, unit="B")
stage_layers = claim("stage_layers", layers / gpus, unit="layers")
w_last = claim("weights_last_stage", stage_layers * per_layer + table + hidden * bf16, unit="B")
lm_head = claim("lm_head_bytes", table, unit="B")
kv_token = 2 * layers * kv_heads * head_dim * bf16
kv_total = claim("kv_total", batch * context * kv_token, unit="B")
kv_gpu = claim("kv_per_gpu", kv_total / gpus, unit="B")  # TP4: 2 KV heads per rank; PP4: 20 layers per stage
pool_floor = claim("pool_floor_last_stage", hbm_cap * util - w_last - overheads, unit="B")
check(cuda_total_sxm > hbm_cap, "the marketed 80 GB is a floor for the driver-reported total")
check(kv_gpu <= pool_floor, "batch 64 at 4K context fits on the fullest PP stage, and so under TP4")

# %% [markdown]
# ## TP4: one batch, 160 all-reduces over PCIe

# %%
steps = 2 * (gpus - 1)
msg = claim("message_bytes", batch * hidden * bf16, unit="B")
# NCCL v2.30.7-1 tuning.cc: Ring LL base 6.6 us + 1.0 us/step on PCI, busBw * 0.5; Ring Simple base 8.4 us + 5.7 us/step
lat_ll = given("nccl_pci_ring_ll_lat", 6.6e-6 + steps * 1.0e-6, unit="s", source="NCCL v2.30.7-1 src/graph/tuning.cc: "
               "baseLatencies Ring LL 6.6 us + 2(n-1) x hwLatencies PCI Ring LL 1.0 us")
lat_simple = given("nccl_pci_ring_simple_lat", 8.4e-6 + steps * 5.7e-6, unit="s", source="NCCL v2.30.7-1 "
                   "src/graph/tuning.cc: baseLatencies Ring Simple 8.4 us + 2(n-1) x hwLatencies PCI Ring Simple 5.7 us")
t_ll = lat_ll + msg / (pcie * 0.5 * gpus / steps * 1e9)
t_simple = lat_simple + msg / (pcie * gpus / steps * 1e9)
t_ar = claim("allreduce_time", min(t_ll, t_simple), unit="s")
n_ar = claim("allreduces_per_step", ar_per_layer * layers)
ar_step = claim("tp4_allreduce_per_step", n_ar * t_ar, unit="s")
tp_hbm = claim("tp4_hbm_time", (w_tp + kv_gpu) / (hbm_bw * 1e12), unit="s")
tp_tpot = claim("tp4_tpot", tp_hbm + ar_step, unit="s")
tp_tput = claim("tp4_throughput", batch / tp_tpot, unit="tokens/s")
flops = 2 * weights / bf16 * batch / gpus
check(flops / (bf16_flops * 1e12) < 0.2 * tp_hbm, "TP4 decode at batch 64 is memory-bound")
claim("tp4_allreduce_share", ar_step / tp_tpot, unit="fraction")

# %% [markdown]
# ## PP4: four micro-batches of 16, each re-reading every stage's weights

# %%
stages = given("stages", 4, unit="stages", source="the proposal: PP4, one stage per GPU")
micro = claim("micro_batches", stages / 1)  # max_concurrent_batches = pipeline_parallel_size
mb = claim("micro_batch", batch / micro, unit="sequences")
handoff = claim("handoff_bytes", mb * pp_tensors * hidden * bf16, unit="B")
t_handoff = claim("handoff_time", handoff / (pcie * 1e9), unit="s")
slot = claim("pp_slot_time", (w_last + kv_gpu / micro) / (hbm_bw * 1e12) + t_handoff, unit="s")  # slowest stage
slot_mid = (stage_layers * per_layer + kv_gpu / micro) / (hbm_bw * 1e12) + t_handoff
pp_tpot = claim("pp4_tpot", gpus * slot, unit="s")
pp_tput = claim("pp4_throughput", mb / slot, unit="tokens/s")
claim("imbalance_idle", 1 - slot_mid / slot, unit="fraction")
claim("idle_stages", stages - 1, unit="stages")
claim("tp_over_pp_throughput", tp_tput / pp_tput, unit="x")
check(pp_tput < tp_tput, "at equal batch, PP4 decode delivers less than TP4 despite TP4's PCIe all-reduces")
# one batch, no micro-batching: three stages idle at any moment, and the stages run one after another, so a
# token waits for every stage's weights and every stage's share of the batch's KV: all of both, read serially
pp1_handoffs = (gpus - 1) * batch * pp_tensors * hidden * bf16 / (pcie * 1e9)
pp1_tpot = claim("pp4_single_batch_tpot", (weights + kv_total) / (hbm_bw * 1e12) + pp1_handoffs, unit="s")
pp1_tput = claim("pp4_single_batch_throughput", batch / pp1_tpot, unit="tokens/s")
check(pp1_tput < pp_tput < tp_tput, "micro-batching helps PP4 (the KV reads spread over the stages) but not to TP4")
claim("microbatch_gain", pp_tput / pp1_tput, unit="x")
# per token, PP4 with micro-batches still reads every weight serially; only the KV is split four ways
claim("pp4_weight_share_tpot", weights / (hbm_bw * 1e12) / pp_tpot, unit="fraction")
claim("pp4_single_batch_busy", 1 / gpus, unit="fraction")

# %% [markdown]
# ## Where PP4 wins: a 4,096-token prefill, compute-bound, in chunks

# %%
prompt = given("prompt", 4096, unit="tokens", source="the question's hypothetical prompt")
chunks = given("chunks", 4, unit="chunks", source="the question's hypothetical: the prompt in four 1,024-token chunks")
flop_prompt = 2 * weights / bf16 * prompt
tp_pf_compute = claim("tp4_prefill_compute", flop_prompt / gpus / (bf16_flops * 1e12), unit="s")
pf_msg = claim("prefill_message_bytes", prompt * hidden * bf16, unit="B")
tp_pf_ar = claim("tp4_prefill_allreduce", ar_per_layer * layers * (lat_simple + pf_msg / (pcie * gpus / steps * 1e9)), unit="s")
tp_pf = claim("tp4_prefill", tp_pf_compute + tp_pf_ar, unit="s")
pp_slot_pf = flop_prompt / chunks / gpus / (bf16_flops * 1e12)
pp_pf = claim("pp4_prefill_one_prompt", (chunks + gpus - 1) * pp_slot_pf, unit="s")
bubble = claim("gpipe_bubble", (gpus - 1) / (chunks + gpus - 1), unit="fraction")
check(pp_pf < tp_pf, "one prompt's prefill finishes sooner on PP4 than on TP4 over PCIe")
claim("tp4_prefill_comm_share", tp_pf_ar / tp_pf, unit="fraction")
print(f"TP4 tpot {tp_tpot*1e3:.1f} ms ({tp_tput:.0f} tok/s), AR {ar_step*1e3:.1f} ms; PP4 tpot {pp_tpot*1e3:.1f} ms "
      f"({pp_tput:.0f} tok/s); pp1 {pp1_tpot*1e3:.1f}; prefill tp {tp_pf*1e3:.0f} pp {pp_pf*1e3:.0f}")

"""Identifiers are not quantities: a table of rules, each a pattern whose match hides the digits in it.

Every rule has a name, a pattern and examples; ``tests/claims/cases.yaml`` holds a sentence for each.
The grammar never reads a number inside a span one of these rules matched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .lexicon import UNIT_AFTER_RE

MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?"
YEAR = r"(?:19[5-9]\d|20[0-3]\d)"
# labels that a number after them names rather than counts: "Table 2", "layer 0", "Theorem 3.8"
LABELS = (
    r"§+|sections?|sec\.|chapters?|ch\.|appendix|appendices|theorems?|thm\.|lemmas?|corollary|propositions?"
    r"|definitions?|figures?|figs?\.|tables?|tab\.|eqs?\.|equations?|algorithms?|alg\.|listings?|steps?|phases?"
    r"|parts?|stages?|lines?|rows?|columns?|items?|examples?|exercises?|questions?|problems?|issues?|pr|rules?"
    r"|cases?|options?|rounds?|levels?|tiers?|versions?|ranks?|gpu|node|layer|device|expert|head|worker|replica"
    r"|shard|slot|block|chunk|request|iteration|epoch|pages?|pp?\.|no\.|nos\.|#"
)
# a label is numbered 1, 3.8, 2b; never "0.001" (a decimal below one is a value: "level 0.001")
LABEL_NUM = r"\(?(?!0\.)\d+(?:\.\d+)*[a-z]?\)?"
# software, model families and interconnects whose next number is a version or generation
PRODUCTS = (
    r"Python|CUDA|PyTorch|torch|vLLM|SGLang|TensorRT(?:-LLM)?|TRT-LLM|NCCL|cuDNN|cuBLAS|CUTLASS|Triton|FlashAttention"
    r"|FlashInfer|Transformers|JAX|XLA|Ubuntu|Linux|Kubernetes|Llama|LLaMA|GPT|Claude|Gemini|Qwen|Mistral|Mixtral"
    r"|DeepSeek|Gemma|Phi|Grok|Falcon|OPT|BLOOM|T5|NVLink|NVSwitch|PCIe|HBM|Gen|DDR|GDDR|ROCm|InfiniBand|NDR|HDR"
    r"|Hopper|Blackwell|Ampere|Ethernet|RoCE|UCX|MPI|OpenAI|Megatron(?:-LM)?|DeepSpeed|ZeRO|Kimi|Medusa|EAGLE"
)


@dataclass(frozen=True)
class Rule:
    """One identifier rule: a name, a compiled pattern and the examples it exists for."""

    name: str
    pattern: re.Pattern[str]
    examples: str


def _rule(name: str, pattern: str, examples: str, flags: int = 0) -> Rule:
    return Rule(name, re.compile(pattern, flags), examples)


NO_UNIT = rf"(?!{UNIT_AFTER_RE})"

RULES: tuple[Rule, ...] = (
    _rule(
        "name-with-digits",
        r"(?<![\w.])(?!(?i:top|bottom)-\d)(?!(?:TP|PP|EP|DP|CP)-?\d+\b)[A-Za-z][A-Za-z_]*(?:[-_/.]?[A-Za-z_]*\d\w*(?:\.\w+)*)+(?:-\w+(?:\.\w+)*)*",
        "H100, B200, GB200, NVL72, FP8, BF16, int32, sm_90, A100-80GB, Llama-3.1-70B, DeepSeek-V3, GPT-4, x86, v0.10.2",
    ),
    _rule(
        "product-version",
        rf"(?<![\w.-])(?:{PRODUCTS})[\s-]v?\d+(?:\.\d+)*[a-z]?(?:\s+\d+(?:\.\d+)?[BMK](?![\w]))?",
        "CUDA 12.4, Python 3.11, PyTorch 2.3, Llama 3 70B, NVLink 4, PCIe 5.0",
    ),
    _rule(
        "label-number",
        rf"(?<![\w-])(?:{LABELS})\s*{LABEL_NUM}(?:\s*(?:,|and|or|–|-|to)\s*{LABEL_NUM})*{NO_UNIT}(?![\w.,]?\d)",
        "§4.2, Section 3, Theorem 3.8, Eq. (1), Table 2, Figure 3, step 1, layer 0, GPU 3, Steps 1–3, p. 12",
        re.IGNORECASE,
    ),
    _rule("citation", r"\[\^?\d+\]", "[12], footnote [^3]"),
    _rule("hash-number", r"(?<![\w&])#\d+", "#1234 (issues, pull requests)"),
    _rule(
        "arxiv",
        r"(?i:arxiv)[:\s]*\d{4}\.\d{4,5}(?:v\d+)?|(?<![\d.])\d{4}\.\d{4,5}(?:v\d+)?(?![\d.])",
        "arXiv:2412.19437",
    ),
    _rule("version", r"(?<![\w.])v?\d+\.\d+\.\d+(?:[.-]?\w+)*", "0.10.2, 1.2.3-rc1, v2.4.0"),
    _rule("iso-date", r"(?<!\d)\d{4}-\d{2}-\d{2}(?!\d)|(?<!\d)\d{1,2}/\d{1,2}/\d{2,4}(?!\d)", "2024-05-13, 11/30/2025"),
    _rule(
        "month-date",
        rf"\b{MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b|\b\d{{1,2}}(?:st|nd|rd|th)?\s+{MONTH}(?:,?\s+\d{{4}})?"
        rf"|\b{MONTH}\s+\d{{4}}\b|\bQ[1-4]\s+\d{{4}}\b",
        "May 13, 2024; 13 May 2024; March 2025; Q3 2024",
    ),
    _rule(
        "year-in-context",
        r"(?i:\b(?:in|since|by|until|till|from|before|after|circa|c\.|early|late|mid|during|year|©)\s+"
        r"|(?:et al\.,?)\s*)"
        rf"{YEAR}s?(?![\w]|[.,]\d|\s*[–-]\s*\d|\s*%|{UNIT_AFTER_RE})",
        "in 2024, since 2017, Leviathan et al. 2023, the 2020s",
    ),
    _rule("year-parenthesized", rf"\((?:[^()\d]*[\s,])?{YEAR}[a-z]?\)", "(2023), (Leviathan et al., 2023)"),
    _rule(
        "year-before-noun",
        rf"\b{YEAR}(?=\s+(?:paper|release|edition|survey|report|study|blog|talk|keynote|model|version)s?\b)",
        "the 2023 paper",
    ),
    _rule(
        "year-span",
        rf"(?<![\w.,]){YEAR}[-–/](?:\d\d|{YEAR})(?![\w%]|[.,]\d|{UNIT_AFTER_RE})",
        "2013-14, 2023–2024 (a season or fiscal year, not a range of numbers)",
    ),
    _rule(
        "sparsity-pattern",
        r"(?<![\w.:])\d+:\d+(?=[\s-]+(?:(?:semi-)?structured[\s-]+)?(?:sparsity|sparse|pattern)\b)",
        "2:4 sparsity, 2:4 structured sparsity (a pattern's name, not the ratio 0.5)",
        re.IGNORECASE,
    ),
    _rule(
        "ordinal",
        r"(?<![\w.])\d+(?:st|nd|rd|th)\b",
        "the 4th layer, 1st place, 32nd token (a position, not a count)",
        re.IGNORECASE,
    ),
    _rule("dimensionality", r"(?<![\w.])[1-4][Dd]\b", "3D parallelism, a 2D mesh, 4D tensor"),
    _rule("decade", r"\b(?:19|20)\d0s\b", "the 2020s, 1990s"),
    _rule("big-o", r"\b[OΘΩo]\([^()]*(?:\([^()]*\)[^()]*)*\)", "O(n^2), O(1), Θ(n log n)"),
    _rule("hex", r"\b0x[0-9A-Fa-f]+\b", "0xFF"),
    _rule(
        "math-index",
        r"_\{[^{}]*\}|_[\w]+|(?<=[A-Za-z)\]])\^\{?-?\d+\}?|(?<=[A-Za-z)\]])[⁰¹²³⁴⁵⁶⁷⁸⁹]+",
        "x_1, W_{2}, d^2",
    ),
    _rule(
        "fixed-phrase",
        r"(?i)\b(?:half|single|double)[- ]precision\b|\bdouble[- ]buffer\w*|\bhalf[- ]duplex|\bzero[- ]\w+"
        r"|\bone[- ](?:hot|shot|off|way|pass|liner|sided|to[- ]one|at[- ]a[- ]time)\b|\b24/7\b",
        "half-precision, double buffering, zero-copy, one-hot, one-shot",
    ),
)


def identifier_spans(text: str) -> list[tuple[int, int, str]]:
    """Spans of ``text`` that identifier rules claim, with the rule that claimed each."""
    spans: list[tuple[int, int, str]] = []
    for rule in RULES:
        for m in rule.pattern.finditer(text):
            if m.end() > m.start():
                spans.append((m.start(), m.end(), rule.name))
    return sorted(spans)

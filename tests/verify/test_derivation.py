"""One execution serves verification and the derivation page; the store exposes both to other stages."""

from __future__ import annotations

from pathlib import Path

import nbformat

from qbank.verify import store
from qbank.verify.cells import Cell, split_cells
from qbank.verify.engine import VerifyConfig, verify
from qbank.verify.notebook import to_notebook

from .conftest import VERIFY_CASES, add_script

SLUG = "kv-cache-llama-70b"


def test_split_cells_keeps_lines_and_prose() -> None:
    cells = split_cells((VERIFY_CASES / f"{SLUG}.py").read_text())
    assert [c.kind for c in cells] == ["markdown", "code", "markdown", "code", "markdown", "code"]
    assert cells[0].source.startswith("# KV cache of one Llama-3.1-70B")
    assert cells[1].line == 8 and cells[1].source.startswith("from qbank.verify import")
    assert split_cells("x = 1\n") == [Cell("code", "x = 1\n", 1)]
    assert [c.line for c in split_cells("a = 1\n# %%\nb = 2\n")] == [1, 3]


def test_derivation_of_a_real_script(vrepo: Path) -> None:
    add_script(vrepo, SLUG, (VERIFY_CASES / f"{SLUG}.py").read_text())
    result = verify(vrepo, VerifyConfig(slugs=[SLUG])).results[0]
    assert (result["outcome"], result["claims"], result["checks"]) == ("pass", 2, 2)
    md = store.derivation_path(vrepo, SLUG).read_text()
    # prose, code and each cell's own output, in script order
    assert md.index("# KV cache of one Llama-3.1-70B") < md.index("```python") < md.index("KV per token: 327,680 B")
    assert md.index("KV per token: 327,680 B = 320 KiB") < md.index("At the full 128K-token context")
    assert md.index("At the full 128K-token context") < md.index("KV per request: 40 GiB")
    assert "# %%" not in md

    record = store.latest_record(vrepo, SLUG)
    assert record is not None and record["outcome"] == "pass"
    values = {v["name"]: v for v in record["values"]}
    assert values["kv_per_token"]["value"] == 327680 and values["kv_per_token"]["line"] == 19
    assert values["layers"]["source"].startswith("facts:llama3_1_70b.num_hidden_layers")
    latest = store.latest_result(vrepo, SLUG)
    assert latest is not None
    assert latest["derivation"] == str(store.derivation_path(vrepo, SLUG)) and latest["device"] == "cpu"
    assert latest["duration"] > 0 and latest["outcome"] == "pass"


def test_notebook_is_valid_nbformat(vrepo: Path) -> None:
    add_script(vrepo, SLUG, (VERIFY_CASES / f"{SLUG}.py").read_text())
    verify(vrepo, VerifyConfig(slugs=[SLUG]))
    entry = store.read_entry(vrepo, SLUG)
    assert entry is not None
    cells = [{"kind": c.kind, "source": c.source, "outputs": [], "execution_count": None} for c in split_cells("x=1\n")]
    nbformat.validate(to_notebook(cells, "x"))


def test_record_of_a_failed_run_is_still_readable(vrepo: Path) -> None:
    add_script(vrepo, "half", "from qbank.verify import claim\nclaim('a', 1)\nraise ValueError('no')\n")
    verify(vrepo, VerifyConfig(slugs=["half"]))
    record = store.latest_record(vrepo, "half")
    assert record is not None and record["outcome"] == "error" and record["values"][0]["name"] == "a"
    assert store.latest_record(vrepo, "never-ran") is None and store.latest_result(vrepo, "never-ran") is None


def test_store_does_not_import_torch_or_mkdocs() -> None:
    import subprocess
    import sys

    code = "import sys, qbank.verify.store; print('torch' in sys.modules, 'mkdocs' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]

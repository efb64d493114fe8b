# expect: outcome=error code=verify-sandbox-write line=here
# %%
from pathlib import Path

from qbank.verify import claim

target = Path(__file__).resolve().parent.parent / "written-by-script.txt"
target.write_text("a script must not change the repository")  # <- here
claim("wrote", 1)

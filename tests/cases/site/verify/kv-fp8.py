from qbank.verify import check, given

check(2 * 2 == 4, "the fixture script runs")
given("context", 131072, unit="tokens", source="test fixture: the title's 128K context")
given("fp8_over_bf16_bytes", 0.5, unit="x", source="test fixture: 1 byte per value against 2")

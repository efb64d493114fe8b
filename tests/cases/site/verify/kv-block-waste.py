from qbank.verify import check

check(2 * 2 == 4, "the fixture script runs")

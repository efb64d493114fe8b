from qbank.verify import check

check(2 * 2 == 4, "the fixture script runs")
# the paragraph, assembled so the script's source does not hold it as one run
words = "The outlier channel of the value cache saturates first when the calibration window skips the long tail of retrieval prompts SEALCANARYPARA".split()
print(" ".join(words[:5]), " ".join(words[5:]))
